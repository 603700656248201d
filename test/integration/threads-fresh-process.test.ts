/**
 * A fresh process (libuv's pool not started yet) that constructs an exporter with its own
 * requests starts no thread: counted in the child (test/support/children/threads-at-construction.ts),
 * one process per format. In-process thread counts: test/unit/body/threads.test.ts.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

describe.runIf(process.platform === 'linux')('threads of a fresh process', () => {
  test.each(['otlp-json', 'otlp-proto', 'parquet'] as const)(
    'a fresh process constructing a %s exporter with its own requests starts no thread',
    async (format) => {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'test/support/children/threads-at-construction.ts'],
        { cwd: ROOT, env: { ...process.env, FORMAT: format }, timeout: 60_000 },
      );
      const { before, after } = JSON.parse(stdout) as { before: string[]; after: string[] };
      expect(after).toEqual(before);
    },
  );
});
