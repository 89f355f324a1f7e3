import { z } from 'zod';
import { deleteEndpoint } from '../../../shared/domain/webhookEndpoints.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { endpointNotFound } from './get.ts';
import { EndpointIdParams } from './schemas.ts';

export default defineOperation({
  operationId: 'deleteWebhookEndpoint',
  method: 'delete',
  path: '/v1/webhook-endpoints/:id',
  surface: 'v1',
  tags: ['Webhooks'],
  summary: 'Delete a webhook endpoint',
  description: 'It receives nothing more, deliveries under way included.',
  params: EndpointIdParams,
  responses: {
    200: {
      description: 'Deleted.',
      schema: z.object({ id: z.string(), object: z.literal('webhook_endpoint'), deleted: z.literal(true) }).meta({ id: 'DeletedWebhookEndpoint' }),
      example: { id: 'we_5m1q8x3k7v2p9d4s0w6f', object: 'webhook_endpoint', deleted: true },
    },
  },
  problems: ['not-found'],
  async handle({ res, deps, params }) {
    if (!(await deleteEndpoint(deps.pool, tenantOf(res), params.id))) throw endpointNotFound(params.id);
    res.json({ id: params.id, object: 'webhook_endpoint', deleted: true });
  },
});
