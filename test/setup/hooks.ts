// Mocha root hooks: the PostgreSQL server lives for the whole run.
import { startTestDatabaseServer, stopTestDatabaseServer } from './database.ts';

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(120_000);
    await startTestDatabaseServer();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await stopTestDatabaseServer();
  },
};
