// Which version a read serves (../shared/spec/contract.md, "Reading and comparing versions"): the
// active one, or the one `?versionId=` names if it became active (now active or superseded); and
// the 404s when there is none such, or when a read needs rows that were purged.
import { z } from 'zod';
import { findReadableVersion, type VersionRecord } from '../../../shared/domain/versions.ts';
import type { Tenant } from '../../../shared/domain/datasets.ts';
import type { Queryable } from '../../../shared/platform/db.ts';
import { Problem } from '../../../shared/platform/problems.ts';

export const VersionIdQuery = z
  .string()
  .min(1)
  .max(100)
  .optional()
  .meta({
    description: 'A version of the dataset that became active (active or superseded): its figures exactly as they were while it was active. Default: the active version.',
    example: 'ver_1q2w3e4r5t6y7u8i9o0p',
  });

export const nothingServable = () =>
  new Problem('not-found', 'Nothing to serve: the dataset does not exist or has no active version. GET the dataset to tell which.');

export const noSuchReadableVersion = (versionId: string) =>
  new Problem(
    'not-found',
    `Nothing to serve: the dataset does not exist, or ${JSON.stringify(versionId)} is not one of its versions that became active (active or superseded). List the dataset's versions to tell which.`,
  );

/** The version a read serves: the one named (if it became active), else the active one; the spec's 404 when there is none. */
export async function readableVersion(db: Queryable, tenant: Tenant, datasetId: string, versionId: string | undefined): Promise<VersionRecord> {
  const version = await findReadableVersion(db, tenant, datasetId, versionId);
  if (!version) throw versionId === undefined ? nothingServable() : noSuchReadableVersion(versionId);
  return version;
}

/** The 404 of a read that needs a version's rows (its customers, its changes) once they were purged. */
export function rowsPurged(version: VersionRecord, what: string): Problem {
  return new Problem(
    'not-found',
    `Version ${version.id}: its rows were purged at ${version.rowsPurgedAt!.toISOString()} (VERSION_RETENTION_DAYS after it was superseded), so ${what} cannot be read; its metrics, catalog and cohorts still can (?versionId=).`,
  );
}
