// The client: one per credential, holding the transport the resources share.
import { Datasets } from './resources/datasets.ts';
import { Events } from './resources/events.ts';
import { Exports } from './resources/exports.ts';
import { Versions } from './resources/versions.ts';
import { WebhookEndpoints } from './resources/webhookEndpoints.ts';
import { type ClientOptions, Transport } from './transport.ts';

/**
 * ```ts
 * const service = new DatasetService({ apiKey: process.env.DATASET_SERVICE_API_KEY!, baseUrl: 'http://localhost:3000' });
 * const dataset = await service.datasets.create({ externalRef: 'crm-2026', name: 'CRM contracts' });
 * const version = await service.versions.upload(dataset.id, { path: 'contracts.csv' });
 * ```
 */
export class DatasetService {
  readonly datasets: Datasets;
  readonly versions: Versions;
  readonly exports: Exports;
  readonly events: Events;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly baseUrl: string;

  constructor(options: ClientOptions) {
    const transport = new Transport(options);
    this.baseUrl = transport.baseUrl;
    this.datasets = new Datasets(transport);
    this.versions = new Versions(transport);
    this.exports = new Exports(transport);
    this.events = new Events(transport);
    this.webhookEndpoints = new WebhookEndpoints(transport);
  }
}
