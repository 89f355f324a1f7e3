// contractId must be unique within a file: the later of two rows with one id gets `duplicate`.
// Checked in SQL over the rows the build has COPYed (in its transaction), so memory stays flat.
import type { Queryable } from '../platform/db.ts';
import type { RowError } from './rowValidator.ts';

/** Reports every later row of a repeated contractId; returns the number of distinct contractIds. */
export async function findDuplicates(db: Queryable, versionId: string, report: (error: RowError) => void): Promise<number> {
  // One pass answers both: most files have no duplicate, and the catalog needs the distinct count.
  const { rows: counts } = await db.query<{ distinct_ids: number; repeated: number }>(
    `SELECT count(*) AS distinct_ids, count(*) FILTER (WHERE n > 1) AS repeated
     FROM (SELECT contract_id, count(*) AS n FROM contract_rows WHERE version_id = $1 AND contract_id IS NOT NULL GROUP BY contract_id) g`,
    [versionId],
  );
  const { distinct_ids: distinctIds, repeated } = counts[0]!;
  if (repeated === 0) return distinctIds;
  const { rows } = await db.query<{ row_number: number; contract_id: string; first: number }>(
    `SELECT row_number, contract_id, first FROM (
       SELECT row_number, contract_id, min(row_number) OVER (PARTITION BY contract_id) AS first
       FROM contract_rows WHERE version_id = $1 AND contract_id IS NOT NULL) x
     WHERE row_number > first ORDER BY row_number`,
    [versionId],
  );
  for (const r of rows) {
    report({
      row: Number(r.row_number),
      field: 'contractId',
      code: 'duplicate',
      message: `contractId ${JSON.stringify(r.contract_id)} already appears in row ${r.first}.`,
    });
  }
  return distinctIds;
}
