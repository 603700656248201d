// The import graph of src/ (npm run lint). Type-only imports count: a cycle closed by types
// still means two modules that cannot be read or moved one without the other.
//
// Folders follow the data flow, and each imports only folders on floors below its own (never a
// folder beside it on the same floor, never one above). The entries (src/*.ts) stand on top.
// docs/architecture.md draws the floors and says what each folder owns.
/** Bottom first. */
const FLOORS = [
  ['base'],
  ['s3', 'compression', 'encoding'],
  ['layout'],
  ['parquet'],
  ['signals'],
  ['body'],
  ['pipeline'],
  ['spool'],
  ['config'],
  ['reader'],
  ['exporter'],
  ['compact'],
  ['cli'],
];

const known = FLOORS.flat();
const floorRules = FLOORS.flatMap((floor, i) =>
  floor.map((folder) => {
    const notBelow = FLOORS.slice(i)
      .flat()
      .filter((f) => f !== folder);
    return {
      name: `floor-${folder}`,
      severity: 'error',
      comment: `src/${folder}/ imports only folders below it: ${FLOORS.slice(0, i).flat().join(', ') || 'none'}.`,
      from: { path: `^src/${folder}/` },
      to: { path: `^src/(?:(?:${notBelow.join('|')})/|[^/]+$)` },
    };
  }),
);

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle in src/: move the shared piece to the module that owns it.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'folder-on-a-floor',
      severity: 'error',
      comment:
        'Every folder of src/ stands on a floor: add it to FLOORS in .dependency-cruiser.cjs.',
      from: { path: '^src/' },
      to: { path: `^src/[^/]+/`, pathNot: `^src/(?:${known.join('|')})/` },
    },
    ...floorRules,
    // The worker rule. The body worker is started by URL (new Worker(new URL('./body-worker.js',
    // import.meta.url))) and must run without a TypeScript loader on every supported runtime: from
    // dist/ in the package, and from src/ under the tests on Node.js 20, which strips no types.
    // So what it imports is plain JavaScript (// @ts-check, JSDoc types), and that is the only
    // reason a file of src/ is: the two rules below keep both halves true. A JSDoc type import
    // (`@typedef {import('./x.js').T}`) of a .ts file is no import here: it never loads. (The
    // compaction worker runs only from a build, so it is TypeScript.)
    {
      name: 'worker-imports-javascript',
      severity: 'error',
      comment:
        'src/body/body-worker.js runs without a TypeScript loader: every module it imports, directly or not, is a .js file of src/ (// @ts-check, JSDoc types). Move the code the worker needs into .js, or keep the worker from importing it.',
      from: { path: '^src/body/body-worker[.]js$' },
      to: { path: '^src/', pathNot: '[.]js$', reachable: true },
    },
    {
      name: 'javascript-only-for-the-worker',
      severity: 'error',
      comment:
        'A .js file of src/ that src/body/body-worker.js does not import, directly or not: make it TypeScript (only the worker needs plain JavaScript).',
      from: { path: '^src/body/body-worker[.]js$' },
      to: { path: '^src/.*[.]js$', reachable: false },
    },
    {
      name: 'knows-no-signal',
      severity: 'error',
      comment:
        "The pipeline, the budget, the spool, the uploader, the key layout, the reader's listing and the compaction plan know no signal: they reach one through src/signals/signal.ts only.",
      from: {
        path: [
          '^src/(pipeline|spool|layout|s3)/',
          '^src/reader/(key-layout|in-range|source|s3-source|dir-source|replaced-inputs)[.]ts$',
          '^src/compact/(plan|listing|lease|bookkeeping|store|dir-store|conditional-writes)[.]ts$',
        ],
      },
      to: {
        path: ['^src/signals/(?!signal[.]ts$)', '@opentelemetry/sdk-(metrics|trace|logs)'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
