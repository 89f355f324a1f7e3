// Webhook endpoints: where the account's events are delivered, signed (Standard Webhooks).
import { everyItem } from '../pages.ts';
import type { Transport } from '../transport.ts';
import type {
  CreateWebhookEndpointParams,
  DeletedWebhookEndpoint,
  Page,
  PageParams,
  UpdateWebhookEndpointParams,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from '../types.ts';
import type { MutationOptions } from './datasets.ts';

export class WebhookEndpoints {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** Creates an endpoint; its signing `secret` is in this answer only: keep it for verifyWebhook. */
  create(params: CreateWebhookEndpointParams, options: MutationOptions = {}): Promise<WebhookEndpointWithSecret> {
    return this.transport.json({ method: 'POST', path: '/v1/webhook-endpoints', json: params, ...options });
  }

  get(id: string): Promise<WebhookEndpoint> {
    return this.transport.json({ method: 'GET', path: endpointPath(id) });
  }

  list(params: PageParams = {}): Promise<Page<WebhookEndpoint>> {
    return this.transport.json({ method: 'GET', path: '/v1/webhook-endpoints', query: params });
  }

  listAll(params: Omit<PageParams, 'cursor'> = {}): AsyncGenerator<WebhookEndpoint, void, undefined> {
    return everyItem((cursor) => this.list({ ...params, ...(cursor && { cursor }) }));
  }

  /** Changes its url, events, description, or status ("disabled" stops deliveries). */
  update(id: string, params: UpdateWebhookEndpointParams, options: MutationOptions = {}): Promise<WebhookEndpoint> {
    return this.transport.json({ method: 'PATCH', path: endpointPath(id), json: params, ...options });
  }

  delete(id: string, options: MutationOptions = {}): Promise<DeletedWebhookEndpoint> {
    return this.transport.json({ method: 'DELETE', path: endpointPath(id), ...options });
  }
}

const endpointPath = (id: string) => `/v1/webhook-endpoints/${encodeURIComponent(id)}`;
