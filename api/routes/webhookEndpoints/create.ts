import { createEndpoint } from '../../../shared/domain/webhookEndpoints.ts';
import { keepAnswerWithout } from '../../filters/idempotency.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { CreateWebhookEndpointBody, endpointExample, WebhookEndpointWithSecretSchema } from './schemas.ts';

export default defineOperation({
  operationId: 'createWebhookEndpoint',
  method: 'post',
  path: '/v1/webhook-endpoints',
  surface: 'v1',
  tags: ['Webhooks'],
  summary: 'Create a webhook endpoint',
  description:
    'Events of the credential\'s account and mode are POSTed to the URL, signed per Standard Webhooks (webhook-id, webhook-timestamp, ' +
    'webhook-signature) with the secret returned here, and only here. A delivery is any 2xx within 10 seconds; anything else is ' +
    'retried (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), redirects are not followed, and an endpoint whose every delivery failed for ' +
    '3 days is disabled. At least once, in no guaranteed order: deduplicate by webhook-id. Deliveries are shared fairly: only a few of ' +
    "one account's are sent at once (10 by default), taken round robin between its endpoints, so slow or failing endpoints delay no other account's.",
  body: CreateWebhookEndpointBody,
  bodyExample: { url: 'https://hooks.example.com/dataset-service', events: ['version.active', 'version.failed'], description: 'CRM sync' },
  responses: {
    201: {
      description: 'The endpoint, with its secret.',
      schema: WebhookEndpointWithSecretSchema,
      example: { ...endpointExample, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/aGmPCWKmDA=' },
      headers: { Location: 'URL of the endpoint.' },
    },
  },
  problems: ['bad-request', 'unsupported-media-type'],
  keptAnswers: {
    /** The kept answer holds the secret sealed, never in clear: the replay opens it again. */
    async endpointSecret({ res, deps, keptBody }, kept: { sealed: string }) {
      const answer = JSON.parse(keptBody.toString('utf8')) as Record<string, unknown>;
      answer['secret'] = await deps.secrets.open(Buffer.from(kept.sealed, 'base64'));
      res.end(Buffer.from(JSON.stringify(answer)));
    },
  },
  async handle({ res, deps, body }) {
    const { endpoint, secret } = await createEndpoint(deps.pool, deps.secrets, tenantOf(res), body, deps.config);
    const answer = { ...endpoint, secret };
    const sealed = (await deps.secrets.seal(secret)).toString('base64');
    keepAnswerWithout(res, Buffer.from(JSON.stringify({ ...answer, secret: null })), { endpointSecret: { sealed } });
    res.status(201).location(`${deps.config.baseUrl}/v1/webhook-endpoints/${endpoint.id}`).json(answer);
  },
});
