// Every operation the API serves, in the order the reference lists them.
import createDataset from './routes/datasets/create.ts';
import getDataset from './routes/datasets/get.ts';
import listDatasets from './routes/datasets/list.ts';
import { getCatalog, getMetrics } from './routes/datasets/reads.ts';
import createExport from './routes/exports/create.ts';
import downloadExport from './routes/exports/download.ts';
import { getExport, getExportContent } from './routes/exports/get.ts';
import { healthz, readyz } from './routes/operations/health.ts';
import createUpload from './routes/uploads/create.ts';
import putUpload from './routes/uploads/put.ts';
import createVersion from './routes/versions/create.ts';
import getVersion from './routes/versions/get.ts';
import listVersions from './routes/versions/list.ts';
import { oauthEndpoints } from './routes/oauth/endpoints.ts';
import { getAuthorizationServerMetadata, getProtectedResourceMetadata, getProtectedResourceMetadataRoot } from './routes/oauth/metadata.ts';
import type { Operation } from './operation.ts';

export const operations: Operation[] = [
  createDataset,
  listDatasets,
  getDataset,
  createUpload,
  putUpload,
  createVersion,
  listVersions,
  getVersion,
  getMetrics,
  getCatalog,
  createExport,
  getExport,
  getExportContent,
  downloadExport,
  getAuthorizationServerMetadata,
  getProtectedResourceMetadata,
  getProtectedResourceMetadataRoot,
  ...oauthEndpoints,
  healthz,
  readyz,
];
