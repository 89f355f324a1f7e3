// Metrics and catalog (../shared/spec/contract.md, "Metrics and catalog" and its fine points):
// computed in SQL inside the build's transaction, stored with the version, and each read back
// with one query.
import { CONTRACT_FIELDS, type ContractField, FIELD_KINDS, GATING_FIELDS } from '../contract/fields.ts';
import type { Queryable } from '../platform/db.ts';
import { FIELD_COLUMNS, fieldText } from './contractRows.ts';
import type { Tenant } from './datasets.ts';
import type { TallyResult } from '../ingest/tally.ts';

/** A gating field's value that keeps a row out of the metrics: absent, or zero where that counts as absent. */
const excludes = (f: ContractField) => (f.zeroExcludes ? `${f.column} IS NULL OR ${f.column} = 0` : `${f.column} IS NULL`);
/** Rows that contribute to the metrics: every gating field present (and an amount above zero). */
const CONTRIBUTING = GATING_FIELDS.map((f) => (f.zeroExcludes ? `${f.column} > 0` : `${f.column} IS NOT NULL`)).join(' AND ');
/** Per gating field, the rows it keeps out of the metrics (a row may count under several). */
const EXCLUDED = `json_build_object(${GATING_FIELDS.map((f) => `'${f.name}', count(*) FILTER (WHERE ${excludes(f)})`).join(', ')})`;

/**
 * A field of the catalog over build_rows. The unique field's distinct count is known from the
 * duplicate check ($2); min and max for the kinds that have them.
 */
function catalogField(f: ContractField): string {
  const c = f.column;
  const distinct = f.unique ? '$2::bigint' : `(SELECT count(*) FROM (SELECT DISTINCT ${c} FROM build_rows WHERE ${c} IS NOT NULL) d)`;
  const minMax = FIELD_KINDS[f.kind].minMax;
  return `json_build_object('name', '${f.name}', 'type', '${f.kind}', 'gating', ${f.gating}, 'present', count(${c}), 'distinct', ${distinct},
           'min', ${minMax ? fieldText(f, `min(${c})`) : 'null'}, 'max', ${minMax ? fieldText(f, `max(${c})`) : 'null'})`;
}
const CATALOG_FIELDS = `json_build_array(
         ${CONTRACT_FIELDS.map(catalogField).join(',\n         ')}
       )`;

/**
 * Computes and stores the version's reads. Monthly figures use difference arrays over month
 * intervals (an event where a contract or a customer's run of months starts and one after it
 * ends), so the cost grows with the rows, not with rows times months.
 */
