// What changed between two versions of a dataset (../shared/spec/contract.md, "Reading and
// comparing versions"): the contracts added, removed and changed, and the restated months. A
// pair's changes are computed once, when first asked, and kept (`version_changes`,
// `version_contract_changes`: this file is their one writer); later answers and every page of the
// contract changes read what was kept.
//
// Rows are matched in SQL, within the two versions' rows (found through the BRIN index): a hash
// join on contractId, and the rows without one by their whole content as a multiset (the n-th
// copy of a content in one version matches the n-th in the other). Only what differs is written,
// so what is kept is the size of the change, not of the versions.
import { CONTRACT_FIELDS } from '../contract/fields.ts';
import { type Pool, type Queryable, withTransaction } from '../platform/db.ts';
import { rowsWithoutContractId } from './metricsAndCatalog.ts';
import { readMonthly } from './monthlyFigures.ts';
import { FIELD_COLUMNS, rowJson } from './contractRows.ts';

export const CONTRACT_CHANGES = ['added', 'removed', 'changed'] as const;
export type ContractChangeKind = (typeof CONTRACT_CHANGES)[number];

/** Two versions of a dataset: the changes of `versionId` since `sinceVersionId`. */
export type VersionPair = { versionId: string; sinceVersionId: string };

export type ContractCounts = { added: number; removed: number; changed: number; unchanged: number };
export type RestatedMonth = {
  month: string;
  currency: string;
  before: { mrr: string; activeCustomers: number };
  after: { mrr: string; activeCustomers: number };
  mrrChange: string;
};
export type ContractRowJson = Record<string, string | null>;
export type ContractChange = { change: ContractChangeKind; contractId: string | null; before: ContractRowJson | null; after: ContractRowJson | null; fields: string[] };

const FIELD_NAMES = CONTRACT_FIELDS.map((f) => f.name);
/** The fields other than contractId: a row without one is its content. */
const CONTENT_FIELDS = CONTRACT_FIELDS.filter((f) => f.name !== 'contractId');
const tuple = (alias: string) => `(${CONTENT_FIELDS.map((f) => `${alias}.${f.column}`).join(', ')})`;
const ALL_FIELDS = `ARRAY[${FIELD_NAMES.map((n) => `'${n}'`).join(', ')}]::text[]`;
/** The names of the content fields whose values differ between rows a and b, in the contract's order. */
const DIFFERING_FIELDS = `array_remove(ARRAY[${CONTENT_FIELDS.map((f) => `CASE WHEN a.${f.column} IS DISTINCT FROM b.${f.column} THEN '${f.name}' END`).join(', ')}]::text[], NULL)`;

/**
 * The changes of the rows with a contractId, numbered in the order the API lists them (by
 * contractId as bytes: the column's C collation). A hash join of the two versions' rows.
 */
const COMPUTE_CHANGES_BY_ID = `
  INSERT INTO version_contract_changes (version_id, since_version_id, seq, change, contract_id, before, after, fields)
  SELECT $1, $2, row_number() OVER (ORDER BY x.contract_id), x.change, x.contract_id, x.before, x.after, x.fields
  FROM (
    SELECT coalesce(a.contract_id, b.contract_id) AS contract_id,
           CASE WHEN b.contract_id IS NULL THEN 'added' WHEN a.contract_id IS NULL THEN 'removed' ELSE 'changed' END AS change,
           CASE WHEN b.contract_id IS NOT NULL THEN ${rowJson('b')} END AS before,
           CASE WHEN a.contract_id IS NOT NULL THEN ${rowJson('a')} END AS after,
           CASE WHEN a.contract_id IS NULL OR b.contract_id IS NULL THEN ${ALL_FIELDS} ELSE ${DIFFERING_FIELDS} END AS fields
    FROM (SELECT ${FIELD_COLUMNS} FROM contract_rows WHERE version_id = $1 AND contract_id IS NOT NULL) a
    FULL JOIN (SELECT ${FIELD_COLUMNS} FROM contract_rows WHERE version_id = $2 AND contract_id IS NOT NULL) b ON a.contract_id = b.contract_id
    WHERE a.contract_id IS NULL OR b.contract_id IS NULL OR ${tuple('a')} IS DISTINCT FROM ${tuple('b')}
  ) x`;

/**
 * The changes of the rows without a contractId, matched by their whole content as a multiset (the
 * n-th copy of a content in one version matches the n-th in the other), numbered after those with
 * one ($3 of them), by content, copy and kind.
 */
