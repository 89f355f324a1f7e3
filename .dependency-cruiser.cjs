// The import rule of docs/architecture.md ("The rooms of shared/"), checked by `npm run lint:imports` in CI.
// Processes (api/, worker/, bin/) import shared/ and never each other; shared/ imports no process.
// Inside shared/, rooms import only rooms below them:
//   domain → tenancy → ingest | blobs | oauth → figures → contract | platform
// (ingest, blobs and oauth are siblings and do not import each other; figures holds the
// definitions of the metrics, pure computation that the tally, SQL paths and reads share.)
const ROOM_ORDER = {
  platform: [],
  contract: [],
  figures: ['contract', 'platform'],
  ingest: ['figures', 'contract', 'platform'],
  blobs: ['contract', 'platform'],
  oauth: ['contract', 'platform'],
  tenancy: ['ingest', 'blobs', 'oauth', 'figures', 'contract', 'platform'],
  domain: ['tenancy', 'ingest', 'blobs', 'oauth', 'figures', 'contract', 'platform'],
};
const ROOMS = Object.keys(ROOM_ORDER);

const roomRules = ROOMS.map((room) => ({
  name: `room-${room}`,
  comment: `shared/${room}/ may import ${ROOM_ORDER[room].length ? ROOM_ORDER[room].map((r) => `shared/${r}/`).join(', ') : 'no other room'} (and itself)`,
  severity: 'error',
  from: { path: `^shared/${room}/` },
  to: { path: '^shared/', pathNot: [`^shared/(${[room, ...ROOM_ORDER[room]].join('|')})/`] },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circles, anywhere.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-in-rooms',
      comment: `Every file of shared/ sits in a room: ${ROOMS.join(', ')}.`,
      severity: 'error',
      from: { path: '^shared/', pathNot: `^shared/(${ROOMS.join('|')})/` },
      to: {},
    },
    {
      name: 'shared-imports-no-process',
      comment: 'shared/ is what the processes have in common: it imports none of them (nor the tests).',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(api|worker|bin|test)/' },
    },
    {
      name: 'api-not-worker',
      comment: 'The web process never imports the worker: what both need lives in shared/.',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^worker/' },
    },
    {
      name: 'worker-not-api',
      comment: 'The worker never imports the web process (no HTTP in a job): what both need lives in shared/.',
      severity: 'error',
      from: { path: '^worker/' },
      to: { path: '^api/' },
    },
    {
      name: 'routes-through-their-index',
      comment: 'The app and its filters reach the operations only through api/routes/index.ts.',
      severity: 'error',
      from: { path: '^api/', pathNot: '^api/routes/' },
      to: { path: '^api/routes/', pathNot: '^api/routes/index[.]ts$' },
    },
    {
      name: 'sdk-stands-alone',
      comment: 'The SDK (sdk/) is a package of its own, published apart: it imports nothing of the service, only its own files and its dependencies.',
      severity: 'error',
      from: { path: '^sdk/' },
      to: { path: '^(api|worker|shared|bin|test)/' },
    },
    {
      name: 'service-not-sdk',
      comment: 'The service never imports the SDK (its tests do, as a program would).',
      severity: 'error',
      from: { path: '^(api|worker|shared|bin)/' },
      to: { path: '^sdk/' },
    },
    ...roomRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
