// Sending a job as another process would (a producer of its own, started and stopped around the
// send), for tests whose workers run as child processes.
import { createBoss } from '../../shared/platform/boss.ts';
import { createLogger } from '../../shared/platform/log.ts';

/** Sends one job to `queue` of the database's pg-boss now. */
export async function sendJobNow(databaseUrl: string, queue: string, data: object = {}): Promise<void> {
  const boss = createBoss(databaseUrl, 'producer', createLogger({ logLevel: 'silent' }, 'test'));
  await boss.start();
  try {
    await boss.send(queue, data);
  } finally {
    await boss.stop({ graceful: false });
  }
}
