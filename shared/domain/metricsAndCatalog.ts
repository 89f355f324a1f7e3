// Metrics and catalog (../shared/spec/contract.md, "Metrics and catalog" and its fine points): the
// rows, currencies and catalog, counted by the tally as the rows stream (or computed here in SQL
// when it could not), stored with the version and read back; the monthly figures are
// monthlyFigures.ts's.
import { CONTRACT_FIELDS, type ContractField, FIELD_KINDS, GATING_FIELDS } from '../contract/fields.ts';
import type { Queryable } from '../platform/db.ts';
import { FIELD_COLUMNS, fieldText } from './contractRows.ts';
import type { Tenant } from './datasets.ts';
import type { TallyResult } from '../ingest/tally.ts';
import { readMonthly } from './monthlyFigures.ts';

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
 * Computes and stores the version's rows, currencies and catalog in SQL (when the tally could not
 * count them). The monthly figures are monthlyFigures.ts's.
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
  await db.query('INSERT INTO version_reads (version_id, rows, currencies, catalog) VALUES ($1, $2, $3, $4)', [
    versionId,
    JSON.stringify(reads.rows),
    JSON.stringify(reads.currencies),
    JSON.stringify(reads.catalog),
  ]);
  return { rowCount: reads.rows.total, contributing: reads.rows.contributing };
}

/** Versions whose figures a read serves: the one named ($4) if it became active, else the active one. */
const READABLE_VERSION = `JOIN versions v ON v.dataset_id = d.id AND v.id = coalesce($4, d.active_version_id) AND v.activated_at IS NOT NULL
     JOIN version_reads r ON r.version_id = v.id`;

/**
 * The rows, currencies and monthly series of the version named (one that became active) or of the
 * active one; undefined when there is none such (missing dataset, none active: the same 404).
 */
export async function readMetrics(
  db: Queryable,
  tenant: Tenant,
  datasetId: string,
  range: { from?: string | undefined; to?: string | undefined },
  versionId?: string | undefined,
) {
  const { rows } = await db.query<{ id: string; version_id: string; rows: unknown; currencies: unknown }>(
    `SELECT d.id, v.id AS version_id, r.rows, r.currencies
     FROM datasets d ${READABLE_VERSION}
     WHERE d.id = $1 AND d.account_id = $2 AND d.mode = $3 AND d.deleted_at IS NULL`,
    [datasetId, tenant.accountId, tenant.mode, versionId ?? null],
  );
  const found = rows[0];
  if (!found) return undefined;
  const monthly = await readMonthly(db, found.version_id, range);
  return { object: 'metrics', datasetId: found.id, versionId: found.version_id, rows: found.rows, currencies: found.currencies, monthly };
}

/** The catalog of the version named (one that became active) or of the active one; undefined as readMetrics. */
export async function readCatalog(db: Queryable, tenant: Tenant, datasetId: string, versionId?: string | undefined) {
  const { rows } = await db.query<{ doc: unknown }>(
    `SELECT json_build_object('object', 'catalog', 'datasetId', d.id, 'versionId', v.id,
       'rowCount', r.catalog->'rowCount', 'fields', r.catalog->'fields', 'products', r.catalog->'products') AS doc
     FROM datasets d ${READABLE_VERSION}
     WHERE d.id = $1 AND d.account_id = $2 AND d.mode = $3 AND d.deleted_at IS NULL`,
    [datasetId, tenant.accountId, tenant.mode, versionId ?? null],
  );
  return rows[0]?.doc;
}

/** How many of a version's stored rows have no contractId (from its catalog: its rows less those with one); undefined without a catalog. */
export async function rowsWithoutContractId(db: Queryable, versionId: string): Promise<number | undefined> {
  const { rows } = await db.query<{ n: string | null }>(
    `SELECT (r.catalog->>'rowCount')::bigint - (SELECT (f->>'present')::bigint FROM json_array_elements(r.catalog->'fields') f WHERE f->>'name' = 'contractId') AS n
     FROM version_reads r WHERE r.version_id = $1`,
    [versionId],
  );
  return rows[0]?.n == null ? undefined : Number(rows[0].n);
}
