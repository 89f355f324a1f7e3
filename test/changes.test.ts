// Reading and comparing versions (../shared/spec/contract.md): any version's figures with
// ?versionId=, what changed between two uploads (counts, restated months, each contract change,
// as JSON pages and CSV), the 404s, and what a retention purge leaves readable.
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { purgeVersionsPastRetention } from '../shared/domain/versionRetention.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { csvParse } from './support/csv.ts';
import { useService } from './support/service.ts';

// A book uploaded, then corrected: c2's amount, c3's end date and c5's product corrected, c4
// removed, c6 and é7 added; rows without a contractId: Fay's twice, then once (a multiset), Gus's
// amount changed (a removal and an addition), Ivy's kept.
const FIRST = [
  'c1,Acme,Pro,2025-01-01,2025-12-31,1200.00,EUR',
  'c2,Beta,Pro,2025-01-01,2025-12-31,2400.00,EUR',
  'c3,Cyd,Team,2025-03-01,2026-02-28,600.00,EUR',
  'c4,Dan,Pro,2025-01-01,2025-06-30,600.00,USD',
  'c5,Eve,Basic,2025-02-01,2026-01-31,1200.00,USD',
  ',Fay,,2025-01-01,2025-12-31,120.00,GBP',
  ',Gus,,2025-01-01,2025-12-31,240.00,GBP',
  ',Fay,,2025-01-01,2025-12-31,120.00,GBP',
  ',Ivy,Pro,2025-04-01,2025-09-30,60.00,GBP',
];
const SECOND = [
  ',Ivy,Pro,2025-04-01,2025-09-30,60.00,GBP',
  'é7,Jon,Pro,2025-07-01,2026-06-30,2400.00,EUR',
  'c5,Eve,Plus,2025-02-01,2026-01-31,1200.00,USD',
  'c3,Cyd,Team,2025-03-01,2025-08-31,600.00,EUR',
  'c1,Acme,Pro,2025-01-01,2025-12-31,1200.00,EUR',
  'c6,Hal,Pro,2025-06-01,2026-05-31,1200.00,EUR',
  ',Gus,,2025-01-01,2025-12-31,480.00,GBP',
  ',Fay,,2025-01-01,2025-12-31,120.00,GBP',
  'c2,Beta,Pro,2025-01-01,2025-12-31,3600.00,EUR',
];
const book = (rows: string[]) => `${HEADER}\n${rows.join('\n')}\n`;
const ALL = ['contractId', 'customer', 'product', 'startDate', 'endDate', 'amount', 'currency'];
const row = (line: string) => Object.fromEntries(line.split(',').map((cell, i) => [ALL[i], cell === '' ? null : cell]));

/** The changes the book has, in the order they are listed: by contractId as bytes, rows without one last. */
const EXPECTED_CHANGES = [
  { change: 'changed', contractId: 'c2', before: row(FIRST[1]!), after: row(SECOND[8]!), fields: ['amount'] },
  { change: 'changed', contractId: 'c3', before: row(FIRST[2]!), after: row(SECOND[3]!), fields: ['endDate'] },
  { change: 'removed', contractId: 'c4', before: row(FIRST[3]!), after: null, fields: ALL },
  { change: 'changed', contractId: 'c5', before: row(FIRST[4]!), after: row(SECOND[2]!), fields: ['product'] },
  { change: 'added', contractId: 'c6', before: null, after: row(SECOND[5]!), fields: ALL },
  { change: 'added', contractId: 'é7', before: null, after: row(SECOND[1]!), fields: ALL },
  { change: 'removed', contractId: null, before: row(FIRST[5]!), after: null, fields: ALL },
  { change: 'removed', contractId: null, before: row(FIRST[6]!), after: null, fields: ALL },
  { change: 'added', contractId: null, before: null, after: row(SECOND[6]!), fields: ALL },
].map((c) => ({ object: 'contract_change', ...c }));

type MonthEnd = { month: string; currency: string; mrr: string; activeCustomers: number };

