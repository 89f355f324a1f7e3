// Mocha root hooks: the PostgreSQL server (and, with TEST_BLOB_STORE=s3, the S3 server) live for the whole run.
// First, so that every module loaded after it (the test files, the service) goes through the cache.
import './compileCache.ts';
import { startTestDatabaseServer, stopTestDatabaseServer } from './database.ts';
import { startTestObjectStore, stopTestObjectStore } from './objectStore.ts';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    await startTestDatabaseServer();
    await startTestObjectStore();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await stopTestObjectStore();
    await stopTestDatabaseServer();
  },
};