export async function computeReads(
  db: Queryable,
  versionId: string,
  known: { distinctContractIds: number },
): Promise<{ rowCount: number; contributing: number }> {
  await db.query(
    `CREATE TEMP TABLE build_rows ON COMMIT DROP AS
     SELECT ${FIELD_COLUMNS} FROM contract_rows WHERE version_id = $1`,
    [versionId],
  );
  await db.query('ANALYZE build_rows');

  await db.query(
    `WITH c AS (
       SELECT customer, currency,
              (date_part('year', start_date) * 12 + date_part('month', start_date) - 1)::int AS sm,
              (date_part('year', end_date) * 12 + date_part('month', end_date) - 1)::int AS em,
              -- amount ÷ (days ÷ (365.25 / 12)), written with one division so that exact values stay exact
              amount * 30.4375 / (end_date - start_date + 1) AS monthly
       FROM build_rows WHERE ${CONTRIBUTING}
     ),
     bounds AS (SELECT currency, min(sm) AS lo, least(max(em) + 1, min(sm) + 599) AS hi FROM c GROUP BY currency),
     contract_events AS (
       SELECT currency, m, sum(dc) AS dc, sum(dv) AS dv FROM (
         SELECT currency, sm AS m, 1 AS dc, monthly AS dv FROM c
         UNION ALL SELECT currency, em + 1, -1, -monthly FROM c
       ) e GROUP BY currency, m
     ),
     -- Each customer's active months in a currency as disjoint runs: range_agg unions the
     -- contracts' month ranges, merging overlapping and adjacent ones.
     runs AS (
       SELECT currency, customer, lower(r) AS sm, upper(r) - 1 AS em
       FROM (SELECT currency, customer, unnest(range_agg(int4range(sm, em, '[]'))) AS r FROM c GROUP BY currency, customer) x
     ),
     customer_events AS (
       SELECT currency, m, sum(dc) AS dc, sum(churn) AS churned FROM (
         SELECT currency, sm AS m, 1 AS dc, 0 AS churn FROM runs
         UNION ALL SELECT currency, em + 1, -1, 1 FROM runs
       ) e GROUP BY currency, m
     ),
     firsts AS (SELECT currency, m, count(*) AS n FROM (SELECT currency, min(sm) AS m FROM runs GROUP BY currency, customer) f GROUP BY currency, m),
     series AS (SELECT b.currency, gs.m FROM bounds b, generate_series(b.lo, b.hi) AS gs(m))
     INSERT INTO version_monthly (version_id, currency, month, active_contracts, active_customers, mrr, new_customers, churned_customers)
     SELECT $1, s.currency, make_date(s.m / 12, s.m % 12 + 1, 1),
            sum(coalesce(ce.dc, 0)) OVER w, sum(coalesce(cu.dc, 0)) OVER w, sum(coalesce(ce.dv, 0)) OVER w,
            coalesce(f.n, 0), coalesce(cu.churned, 0)
     FROM series s
     LEFT JOIN contract_events ce ON ce.currency = s.currency AND ce.m = s.m
     LEFT JOIN customer_events cu ON cu.currency = s.currency AND cu.m = s.m
     LEFT JOIN firsts f ON f.currency = s.currency AND f.m = s.m
     WINDOW w AS (PARTITION BY s.currency ORDER BY s.m)`,
    [versionId],
  );

  const { rows } = await db.query<{ total: number; contributing: number }>(
    `WITH summary AS (
       SELECT count(*) AS total,
              count(*) FILTER (WHERE ${CONTRIBUTING}) AS contributing,
              ${EXCLUDED} AS excluded
       FROM build_rows
     ),
     currencies AS (
       SELECT coalesce(json_agg(json_build_object('currency', currency, 'contracts', contracts, 'customers', customers,
                'totalValue', total_value::numeric(30, 2)::text) ORDER BY currency), '[]'::json) AS doc
       FROM (SELECT currency, sum(n) AS contracts, count(*) AS customers, sum(total) AS total_value
             FROM (SELECT currency, customer, count(*) AS n, sum(amount) AS total FROM build_rows WHERE ${CONTRIBUTING} GROUP BY currency, customer) per_customer
             GROUP BY currency) x
     ),
     fields AS (
       SELECT ${CATALOG_FIELDS} AS doc
       FROM build_rows
     ),
     products AS (
       SELECT coalesce(json_agg(json_build_object('product', product, 'contracts', contracts, 'customers', customers) ORDER BY product), '[]'::json) AS doc
       FROM (SELECT product, sum(n) AS contracts, count(*) AS customers
             FROM (SELECT product, customer, count(*) AS n FROM build_rows WHERE product IS NOT NULL GROUP BY product, customer) per_customer
             GROUP BY product) p
     )
     INSERT INTO version_reads (version_id, rows, currencies, catalog)
     SELECT $1,
            json_build_object('total', total, 'contributing', contributing, 'excluded', excluded),
            currencies.doc,
            json_build_object('rowCount', total, 'fields', fields.doc, 'products', products.doc)
     FROM summary, currencies, fields, products
     RETURNING (rows->>'total')::bigint AS total, (rows->>'contributing')::bigint AS contributing`,
    [versionId, known.distinctContractIds],
  );
  return { rowCount: rows[0]!.total, contributing: rows[0]!.contributing };
}

