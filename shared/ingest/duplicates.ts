// The contract's unique field (contractId: see shared/contract/fields.ts) holds one value once
// within a file: the later of two rows with one value gets `duplicate`. Checked in SQL over the
// rows the build has COPYed (in its transaction), so memory stays flat.
import { CONTRACT_FIELDS, type RowError } from '../contract/fields.ts';
import type { Queryable } from '../platform/db.ts';

const UNIQUE = CONTRACT_FIELDS.find((f) => f.unique === true)!;
const { column, name } = UNIQUE;

/** Reports every later row of a repeated value; returns the number of distinct values. */
export async function findDuplicates(db: Queryable, versionId: string, report: (error: RowError) => void): Promise<number> {
  // One pass answers both: most files have no duplicate, and the catalog needs the distinct count.
  const { rows: counts } = await db.query<{ distinct_ids: number; repeated: number }>(
    `SELECT count(*) AS distinct_ids, count(*) FILTER (WHERE n > 1) AS repeated
     FROM (SELECT ${column}, count(*) AS n FROM contract_rows WHERE version_id = $1 AND ${column} IS NOT NULL GROUP BY ${column}) g`,
    [versionId],
  );
  const { distinct_ids: distinctIds, repeated } = counts[0]!;
  if (repeated === 0) return distinctIds;
  const { rows } = await db.query<{ row_number: number; value: string; first: number }>(
    `SELECT row_number, value, first FROM (
       SELECT row_number, ${column} AS value, min(row_number) OVER (PARTITION BY ${column}) AS first
       FROM contract_rows WHERE version_id = $1 AND ${column} IS NOT NULL) x
     WHERE row_number > first ORDER BY row_number`,
    [versionId],
  );
  for (const r of rows) {
    report({
      row: Number(r.row_number),
      field: name,
      code: 'duplicate',
      message: `${name} ${JSON.stringify(r.value)} already appears in row ${r.first}.`,
    });
  }
  return distinctIds;
}
