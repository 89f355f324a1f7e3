// Numbered, forward-only migrations from sql/. All of them run in one transaction behind an
// advisory lock, so two processes starting at once apply each file exactly once.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pool } from './db.ts';
import { withTransaction } from './db.ts';
import { sqlDir } from './paths.ts';

type Migration = { version: number; name: string; file: string };

const MIGRATION_LOCK = 7_310_001; // arbitrary, stable advisory lock id for this project

const listed = new Map<string, Promise<Migration[]>>();

/** The migration files, read once per directory: they do not change while the process runs. */
export function listMigrations(dir = sqlDir): Promise<Migration[]> {
  let migrations = listed.get(dir);
  if (!migrations) {
    migrations = readMigrations(dir);
    listed.set(dir, migrations);
  }
  return migrations;
}

async function readMigrations(dir: string): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{3,}_[\w-]+\.sql$/.test(f)).sort();
  return files.map((file) => ({ version: Number(file.split('_')[0]), name: file.replace(/\.sql$/, ''), file }));
}

export async function migrate(pool: Pool, dir = sqlDir): Promise<string[]> {
  const migrations = await listMigrations(dir);
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => r.version));
    const done: string[] = [];
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      await client.query(await readFile(join(dir, m.file), 'utf8'));
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      done.push(m.name);
    }
    return done;
  });
}

/** True when every migration file has been applied (for /readyz). */
export async function migrationsCurrent(pool: Pool, dir = sqlDir): Promise<boolean> {
  const versions = (await listMigrations(dir)).map((m) => m.version);
  // Every file's, not only the latest: one added between two applied ones is pending too.
  const { rows } = await pool.query<{ applied: number }>('SELECT count(*)::int AS applied FROM schema_migrations WHERE version = ANY ($1::int[])', [versions]);
  return rows[0]!.applied === versions.length;
}
