// The `release` process (Procfile): applies pending migrations, then exits.
import { createPool } from '../shared/platform/db.ts';
import { openDatabase } from '../shared/platform/embeddedPostgres.ts';
import { runProcess } from '../shared/platform/lifecycle.ts';
import { migrate } from '../shared/platform/migrate.ts';

await runProcess('release', async (config, log, parts) => {
  const database = await openDatabase(config, log);
  parts.push({ name: 'database', stop: database.stop });
  const pool = createPool(database.url, 1, 'dataset-service-release');
  try {
    const applied = await migrate(pool);
    log.info({ applied }, applied.length ? 'migrations applied' : 'migrations current');
  } finally {
    await pool.end();
  }
  await database.stop();
  process.exit(0);
});
