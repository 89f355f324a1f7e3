// `npm run bench -- <scenario> [options]`: benchmarks that print a table against a baseline
// measured in the same run. Scenarios: api, ingest [--rows N] [--large], export, errors [--rows N],
// soak [--seconds N], upload [--mb N] [--rounds N] [--s3], figures [--rows N],
// events [--events N], retention [--rows N], fairness [--rows N] [--files F] [--samples S],
// changes [--rows N], fx [--rows N] [--other-every N].
import { startTestDatabaseServer, stopTestDatabaseServer } from '../setup/database.ts';
import { benchApi } from './api.ts';
import { benchErrors } from './errors.ts';
import { benchExport } from './export.ts';
import { benchIngest } from './ingest.ts';
import { benchSoak } from './soak.ts';
import { benchUpload } from './upload.ts';
import { benchEvents } from './events.ts';
import { benchRetention } from './retention.ts';
import { benchFigures } from './figures.ts';
import { benchFairness } from './fairness.ts';
import { benchChanges } from './changes.ts';
import { benchFx } from './fx.ts';

const scenarios: Record<string, () => Promise<void>> = {
  api: benchApi,
  ingest: () => benchIngest(process.argv.slice(3)),
  export: benchExport,
  errors: () => benchErrors(process.argv.slice(3)),
  soak: () => benchSoak(process.argv.slice(3)),
  upload: () => benchUpload(process.argv.slice(3)),
  events: () => benchEvents(process.argv.slice(3)),
  retention: () => benchRetention(process.argv.slice(3)),
  figures: () => benchFigures(process.argv.slice(3)),
  fairness: () => benchFairness(process.argv.slice(3)),
  changes: () => benchChanges(process.argv.slice(3)),
  fx: () => benchFx(process.argv.slice(3)),
};
const name = process.argv[2] ?? 'api';
const scenario = scenarios[name];
if (!scenario) {
  console.error(`unknown scenario ${name}; one of: ${Object.keys(scenarios).join(', ')}`);
  process.exit(2);
}
await startTestDatabaseServer();
try {
  await scenario();
} finally {
  await stopTestDatabaseServer();
}
