// The `worker` process (Procfile): pg-boss consumers. Scale by running more of them.
import { openDatabase } from '../shared/platform/embeddedPostgres.ts';
import { runProcess } from '../shared/platform/lifecycle.ts';
import { startWorker } from './worker.ts';

await runProcess('worker', async (config, log, parts) => {
  const database = await openDatabase(config, log);
  parts.push({ name: 'database', stop: database.stop });
  const worker = await startWorker(config, database.url, log);
  parts.push({ name: 'worker', stop: worker.stop });
});