const COMPUTE_CHANGES_BY_CONTENT = `
  INSERT INTO version_contract_changes (version_id, since_version_id, seq, change, contract_id, before, after, fields)
  WITH a AS (SELECT r.*, row_number() OVER (PARTITION BY r.content ORDER BY r.row_number) AS copy
             FROM (SELECT c.*, ROW${tuple('c')}::text COLLATE "C" AS content FROM contract_rows c WHERE c.version_id = $1 AND c.contract_id IS NULL) r),
       b AS (SELECT r.*, row_number() OVER (PARTITION BY r.content ORDER BY r.row_number) AS copy
             FROM (SELECT c.*, ROW${tuple('c')}::text COLLATE "C" AS content FROM contract_rows c WHERE c.version_id = $2 AND c.contract_id IS NULL) r)
  SELECT $1, $2, $3 + row_number() OVER (ORDER BY x.content, x.copy, x.change), x.change, NULL, x.before, x.after, ${ALL_FIELDS}
  FROM (
    SELECT CASE WHEN b.content IS NULL THEN 'added' ELSE 'removed' END AS change,
           CASE WHEN b.content IS NOT NULL THEN ${rowJson('b')} END AS before,
           CASE WHEN a.content IS NOT NULL THEN ${rowJson('a')} END AS after,
           coalesce(a.content, b.content) AS content, coalesce(a.copy, b.copy) AS copy
    FROM a FULL JOIN b ON a.content = b.content AND a.copy = b.copy
    WHERE a.content IS NULL OR b.content IS NULL
  ) x`;

/**
 * Memory PostgreSQL may give the comparison's hash join before it spills to disk: a million rows
 * a side take about 130 MB (measured: 2.9 s in memory, 3.8 s in two batches with 64 MB, on a
 * loaded machine; a merge join, 13.8 s).
 */
const COMPARE_WORK_MEM = '256MB';

const cents = (money: string) => BigInt(money.replace('.', ''));
const money = (value: bigint) => {
  const sign = value < 0n ? '-' : '';
  const digits = (value < 0n ? -value : value).toString().padStart(3, '0');
  return `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`;
};

type MonthEnd = { month: string; currency: string; mrr: string; activeCustomers: number };

/**
 * The (month, currency) entries whose MRR or active customers differ between the two versions'
 * monthly figures, ordered by currency then month; a month missing from one version's series
 * counts as 0 there.
 */
async function restatedMonths(db: Queryable, pair: VersionPair): Promise<RestatedMonth[]> {
  const [after, before] = (await Promise.all([readMonthly(db, pair.versionId, {}), readMonthly(db, pair.sinceVersionId, {})])) as MonthEnd[][];
  const entries = new Map<string, { month: string; currency: string; before?: MonthEnd; after?: MonthEnd }>();
  const entry = (m: MonthEnd) => {
    const key = `${m.currency} ${m.month}`; // currencies are three letters: the key sorts by currency, then month
    let found = entries.get(key);
    if (!found) entries.set(key, (found = { month: m.month, currency: m.currency }));
    return found;
  };
  for (const m of before!) entry(m).before = m;
  for (const m of after!) entry(m).after = m;
  const figures = (m: MonthEnd | undefined) => ({ mrr: m?.mrr ?? '0.00', activeCustomers: m?.activeCustomers ?? 0 });
  const restated: RestatedMonth[] = [];
  for (const key of [...entries.keys()].sort()) {
    const e = entries.get(key)!;
    const [b, a] = [figures(e.before), figures(e.after)];
    if (cents(a.mrr) === cents(b.mrr) && a.activeCustomers === b.activeCustomers) continue;
    restated.push({ month: e.month, currency: e.currency, before: b, after: a, mrrChange: money(cents(a.mrr) - cents(b.mrr)) });
  }
  return restated;
}

/**
 * Computes and keeps the pair's changes unless they are kept already. Concurrent first requests
 * queue on the pair's lock: one computes, the others then find its result.
 */
