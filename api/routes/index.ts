// Every operation the API serves, in the order the reference lists them.
import createDataset from './datasets/create.ts';
import getDataset from './datasets/get.ts';
import deleteDataset from './datasets/delete.ts';
import listDatasets from './datasets/list.ts';
import { getCatalog, getMetrics } from './datasets/metricsAndCatalog.ts';
import getCohorts from './datasets/cohorts.ts';
import listCustomerMonths from './datasets/customers.ts';
import createExchangeRates from './exchangeRates/create.ts';
import listExchangeRates from './exchangeRates/list.ts';
import getExchangeRates from './exchangeRates/get.ts';
import createExport from './exports/create.ts';
import downloadExport from './exports/download.ts';
import { getExport, getExportContent } from './exports/get.ts';
import getServiceMetrics from './health/metrics.ts';
import { healthz, readyz } from './health/probes.ts';
import createUpload from './uploads/create.ts';
import putUpload from './uploads/put.ts';
import {
  appendResumableUpload,
  createResumableUpload,
  describeResumableUploads,
  getResumableUploadOffset,
  terminateResumableUpload,
} from './uploads/resumable.ts';
import createVersion from './versions/create.ts';
import getVersion from './versions/get.ts';
import listVersions from './versions/list.ts';
import listVersionErrors from './versions/errors.ts';
import getVersionChanges from './versions/changes.ts';
import listContractChanges from './versions/contractChanges.ts';
import { oauthEndpoints } from './oauth/endpoints.ts';
export { OAUTH_BROWSER_FLOW } from './oauth/endpoints.ts';
import listEvents from './events/list.ts';
import getEvent from './events/get.ts';
import createWebhookEndpoint from './webhookEndpoints/create.ts';
import listWebhookEndpoints from './webhookEndpoints/list.ts';
import getWebhookEndpoint from './webhookEndpoints/get.ts';
import updateWebhookEndpoint from './webhookEndpoints/update.ts';
import deleteWebhookEndpoint from './webhookEndpoints/delete.ts';
import { getAuthorizationServerMetadata, getProtectedResourceMetadata, getProtectedResourceMetadataRoot } from './oauth/metadata.ts';
import type { Operation } from '../defineOperation.ts';

export const operations: Operation[] = [
  createDataset,
  listDatasets,
  getDataset,
  deleteDataset,
  createUpload,
  putUpload,
  createResumableUpload,
  getResumableUploadOffset,
  appendResumableUpload,
  terminateResumableUpload,
  describeResumableUploads,
  createVersion,
  listVersions,
  getVersion,
  listVersionErrors,
  getVersionChanges,
  listContractChanges,
  getMetrics,
  getCohorts,
  listCustomerMonths,
  getCatalog,
  createExchangeRates,
  listExchangeRates,
  getExchangeRates,
  createExport,
  getExport,
  getExportContent,
  downloadExport,
  listEvents,
  getEvent,
  createWebhookEndpoint,
  listWebhookEndpoints,
  getWebhookEndpoint,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  getAuthorizationServerMetadata,
  getProtectedResourceMetadata,
  getProtectedResourceMetadataRoot,
  ...oauthEndpoints,
  healthz,
  readyz,
  getServiceMetrics,
];
