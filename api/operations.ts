// Every operation the API serves, in the order the reference lists them.
import createDataset from './routes/datasets/create.ts';
import getDataset from './routes/datasets/get.ts';
import listDatasets from './routes/datasets/list.ts';
import { healthz, readyz } from './routes/operations/health.ts';
import type { Operation } from './operation.ts';

export const operations: Operation[] = [createDataset, listDatasets, getDataset, healthz, readyz];
