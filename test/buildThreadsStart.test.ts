// A lane's build threads that cannot even start in their heap (worker/buildThreads.ts, start): the
// lane that may go without (the express lane) says so and fails each build at once, as one that
// outgrew its thread, while the other lane refuses to start, and so does the worker.
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { BuildOutOfMemory, BuildThreads } from '../worker/buildThreads.ts';
import { createLogger } from '../shared/platform/log.ts';
import { useService } from './support/service.ts';

describe('build threads that cannot start in their heap', () => {
  const svc = useService({ worker: false });

  it('when a lane may go without, then it starts without threads and fails each build with BuildOutOfMemory; when it may not, then its start rejects with it', async function () {
    this.timeout(60_000);
    const lines: string[] = [];
    const log = createLogger({ logLevel: 'info' }, 'test', new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }));
    // 6 MiB of old generation: a thread runs out of it loading the build's modules (10 is enough to
    // load them; at 2, V8 cannot even make the thread's heap, and aborts the whole process).
    const data = { config: svc.config, databaseUrl: svc.databaseUrl, tallyThread: false, heapMb: 6, nice: 0 };
    const without = new BuildThreads(data, 2, log);
    try {
      await without.start('without');
      expect(lines.join('\n')).to.include('cannot start in their heap');
      const build = await without.run('ver_nothreadsaaaaaaaaaaa1', new AbortController().signal).then(() => undefined, (error: unknown) => error);
      expect(build).to.be.instanceOf(BuildOutOfMemory);
    } finally {
      await without.close();
    }
    const required = new BuildThreads(data, 2, log);
    try {
      expect(await required.start().then(() => undefined, (error: unknown) => error)).to.be.instanceOf(BuildOutOfMemory);
    } finally {
      await required.close();
    }
  });
});
