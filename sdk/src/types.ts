// The resources as the service renders them, named from the OpenAPI document's schemas
// (src/openapi.ts is generated from it at build: npm run generate), so they cannot drift.
import type { components, operations } from './openapi.ts';

type Schemas = components['schemas'];

export type Dataset = Schemas['Dataset'];
export type DeletedDataset = Schemas['DeletedDataset'];
export type CreateDatasetParams = Schemas['CreateDatasetRequest'];
export type Upload = Schemas['Upload'];
export type Version = Schemas['Version'];
export type VersionStatus = Version['status'];
export type VersionProgress = Version['progress'];
export type RowError = Schemas['RowErrorList']['data'][number];
export type Metrics = Schemas['Metrics'];
export type MonthFigures = Schemas['MonthFigures'];
export type Reporting = Schemas['Reporting'];
export type ReportingMonth = Schemas['ReportingMonth'];
export type Catalog = Schemas['Catalog'];
export type Cohorts = Schemas['Cohorts'];
export type CustomerMonth = Schemas['CustomerMonth'];
export type CustomerMovement = NonNullable<CustomerMonth['movement']>;
export type VersionChanges = Schemas['VersionChanges'];
export type ContractChange = Schemas['ContractChange'];
export type ContractChangeKind = ContractChange['change'];
export type Export = Schemas['Export'];
export type ExportFormat = Export['format'];
export type CreateExportParams = Schemas['CreateExportRequest'];
export type Event = Schemas['Event'];
export type EventType = Event['type'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
export type CreateWebhookEndpointParams = Schemas['CreateWebhookEndpointRequest'];
export type UpdateWebhookEndpointParams = Schemas['UpdateWebhookEndpointRequest'];
export type DeletedWebhookEndpoint = Schemas['DeletedWebhookEndpoint'];

export type ListDatasetsParams = NonNullable<operations['listDatasets']['parameters']['query']>;
export type ListEventsParams = NonNullable<operations['listEvents']['parameters']['query']>;
export type MetricsParams = NonNullable<operations['getMetrics']['parameters']['query']>;
export type CohortsParams = NonNullable<operations['getCohorts']['parameters']['query']>;
export type CustomersParams = operations['listCustomerMonths']['parameters']['query'];
export type CatalogParams = NonNullable<operations['getCatalog']['parameters']['query']>;
export type VersionChangesParams = NonNullable<operations['getVersionChanges']['parameters']['query']>;
export type ContractChangesParams = NonNullable<operations['listContractChanges']['parameters']['query']>;
/** `limit` and `cursor`, as every list takes them. */
export type PageParams = { limit?: number; cursor?: string };

/** One page of a list: `nextCursor` is null on the last page. */
export type Page<T> = { object: 'list'; data: T[]; nextCursor: string | null };
