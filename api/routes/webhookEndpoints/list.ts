import { findEndpoint, listEndpoints } from '../../../shared/domain/webhookEndpoints.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { invalidCursor, listOf, PaginationQuery } from '../../schemas.ts';
import { endpointExample, WebhookEndpointSchema } from './schemas.ts';

export default defineOperation({
  operationId: 'listWebhookEndpoints',
  method: 'get',
  path: '/v1/webhook-endpoints',
  surface: 'v1',
  tags: ['Webhooks'],
  summary: 'List webhook endpoints',
  description: 'The endpoints of the credential\'s account and mode, newest first (without their secrets).',
  query: PaginationQuery,
  responses: {
    200: {
      description: 'A page of endpoints.',
      schema: listOf(WebhookEndpointSchema, 'WebhookEndpointList'),
      example: { object: 'list', data: [endpointExample], nextCursor: null },
    },
  },
  problems: ['bad-request'],
  async handle({ res, deps, query }) {
    const tenant = tenantOf(res);
    const page = await listEndpoints(deps.pool, tenant, query);
    if (page.data.length === 0 && query.cursor && !(await findEndpoint(deps.pool, tenant, query.cursor))) {
      throw invalidCursor();
    }
    res.json(page);
  },
});