/** The restated months as the two versions' metrics show them: what `months` must be. */
function restatedFromMetrics(before: MonthEnd[], after: MonthEnd[]) {
  const keys = [...new Set([...before, ...after].map((m) => `${m.currency} ${m.month}`))].sort();
  const at = (list: MonthEnd[], key: string) => {
    const m = list.find((x) => `${x.currency} ${x.month}` === key);
    return { mrr: m?.mrr ?? '0.00', activeCustomers: m?.activeCustomers ?? 0 };
  };
  return keys
    .map((key) => ({ key, b: at(before, key), a: at(after, key) }))
    .filter(({ a, b }) => a.mrr !== b.mrr || a.activeCustomers !== b.activeCustomers)
    .map(({ key, a, b }) => ({ month: key.slice(4), currency: key.slice(0, 3), before: b, after: a, mrrChange: ((Math.round(Number(a.mrr) * 100) - Math.round(Number(b.mrr) * 100)) / 100).toFixed(2) }));
}

describe('reading and comparing versions', () => {
  const svc = useService();

  /** A dataset with the book uploaded twice; what its reads answered while the first was active. */
  async function twoUploads() {
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key);
    const first = await postCsv(svc, key, ds, book(FIRST));
    expect(first.status, first.text).to.equal(201);
    const get = (path: string) => svc.request(`/v1/datasets/${ds}/${path}`, { key });
    const whileActive = {
      metrics: (await get('metrics')).text,
      catalog: (await get('catalog')).text,
      cohorts: (await get('cohorts')).text,
      customers: (await get('customers?month=2025-06')).text,
    };
    const second = await postCsv(svc, key, ds, book(SECOND));
    expect(second.status, second.text).to.equal(201);
    return { key, ds, v1: first.json.id as string, v2: second.json.id as string, whileActive, get };
  }

  it('when migration 020 fills in the versions built before it, then each version that was active gets its activation time and the version it replaced, as activation records them; a failed one gets neither', async () => {
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key);
    const other = await newDataset(svc, key);
    const v1 = await postCsv(svc, key, ds, book(FIRST));
    const mine = await postCsv(svc, key, other, book(FIRST)); // another dataset's: never "replaced" across datasets
    const failed = await postCsv(svc, key, ds, `${HEADER}\nc1,,Pro,2025-01-01,2025-12-31,1,EUR\n`);
    const v2 = await postCsv(svc, key, ds, book(SECOND));
    const v3 = await postCsv(svc, key, ds, book(FIRST));
    expect([v1.status, mine.status, failed.status, v2.status, v3.status]).to.deep.equal([201, 201, 422, 201, 201]);
    const ids = [v1.json.id, mine.json.id, failed.json.versionId, v2.json.id, v3.json.id];
    const read = async () =>
      (await svc.db.query<{ id: string; activated_at: Date | null; replaced_version_id: string | null }>(
        'SELECT id, activated_at, replaced_version_id FROM versions WHERE id = ANY ($1) ORDER BY seq',
        [ids],
      )).rows;
    const recorded = await read();
    expect(recorded.map((r) => r.replaced_version_id)).to.deep.equal([null, null, null, v1.json.id, v2.json.id]);
    // As before 020, then its backfill statement, as the file has it.
    await svc.db.query('UPDATE versions SET activated_at = NULL, replaced_version_id = NULL WHERE id = ANY ($1)', [ids]);
    const migration = await readFile(new URL('../sql/020_version_changes.sql', import.meta.url), 'utf8');
    const backfill = /^UPDATE versions v SET activated_at[\s\S]*?;$/m.exec(migration)![0];
    await svc.db.query(backfill);
    const filled = await read();
    expect(filled.map((r) => r.replaced_version_id)).to.deep.equal(recorded.map((r) => r.replaced_version_id));
    filled.forEach((r, i) => {
      const was = recorded[i]!.activated_at;
      if (was === null) return expect(r.activated_at, r.id).to.equal(null);
      // Activation sets completed_at and activated_at with two calls of clock_timestamp(): microseconds apart.
      expect(Math.abs(r.activated_at!.getTime() - was.getTime()), r.id).to.be.below(50);
    });
  });

  it('when a book is uploaded again corrected, then its changes count contracts added, removed, changed and unchanged, and list the restated months as the metrics of both versions show them', async () => {
    const { ds, v1, v2, get } = await twoUploads();
    expect((await get(`versions/${v1}`)).json.replacedVersionId).to.equal(null);
    expect((await get(`versions/${v2}`)).json.replacedVersionId).to.equal(v1);

    const changes = await get(`versions/${v2}/changes`);
    expect(changes.status, changes.text).to.equal(200);
    expect(changes.json).to.include({ object: 'version_changes', datasetId: ds, versionId: v2, sinceVersionId: v1 });
    expect(changes.json.contracts).to.deep.equal({ added: 3, removed: 3, changed: 3, unchanged: 3 });

    const before = (await get(`metrics?versionId=${v1}`)).json.monthly;
    const after = (await get('metrics')).json.monthly;
    expect(changes.json.months).to.deep.equal(restatedFromMetrics(before, after));
    // c2's correction: 200.00 a month more from January; c6 keeps EUR going past its old churn month (missing there: 0).
    expect(changes.json.months).to.deep.include({ month: '2025-01', currency: 'EUR', before: { mrr: '300.00', activeCustomers: 2 }, after: { mrr: '400.00', activeCustomers: 2 }, mrrChange: '100.00' });
    expect(changes.json.months.find((m: MonthEnd) => m.currency === 'EUR' && m.month === '2026-05').before).to.deep.equal({ mrr: '0.00', activeCustomers: 0 });
    expect(changes.json.months.map((m: MonthEnd) => m.currency)).to.deep.equal([...changes.json.months.map((m: MonthEnd) => m.currency)].sort());

    // The other way round: what was added is removed.
    const back = await get(`versions/${v1}/changes?since=${v2}`);
    expect(back.json.contracts).to.deep.equal({ added: 3, removed: 3, changed: 3, unchanged: 3 });
    expect(back.json.months.map((m: { mrrChange: string }) => m.mrrChange)).to.deep.equal(changes.json.months.map((m: { mrrChange: string }) => (Number(m.mrrChange) === 0 ? m.mrrChange : (-Number(m.mrrChange)).toFixed(2))));
    // A version compared with itself: nothing changed.
    expect((await get(`versions/${v2}/changes?since=${v2}`)).json).to.deep.include({ contracts: { added: 0, removed: 0, changed: 0, unchanged: 9 }, months: [] });
  });

  it('when the contract changes are listed, then each has its rows before and after as exported and the columns that differ, by contractId as bytes with rows without one last; pages, the change filter and the CSV agree', async () => {
    const { v1, v2, get, key, ds } = await twoUploads();
    const all = await get(`versions/${v2}/changes/contracts?limit=100`);
    expect(all.status, all.text).to.equal(200);
    expect(all.json).to.deep.equal({ object: 'list', data: EXPECTED_CHANGES, nextCursor: null });

    const paged: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page = await get(`versions/${v2}/changes/contracts?since=${v1}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.json.data.length).to.be.at.most(2);
      paged.push(...page.json.data);
      cursor = page.json.nextCursor;
    } while (cursor);
    expect(paged).to.deep.equal(EXPECTED_CHANGES);
    const changed = await get(`versions/${v2}/changes/contracts?change=changed`);
    expect(changed.json.data.map((c: { contractId: string }) => c.contractId)).to.deep.equal(['c2', 'c3', 'c5']);

    const csv = await svc.request(`/v1/datasets/${ds}/versions/${v2}/changes/contracts`, { key, headers: { accept: 'text/csv' } });
    expect(csv.status).to.equal(200);
    expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
    const records = csvParse(csv.text, ',') as string[][];
    expect(records[0]).to.deep.equal(['change', 'fields', ...ALL]);
    expect(records.slice(1)).to.deep.equal(EXPECTED_CHANGES.map((c) => [c.change, c.fields.join(';'), ...ALL.map((f) => (c.after ?? c.before)![f] ?? '')]));
    expect(csv.text).to.include('changed,amount,c2,Beta,Pro,2025-01-01,2025-12-31,3600.00,EUR\r\n');
    const removedCsv = await svc.request(`/v1/datasets/${ds}/versions/${v2}/changes/contracts?change=removed`, { key, headers: { accept: 'text/csv' } });
    expect((csvParse(removedCsv.text, ',') as string[][]).slice(1).map((r) => r[2])).to.deep.equal(['c4', '', '']);

    for (const bad of ['cursor=abc', 'cursor=0', 'change=modified']) {
      const reply = await get(`versions/${v2}/changes/contracts?${bad}`);
      expect(reply.status, bad).to.equal(400);
      expect(reply.json.type).to.match(/\/bad-request$/);
    }
  });

  it('when several first requests for a pair come at once, then they all get the same answer and the pair is computed once', async () => {
    const { v1, v2, get } = await twoUploads();
    const replies = await Promise.all([1, 2, 3, 4].map(() => get(`versions/${v1}/changes?since=${v2}`)));
    expect(replies.map((r) => r.status)).to.deep.equal([200, 200, 200, 200]);
    expect(new Set(replies.map((r) => r.text)).size).to.equal(1);
    const kept = await svc.db.query('SELECT count(*)::int AS n FROM version_changes WHERE version_id = $1 AND since_version_id = $2', [v1, v2]);
    expect(kept.rows[0].n).to.equal(1);
  });

  it('when a version never became active, is of another dataset, or replaced none, then its figures and changes answer 404', async () => {
    const { key, ds, v1, v2, get } = await twoUploads();
    const failed = await postCsv(svc, key, ds, `${HEADER}\nx1,Kim,Pro,2025-02-30,2025-12-31,10.00,EUR\n`);
    expect(failed.status).to.equal(422);
    const f = failed.json.versionId as string;
    expect((await get(`versions/${f}`)).json.replacedVersionId).to.equal(null);
    const other = await newDataset(svc, key);
    const elsewhere = (await postCsv(svc, key, other, book(FIRST))).json.id as string;

    const notFound = [
      `versions/${v1}/changes`, // the first version replaced none
      `versions/${v1}/changes/contracts`,
      `versions/${v2}/changes?since=${f}`,
      `versions/${f}/changes?since=${v1}`,
      `versions/${v2}/changes?since=${elsewhere}`,
      `versions/${v2}/changes/contracts?since=ver_nothing`,
      `versions/${elsewhere}/changes?since=${v1}`,
      ...['metrics', 'catalog', 'cohorts', 'customers?month=2025-06&'].flatMap((read) => {
        const sep = read.includes('?') ? '' : '?';
        return [`${read}${sep}versionId=${f}`, `${read}${sep}versionId=${elsewhere}`, `${read}${sep}versionId=ver_nothing`];
      }),
    ];
    for (const path of notFound) {
      const reply = await get(path);
      expect(reply.status, path).to.equal(404);
      expect(reply.json.type, path).to.match(/\/not-found$/);
    }
  });

  it('when a version was superseded, then ?versionId= reads what its reads answered while it was active; after its rows are purged, metrics, catalog and cohorts still do, and its customers and changes answer 404', async () => {
    const { v1, v2, whileActive, get } = await twoUploads();
    const read = async () => ({
      metrics: (await get(`metrics?versionId=${v1}`)).text,
      catalog: (await get(`catalog?versionId=${v1}`)).text,
      cohorts: (await get(`cohorts?versionId=${v1}`)).text,
      customers: (await get(`customers?month=2025-06&versionId=${v1}`)).text,
    });
    expect(await read()).to.deep.equal(whileActive);
    expect(JSON.parse(whileActive.metrics).versionId).to.equal(v1);
    expect(JSON.parse((await get(`metrics?versionId=${v2}`)).text)).to.deep.equal(JSON.parse((await get('metrics')).text));
    expect((await get(`versions/${v2}/changes`)).status).to.equal(200);

    await svc.db.query(`UPDATE versions SET superseded_at = now() - interval '31 days' WHERE id = $1`, [v1]);
    const run = await purgeVersionsPastRetention(svc.db, svc.blobs, 30);
    expect(run.versions).to.be.at.least(1);
    expect((await get(`versions/${v1}`)).json.rowsPurgedAt).to.be.a('string');

    const after = await read();
    expect({ ...after, customers: undefined }).to.deep.equal({ ...whileActive, customers: undefined });
    for (const path of [`customers?month=2025-06&versionId=${v1}`, `versions/${v2}/changes`, `versions/${v2}/changes/contracts`, `versions/${v1}/changes?since=${v2}`]) {
      const reply = await get(path);
      expect(reply.status, path).to.equal(404);
      expect(reply.json.type).to.match(/\/not-found$/);
      expect(reply.json.detail, path).to.include('its rows were purged');
    }
    const kept = await svc.db.query('SELECT count(*)::int AS n FROM version_changes WHERE version_id = $1 OR since_version_id = $1', [v1]);
    expect(kept.rows[0].n).to.equal(0);
    // The active version's own reads are untouched.
    expect((await get('customers?month=2025-06')).status).to.equal(200);
  });
});
