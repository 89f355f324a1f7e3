// What a version recognised in its file's header, and the warnings that follow
// (../shared/spec/contract.md, "Metrics and catalog": "What a version recognised"). Warnings are
// not errors: the version builds as the spec says; they tell why its metrics may be empty.
import { CONTRACT_FIELDS, GATING_FIELDS } from './fields.ts';

/** The contract's names found in the header, the header's other cells as written, the contract's columns absent. */
export type RecognisedColumns = { recognized: string[]; ignored: string[]; missing: string[] };

export type VersionWarning = { code: 'column_missing'; field: string; message: string } | { code: 'no_contributing_rows'; message: string };

/** The header's cells, sorted into the contract's columns (names match case-insensitively after trimming) and the rest. */
export function recogniseColumns(header: readonly string[]): RecognisedColumns {
  const names = header.map((h) => h.trim().toLowerCase());
  const found = CONTRACT_FIELDS.map((f) => names.indexOf(f.name.toLowerCase()));
  const used = new Set(found.filter((i) => i >= 0));
  return {
    recognized: CONTRACT_FIELDS.filter((_, i) => found[i]! >= 0).map((f) => f.name),
    ignored: header.filter((_, i) => !used.has(i)),
    missing: CONTRACT_FIELDS.filter((_, i) => found[i]! < 0).map((f) => f.name),
  };
}

/** The warnings of a version: each gating column absent, and rows stored of which none contributes. */
export function versionWarnings(columns: RecognisedColumns | null, counts?: { rowCount: number; contributing: number }): VersionWarning[] {
  const warnings: VersionWarning[] = [];
  for (const f of GATING_FIELDS) {
    if (columns?.missing.includes(f.name)) {
      warnings.push({ code: 'column_missing', field: f.name, message: `The header has no ${f.name} column, so no row can contribute to the metrics (columns ignored: ${columns.ignored.join(', ') || 'none'}).` });
    }
  }
  if (counts && counts.rowCount > 0 && counts.contributing === 0) {
    const gates = GATING_FIELDS.map((f) => f.name).join(', ');
    warnings.push({ code: 'no_contributing_rows', message: `None of the ${counts.rowCount} rows contributes to the metrics: a row contributes when it has ${gates} and an amount above 0.` });
  }
  return warnings;
}
