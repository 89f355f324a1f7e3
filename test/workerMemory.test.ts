// What a worker of several build slots holds at once (docs/operating.md, "Node.js flags"): only
// TALLY_THREADS of its build threads count their rows on a tally thread of their own (each a V8
// heap); the others count in their own thread, with the same figures.
import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import { newDataset, postCsv } from './support/ingest.ts';
import { useService } from './support/service.ts';
import { contractsCsv } from './support/contracts.ts';
import type { BuildSummary } from '../worker/jobs/versionBuild.ts';

/** The nice value of a thread of this process (field 19 of its stat). */
const niceOf = (tid: string) => {
  try {
    const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  } catch {
    return undefined; // ended meanwhile
  }
};
/** Tally threads run at nice 10 (worker/tallyThread.ts). */
const TALLY_NICE = 10;
const threads = () => readdirSync(`/proc/${process.pid}/task`);

describe('a worker of two build slots and one tally thread', () => {
  const built = new Map<string, BuildSummary>();
  const svc = useService({ env: { WORKER_CONCURRENCY: '2', TALLY_THREADS: '1' }, onBuilt: (versionId, summary) => built.set(versionId, summary) });

  it('when two large files build at once, then one tally thread counts at a time and both versions get the same figures', async function () {
    this.timeout(60_000);
    const { key } = await svc.tenant();
    const datasets = [await newDataset(svc, key), await newDataset(svc, key)];
    // Above 1 MiB (the large lane) and many batches of rows each, so that the builds overlap.
    const file = contractsCsv(60_000);
    // Threads started before (another test's, if any are still up) do not count.
    const before = new Set(threads());
    const tallyThreadsNow = () => threads().filter((tid) => !before.has(tid) && niceOf(tid) === TALLY_NICE).length;
    let most = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        most = Math.max(most, tallyThreadsNow());
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const replies = await Promise.all(datasets.map((ds) => postCsv(svc, key, ds, file, { wait: 60 })));
    sampling = false;
    await sampler;
    expect(replies.map((r) => r.status)).to.deep.equal([201, 201]);
    const summaries = replies.map((r) => built.get(r.json.id));
    expect(summaries.map((s) => s?.readsIn)).to.deep.equal(['node', 'node']);
    expect(most).to.equal(1);
    const reads = await Promise.all(
      replies.map(async (r) => (await svc.db.query('SELECT rows, currencies, catalog FROM version_reads WHERE version_id = $1', [r.json.id])).rows[0]),
    );
    expect(reads[0]).to.deep.equal(reads[1]).and.not.equal(undefined);
  });
});
