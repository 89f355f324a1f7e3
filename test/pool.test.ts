// The process's pool of PostgreSQL connections (shared/platform/db.ts): a connection is replaced
// after its lifetime, when next released, so that no backend keeps for good what it learnt of every
// table it touched (each large version's customers have a table of their own: sql/029).
import { expect } from 'chai';
import { createPool } from '../shared/platform/db.ts';
import { createTestDatabase } from './setup/database.ts';

describe('the pool of connections', () => {
  it('when a connection has served its lifetime, then the pool ends it once released and the next query gets another; none is ended mid-use', async function () {
    this.timeout(20_000);
    const database = await createTestDatabase();
    const pool = createPool(database.url, 1, 'test', 1);
    try {
      const pid = async () => (await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const first = await pid();
      // Held across its lifetime: the transaction goes on on the same backend.
      const client = await pool.connect();
      await client.query('BEGIN');
      const held = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid).to.equal(held);
      await client.query('COMMIT');
      client.release();
      expect(held).to.equal(first);
      expect(await pid()).to.not.equal(first);
    } finally {
      await pool.end();
      await database.drop();
    }
  });
});
