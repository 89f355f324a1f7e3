import { updateEndpoint } from '../../../shared/domain/webhookEndpoints.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { endpointNotFound } from './get.ts';
import { EndpointIdParams, endpointExample, UpdateWebhookEndpointBody, WebhookEndpointSchema } from './schemas.ts';

export default defineOperation({
  operationId: 'updateWebhookEndpoint',
  method: 'patch',
  path: '/v1/webhook-endpoints/:id',
  surface: 'v1',
  tags: ['Webhooks'],
  summary: 'Update a webhook endpoint',
  description: 'Changes the members given. Set status "disabled" to pause deliveries, "enabled" to resume them (events meanwhile are not sent).',
  params: EndpointIdParams,
  body: UpdateWebhookEndpointBody,
  bodyExample: { status: 'disabled' },
  responses: { 200: { description: 'The endpoint.', schema: WebhookEndpointSchema, example: { ...endpointExample, status: 'disabled' } } },
  problems: ['not-found', 'bad-request', 'unsupported-media-type'],
  async handle({ res, deps, params, body }) {
    const endpoint = await updateEndpoint(deps.pool, tenantOf(res), params.id, body, deps.config);
    if (!endpoint) throw endpointNotFound(params.id);
    res.json(endpoint);
  },
});
