import { z } from 'zod';
import { EVENT_TYPE_NAMES } from '../../../shared/contract/events.ts';

const EventsField = z
  .array(z.union([z.enum(EVENT_TYPE_NAMES), z.literal('*')]))
  .min(1)
  .max(EVENT_TYPE_NAMES.length)
  .meta({ description: 'The event types to receive, or ["*"] for all of them.' });

const UrlField = z
  .string()
  .min(1)
  .max(2048)
  .meta({
    description:
      'Where events are POSTed. Live mode: https only. Test mode also takes http. Never a loopback, private, link-local or ' +
      'unique-local address, in any of its forms (IPv4-mapped, IPv4-compatible, SIIT, NAT64 and 6to4 IPv6 forms included; the Teredo ' +
      'prefix 2001::/32 and the local-use NAT64 prefix 64:ff9b:1::/48 are refused whole): checked here when the URL is an address ' +
      'literal, and at each delivery on the addresses the name resolves to. The one exception: test-mode endpoints of a development ' +
      'instance (its own BASE_URL a loopback address, as `npm start` runs) may point anywhere. A URL that breaks these rules is a 400 bad-request.',
  });

export const CreateWebhookEndpointBody = z
  .strictObject({ url: UrlField, events: EventsField, description: z.string().max(500).optional() })
  .meta({ id: 'CreateWebhookEndpointRequest' });

export const UpdateWebhookEndpointBody = z
  .strictObject({
    url: UrlField.optional(),
    events: EventsField.optional(),
    description: z.string().max(500).optional(),
    status: z.enum(['enabled', 'disabled']).optional().meta({ description: 'Enabling an endpoint again also forgets its failed deliveries.' }),
  })
  .meta({ id: 'UpdateWebhookEndpointRequest' });

export const WebhookEndpointSchema = z
  .object({
    id: z.string(),
    object: z.literal('webhook_endpoint'),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    status: z.enum(['enabled', 'disabled']).meta({ description: 'disabled: by you, or by the service after 3 days of failed deliveries.' }),
    createdAt: z.string().meta({ format: 'date-time' }),
  })
  .meta({ id: 'WebhookEndpoint' });

export const WebhookEndpointWithSecretSchema = WebhookEndpointSchema.extend({
  secret: z.string().meta({
    description: 'The signing secret (whsec_…), shown only in this answer. Verify each delivery with it (Standard Webhooks).',
  }),
}).meta({ id: 'WebhookEndpointWithSecret' });

export const endpointExample = {
  id: 'we_5m1q8x3k7v2p9d4s0w6f',
  object: 'webhook_endpoint',
  url: 'https://hooks.example.com/dataset-service',
  events: ['version.active', 'version.failed'],
  description: 'CRM sync',
  status: 'enabled',
  createdAt: '2026-11-23T09:00:00.000Z',
};

export const EndpointIdParams = z.object({ id: z.string().min(1).max(100).meta({ description: 'Webhook endpoint id (we_…).' }) });
