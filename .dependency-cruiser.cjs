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
