-- Versions that became active before 016 (month-end figures) have no monthly figures: 016 dropped
-- the old series rather than convert it (it was wrong). Such a version is marked, and the workers
-- compute its figures from its stored rows (shared/domain/figuresBackfill.ts), one version at a
-- time, so that an upgraded deployment shows every kept version's figures again without a rebuild.
-- A version built since 016 has `columns` set (its header was read): it needs nothing.
ALTER TABLE versions ADD COLUMN figures_pending boolean NOT NULL DEFAULT false;

UPDATE versions SET figures_pending = true
WHERE status IN ('active', 'superseded') AND rows_purged_at IS NULL AND columns IS NULL;

CREATE INDEX versions_figures_pending ON versions (created_at) WHERE figures_pending;
