// The baseline for `bench api`: a bare Express 5 route doing the same two primary-key queries as
// an authenticated GET /v1/datasets/{id} (the key lookup by digest, then the dataset), through
// pg with the same pool size, and nothing else.
import { createHash } from 'node:crypto';
import express from 'express';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env['DATABASE_URL'], max: Number(process.env['DATABASE_POOL_SIZE'] ?? 10) });
const app = express();
app.get('/bare/datasets/:id', async (req, res) => {
  const key = (req.headers.authorization ?? '').slice('Bearer '.length);
  const digest = createHash('sha256').update(key).digest();
  const auth = await pool.query('SELECT id, account_id, mode, label FROM api_keys WHERE secret_sha256 = $1 AND revoked_at IS NULL', [digest]);
  const account = auth.rows[0];
  if (!account) return void res.status(401).end();
  const { rows } = await pool.query('SELECT * FROM datasets WHERE id = $1 AND account_id = $2 AND mode = $3', [req.params.id, account.account_id, account.mode]);
  if (!rows[0]) return void res.status(404).end();
  res.json(rows[0]);
});
app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
const server = app.listen(Number(process.env['PORT']));
process.on('SIGTERM', () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
  server.closeAllConnections();
});
