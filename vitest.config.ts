import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Unit files that replace a module of the package (vi.mock): each runs in a process of its own,
 * so the replacement neither reaches nor misses a module another file loaded first.
 */
const OWN_PROCESS = [
  'test/unit/cli/cli-zstd-missing.test.ts',
  'test/unit/exporter/parquet-exporter.test.ts',
  'test/unit/spool/spool-adoption.test.ts',
];

/** The unit projects: both in the first group, two files at once (see below). */
const unit = {
  testTimeout: 20_000,
  // Two files at once on a two-core machine: the unit files wait on timers, child processes and
  // the disk for much of their time, so a second worker fills those gaps.
  maxWorkers: 2,
  // Projects with different worker counts run as groups, one after the other.
  sequence: { groupOrder: 0 },
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...unit,
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...OWN_PROCESS],
          // A worker runs file after file: the packages they import (the AWS SDK, OpenTelemetry)
          // load once per worker, not once per file. The package's own modules and the test
          // helpers are still evaluated afresh for every file (test/support/fresh-modules.ts).
          isolate: false,
          setupFiles: ['test/support/fresh-modules.ts'],
        },
      },
      {
        test: {
          ...unit,
          name: 'unit-own-process',
          include: OWN_PROCESS,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 240_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