async function keepChanges(pool: Pool, pair: VersionPair, afterRowCount: number): Promise<void> {
  await withTransaction(pool, async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('version-changes'), hashtext($1 || ' ' || $2))`, [pair.versionId, pair.sinceVersionId]);
    const kept = await client.query('SELECT 1 FROM version_changes WHERE version_id = $1 AND since_version_id = $2', [pair.versionId, pair.sinceVersionId]);
    if (kept.rowCount) return;
    // A hash join, whatever the statistics say: a version's rows were just written, and a merge join sorts both sides (5x slower).
    await client.query(`SET LOCAL work_mem = '${COMPARE_WORK_MEM}'; SET LOCAL enable_mergejoin = off`);
    const months = await restatedMonths(client, pair);
    // The summary first (the contract changes reference it), its counts filled in from them after.
    await client.query(`INSERT INTO version_changes (version_id, since_version_id, contracts, months) VALUES ($1, $2, '{}', $3)`, [
      pair.versionId,
      pair.sinceVersionId,
      JSON.stringify(months),
    ]);
    const byId = await client.query(COMPUTE_CHANGES_BY_ID, [pair.versionId, pair.sinceVersionId]);
    // Rows without a contractId are rare: their pass reads both versions again, only when one has some.
    const idless = await Promise.all([pair.versionId, pair.sinceVersionId].map((v) => rowsWithoutContractId(client, v)));
    if (idless.some((n) => n !== 0)) await client.query(COMPUTE_CHANGES_BY_CONTENT, [pair.versionId, pair.sinceVersionId, byId.rowCount ?? 0]);
    const { rows } = await client.query<{ change: ContractChangeKind; n: number }>(
      'SELECT change, count(*)::int AS n FROM version_contract_changes WHERE version_id = $1 AND since_version_id = $2 GROUP BY change',
      [pair.versionId, pair.sinceVersionId],
    );
    const count = (kind: ContractChangeKind) => rows.find((r) => r.change === kind)?.n ?? 0;
    // Every row of the newer version is added, changed or matched: the rest are unchanged.
    const contracts: ContractCounts = { added: count('added'), removed: count('removed'), changed: count('changed'), unchanged: afterRowCount - count('added') - count('changed') };
    await client.query('UPDATE version_changes SET contracts = $3 WHERE version_id = $1 AND since_version_id = $2', [pair.versionId, pair.sinceVersionId, JSON.stringify(contracts)]);
  });
}

/**
 * The pair's counts and restated months as JSON texts (kept as they are sent: a restatement of
 * every month of a large book is hundreds of entries), computed and kept the first time.
 * `afterRowCount`: the rows of versionId.
 */
export async function changesOf(pool: Pool, pair: VersionPair, afterRowCount: number): Promise<{ contracts: string; months: string }> {
  const read = () =>
    pool.query<{ contracts: string; months: string }>('SELECT contracts::text, months::text FROM version_changes WHERE version_id = $1 AND since_version_id = $2', [
      pair.versionId,
      pair.sinceVersionId,
    ]);
  let { rows } = await read();
  if (!rows[0]) {
    await keepChanges(pool, pair, afterRowCount);
    ({ rows } = await read());
  }
  return rows[0]!;
}

/** Makes sure the pair's changes are kept (computed now if they are not): before its contract changes are read. */
export async function ensureChanges(pool: Pool, pair: VersionPair, afterRowCount: number): Promise<void> {
  const kept = await pool.query('SELECT 1 FROM version_changes WHERE version_id = $1 AND since_version_id = $2', [pair.versionId, pair.sinceVersionId]);
  if (!kept.rowCount) await keepChanges(pool, pair, afterRowCount);
}

/** Where a page of contract changes goes on from: after this position in the pair's order. */
export type ChangeCursor = { seq: number };

/** A page of the pair's contract changes (computed before: changesOf), of one kind or all, after the cursor. */
export async function pageOfContractChanges(
  db: Queryable,
  pair: VersionPair,
  query: { change?: ContractChangeKind | undefined; limit: number; after?: ChangeCursor | undefined },
): Promise<{ data: ContractChange[]; next: ChangeCursor | undefined }> {
  const { rows } = await db.query<ContractChange & { seq: string; contract_id: string | null }>(
    `SELECT seq, change, contract_id, before, after, fields FROM version_contract_changes
     WHERE version_id = $1 AND since_version_id = $2 AND ($3::text IS NULL OR change = $3) AND seq > $4
     ORDER BY seq LIMIT $5`,
    [pair.versionId, pair.sinceVersionId, query.change ?? null, query.after?.seq ?? 0, query.limit + 1],
  );
  const page = rows.slice(0, query.limit);
  return {
    data: page.map((r) => ({ change: r.change, contractId: r.contract_id, before: r.before, after: r.after, fields: r.fields })),
    next: rows.length > query.limit ? { seq: Number(page.at(-1)!.seq) } : undefined,
  };
}

/** Contract changes read per query when they are all written out (the CSV). */
const CHANGES_PER_PAGE = 2_000;

/** Every contract change of the pair (of one kind, or all), a page at a time, each page read with a query of its own. */
export async function* allContractChanges(db: Queryable, pair: VersionPair, change: ContractChangeKind | undefined): AsyncGenerator<ContractChange[]> {
  let after: ChangeCursor | undefined;
  do {
    const page = await pageOfContractChanges(db, pair, { change, limit: CHANGES_PER_PAGE, after });
    if (page.data.length > 0) yield page.data;
    after = page.next;
  } while (after);
}

/** Forgets the changes of and since a version whose rows were purged (they answer 404 from then on). */
export async function deleteChangesOfVersion(db: Queryable, versionId: string): Promise<void> {
  await db.query('DELETE FROM version_changes WHERE version_id = $1 OR since_version_id = $1', [versionId]);
}
