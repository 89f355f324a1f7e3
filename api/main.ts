// The `web` process (Procfile): the HTTP API.
import { openDatabase } from '../shared/platform/embeddedPostgres.ts';
import { runProcess } from '../shared/platform/lifecycle.ts';
import { startApi } from './server.ts';

await runProcess('web', async (config, log, parts) => {
  const database = await openDatabase(config, log);
  parts.push({ name: 'database', stop: database.stop });
  const api = await startApi(config, database.url, log);
  parts.push({ name: 'api', stop: api.stop });
});
