// Datasets: create, read, list, delete; and what is computed from the active version.
import { everyItem } from '../pages.ts';
import type { Transport } from '../transport.ts';
import type { Catalog, CatalogParams, Cohorts, CohortsParams, CreateDatasetParams, CustomerMonth, CustomersParams, Dataset, DeletedDataset, ListDatasetsParams, Metrics, MetricsParams, Page } from '../types.ts';
import { NotFoundError } from '../errors.ts';

export type MutationOptions = {
  /** The operation's Idempotency-Key; best derived from what the call does (e.g. "create-crm-2026"). Default: a new UUID. */
  idempotencyKey?: string;
};

export class Datasets {
  private readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  /** Creates a dataset. A ConflictError (with existingId) when the externalRef is taken. */
  create(params: CreateDatasetParams, options: MutationOptions = {}): Promise<Dataset> {
    return this.transport.json({ method: 'POST', path: '/v1/datasets', json: params, ...options });
  }

  get(id: string): Promise<Dataset> {
    return this.transport.json({ method: 'GET', path: `/v1/datasets/${encodeURIComponent(id)}` });
  }

  /** The dataset with this externalRef; a NotFoundError when there is none. */
  async getByRef(externalRef: string): Promise<Dataset> {
    const page = await this.list({ externalRef, limit: 1 });
    const found = page.data[0];
    if (!found) throw new NotFoundError({ type: 'not-found', title: 'Not found', status: 404, detail: `No dataset has externalRef ${externalRef}.` });
    return found;
  }

  /** One page, newest first. */
  list(params: ListDatasetsParams = {}): Promise<Page<Dataset>> {
    return this.transport.json({ method: 'GET', path: '/v1/datasets', query: params });
  }

  /** Every dataset, page after page: `for await (const dataset of client.datasets.listAll())`. */
  listAll(params: Omit<ListDatasetsParams, 'cursor'> = {}): AsyncGenerator<Dataset, void, undefined> {
    return everyItem((cursor) => this.list({ ...params, ...(cursor && { cursor }) }));
  }

  /** Deletes the dataset with its versions and exports (its rows are purged in the background). */
  delete(id: string, options: MutationOptions = {}): Promise<DeletedDataset> {
    return this.transport.json({ method: 'DELETE', path: `/v1/datasets/${encodeURIComponent(id)}`, ...options });
  }

  /**
   * The active version's metrics, or with `versionId` those of an earlier version that was active
   * (as they were then). A NotFoundError both when the dataset does not exist and when it
   * has no active version yet: `get(id)` tells them apart (an empty activeVersionId).
   */
  metrics(id: string, params: MetricsParams = {}): Promise<Metrics> {
    return this.transport.json({ method: 'GET', path: `/v1/datasets/${encodeURIComponent(id)}/metrics`, query: params });
  }

  /** The active version's catalog (fields, products), or with `versionId` an earlier one's. NotFoundError as for metrics. */
  catalog(id: string, params: CatalogParams = {}): Promise<Catalog> {
    return this.transport.json({ method: 'GET', path: `/v1/datasets/${encodeURIComponent(id)}/catalog`, query: params });
  }

  /** The active version's cohorts: customers by the month of their new business, with their count and MRR at every later month end. NotFoundError as for metrics. */
  cohorts(id: string, params: CohortsParams = {}): Promise<Cohorts> {
    return this.transport.json({ method: 'GET', path: `/v1/datasets/${encodeURIComponent(id)}/cohorts`, query: params });
  }

  /** One page of the customers with MRR at the end of `month` or of the month before, with their movement. NotFoundError as for metrics. */
  customers(id: string, params: CustomersParams): Promise<Page<CustomerMonth>> {
    return this.transport.json({ method: 'GET', path: `/v1/datasets/${encodeURIComponent(id)}/customers`, query: params });
  }

  /** Every customer of a month, page after page: `for await (const c of client.datasets.customersAll(id, { month: '2026-03', movement: 'churn' }))`. */
  customersAll(id: string, params: Omit<CustomersParams, 'cursor'>): AsyncGenerator<CustomerMonth, void, undefined> {
    return everyItem((cursor) => this.customers(id, { ...params, ...(cursor && { cursor }) }));
  }
}
