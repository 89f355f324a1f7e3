// `npm start`: the API, one worker and (when DATABASE_URL is unset) the embedded PostgreSQL, in
// one process for development. In production the Procfile runs them as separate processes.
import { startApi } from '../api/server.ts';
import { openDatabase } from '../shared/platform/embeddedPostgres.ts';
import { runProcess } from '../shared/platform/lifecycle.ts';
import { startWorker } from '../worker/worker.ts';

await runProcess('start', async (config, log, parts) => {
  const database = await openDatabase(config, log);
  parts.push({ name: 'database', stop: database.stop });
  const worker = await startWorker(config, database.url, log);
  parts.push({ name: 'worker', stop: worker.stop });
  const api = await startApi(config, database.url, log);
  parts.push({ name: 'api', stop: api.stop });
  log.info({ url: config.baseUrl, docs: `${config.baseUrl}/docs` }, 'dataset service ready');
});