/**
 * Stores the reads the build tallied in Node as the rows streamed (shared/ingest/tally.ts): the
 * same documents computeReads makes in SQL, without reading the rows back.
 */
export async function storeReads(db: Queryable, versionId: string, reads: TallyResult): Promise<{ rowCount: number; contributing: number }> {
  const m = reads.monthly;
  await db.query(
    `INSERT INTO version_monthly (version_id, currency, month, active_contracts, active_customers, mrr, new_customers, churned_customers)
     SELECT $1, * FROM unnest($2::text[], $3::date[], $4::bigint[], $5::bigint[], $6::numeric[], $7::bigint[], $8::bigint[])`,
    [versionId, m.currency, m.month, m.contracts, m.customers, m.mrr, m.newCustomers, m.churned],
  );
  await db.query('INSERT INTO version_reads (version_id, rows, currencies, catalog) VALUES ($1, $2, $3, $4)', [
    versionId,
    JSON.stringify(reads.rows),
    JSON.stringify(reads.currencies),
    JSON.stringify(reads.catalog),
  ]);
  return { rowCount: reads.rows.total, contributing: reads.rows.contributing };
}

const monthStart = (month: string | undefined) => (month ? `${month}-01` : null);

/** The active version's metrics, or undefined (missing dataset, or none active: the same 404). */
export async function readMetrics(db: Queryable, tenant: Tenant, datasetId: string, range: { from?: string | undefined; to?: string | undefined }) {
  const { rows } = await db.query<{ doc: unknown }>(
    `SELECT json_build_object(
       'object', 'metrics', 'datasetId', d.id, 'versionId', d.active_version_id,
       'rows', r.rows, 'currencies', r.currencies,
       'monthly', coalesce((
         SELECT json_agg(json_build_object('month', to_char(m.month, 'YYYY-MM'), 'currency', m.currency,
                  'activeContracts', m.active_contracts, 'activeCustomers', m.active_customers,
                  'mrr', round(m.mrr, 2)::numeric(30, 2)::text, 'newCustomers', m.new_customers,
                  'churnedCustomers', m.churned_customers) ORDER BY m.month, m.currency)
         FROM version_monthly m
         WHERE m.version_id = d.active_version_id
           AND ($4::date IS NULL OR m.month >= $4) AND ($5::date IS NULL OR m.month <= $5)), '[]'::json)) AS doc
     FROM datasets d JOIN version_reads r ON r.version_id = d.active_version_id
     WHERE d.id = $1 AND d.account_id = $2 AND d.mode = $3 AND d.deleted_at IS NULL`,
    [datasetId, tenant.accountId, tenant.mode, monthStart(range.from), monthStart(range.to)],
  );
  return rows[0]?.doc;
}

export async function readCatalog(db: Queryable, tenant: Tenant, datasetId: string) {
  const { rows } = await db.query<{ doc: unknown }>(
    `SELECT json_build_object('object', 'catalog', 'datasetId', d.id, 'versionId', d.active_version_id,
       'rowCount', r.catalog->'rowCount', 'fields', r.catalog->'fields', 'products', r.catalog->'products') AS doc
     FROM datasets d JOIN version_reads r ON r.version_id = d.active_version_id
     WHERE d.id = $1 AND d.account_id = $2 AND d.mode = $3 AND d.deleted_at IS NULL`,
    [datasetId, tenant.accountId, tenant.mode],
  );
  return rows[0]?.doc;
}

/** Deletes a purged version's metrics and catalog (only the active version's are ever served). */
export async function deleteReadsOfVersion(db: Queryable, versionId: string): Promise<void> {
  await db.query('DELETE FROM version_monthly WHERE version_id = $1', [versionId]);
  await db.query('DELETE FROM version_reads WHERE version_id = $1', [versionId]);
}
