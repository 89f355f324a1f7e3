-- Reading and comparing versions (../shared/spec/contract.md, "Reading and comparing versions").

-- When a version became active (null for one that never did), and the version active then, which
-- it replaced (null for the first). Only activateVersion (shared/domain/versions.ts) sets them.
ALTER TABLE versions ADD COLUMN activated_at timestamptz;
ALTER TABLE versions ADD COLUMN replaced_version_id text REFERENCES versions (id) ON DELETE SET NULL;

-- Existing versions: a version became active exactly when its activation stored its row count
-- (a build that ends superseded or failed never sets it). Versions activate in creation order,
-- so the one a version replaced is the dataset's version activated just before it.
UPDATE versions v SET activated_at = v.completed_at, replaced_version_id = b.replaced
FROM (SELECT id, lag(id) OVER (PARTITION BY dataset_id ORDER BY seq) AS replaced
      FROM versions WHERE status IN ('active', 'superseded') AND row_count IS NOT NULL) b
WHERE v.id = b.id;

-- A version's changes since another, computed when first asked and kept (shared/domain/versionChanges.ts):
-- the counts and the restated months as the API shows them.
CREATE TABLE version_changes (
  version_id        text NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
  since_version_id  text NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
  contracts         json NOT NULL,
  months            json NOT NULL,
  computed_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (version_id, since_version_id)
);
CREATE INDEX version_changes_since ON version_changes (since_version_id);

-- Each contract change of such a pair, in the order the API lists them (seq: by contractId as
-- UTF-8 bytes, rows without one last), with the row before and after as exported (JSON) and the
-- names of the columns that differ.
CREATE TABLE version_contract_changes (
  version_id        text NOT NULL,
  since_version_id  text NOT NULL,
  seq               bigint NOT NULL,
  change            text NOT NULL CHECK (change IN ('added', 'removed', 'changed')),
  contract_id       text COLLATE "C",
  before            json,
  after             json,
  fields            text[] NOT NULL,
  PRIMARY KEY (version_id, since_version_id, seq),
  FOREIGN KEY (version_id, since_version_id) REFERENCES version_changes (version_id, since_version_id) ON DELETE CASCADE
);
CREATE INDEX version_contract_changes_by_change ON version_contract_changes (version_id, since_version_id, change, seq);
