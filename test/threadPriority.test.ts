// A thread's own scheduling priority (shared/platform/threadPriority.ts): the tally thread gives
// way to the build thread. On Linux a thread is a task with its own nice value, in /proc.
import { readdirSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { expect } from 'chai';
import { currencyIndex } from '../shared/ingest/currencies.ts';
import { TallyThread } from '../worker/tallyThreads.ts';
import { eventually } from './support/eventually.ts';

const niceOf = (tid: number) => {
  const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]); // field 19 of stat
};

describe('thread priority', () => {
  it('when a thread lowers its priority, then that thread alone runs at the nice value, not the rest of the process', async () => {
    const module = new URL('../shared/platform/threadPriority.ts', import.meta.url).href;
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       const { readlinkSync } = require('node:fs');
       import(${JSON.stringify(module)}).then(({ lowerThreadPriority }) => {
         const lowered = lowerThreadPriority(10);
         parentPort.postMessage({ lowered, tid: Number(readlinkSync('/proc/thread-self').split('/').pop()) });
         parentPort.once('message', () => process.exit(0));
       });`,
      { eval: true },
    );
    try {
      const { lowered, tid } = await new Promise<{ lowered: boolean; tid: number }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      expect(lowered).to.equal(true);
      expect(niceOf(tid)).to.equal(10);
      expect(niceOf(process.pid)).to.equal(0); // the main thread's task id is the process id
    } finally {
      worker.postMessage('done');
      await worker.terminate();
    }
  });

  it('when a build\'s tally thread starts (its rows fill more than a batch), then it runs at nice 10, below the threads a build waits for', async () => {
    // Threads of this process lowered before (other tests' tally threads, if any are still up) do not count.
    const before = new Set(readdirSync(`/proc/${process.pid}/task`));
    const lowered = () => readdirSync(`/proc/${process.pid}/task`).filter((tid) => !before.has(tid)).map(Number).filter((tid) => niceOf(tid) !== 0);
    const tally = new TallyThread(64);
    try {
      const feed = tally.feed();
      // The thread starts with a build's second batch (a build of one is counted where it is read).
      const eur = currencyIndex(Buffer.from('EUR'), 0);
      for (let i = 0; i < 10_000; i++) {
        const text = Buffer.from(`c${i}Customer ${i % 100}`);
        feed.addContractId(text, 0, String(i).length + 1);
        feed.add({
          hasContractId: true, text, customerStart: String(i).length + 1, customerEnd: text.length, productStart: -1, productEnd: -1,
          startDay: 20_000, endDay: 20_400, cents: 100 + i, currency: eur,
        });
      }
      await feed.flush();
      const nices = await eventually(() => lowered().map(niceOf), (seen) => seen.length > 0);
      expect(nices).to.deep.equal([10]);
      await feed.end();
    } finally {
      await tally.close();
    }
  });
});
