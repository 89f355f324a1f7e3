// Row errors of a build, written to version_errors in batches as they are found, so memory stays
// bounded however many rows are bad. Written outside the build's transaction (which rolls back).
import type { Queryable } from '../db.ts';
import type { RowError } from './contractRow.ts';

// Small batches: a batch of 1000 lived long enough (100,000 rows of a 1%-bad file) to be promoted
// out of V8's young generation, and 100,000 errors grew a worker's heap by ~20-40 MiB at 10M rows.
const BATCH = 100;

export class ErrorSpill {
  private batch: RowError[] = [];
  private writing: Promise<void> = Promise.resolve();
  private seq = 0;
  count = 0;
  private readonly db: Queryable;
  private readonly versionId: string;

  constructor(db: Queryable, versionId: string) {
    this.db = db;
    this.versionId = versionId;
  }

  add(error: RowError): void {
    this.count++;
    this.batch.push(error);
    if (this.batch.length >= BATCH) this.write();
  }

  /** Waits for everything reported so far to be written; rethrows a failed write. */
  async flush(): Promise<void> {
    this.write();
    await this.writing;
  }

  private write(): void {
    if (this.batch.length === 0) return;
    const errors = this.batch;
    this.batch = [];
    const first = this.seq;
    this.seq += errors.length;
    this.writing = this.writing.then(() =>
      this.db
        .query(
          `INSERT INTO version_errors (version_id, seq, row_number, field, code, message)
           SELECT $1, $2 + n - 1, r, f, c, m FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS u(r, f, c, m, n)`,
          [this.versionId, first, errors.map((e) => e.row), errors.map((e) => e.field), errors.map((e) => e.code), errors.map((e) => e.message)],
        )
        .then(() => {}),
    );
  }
}
