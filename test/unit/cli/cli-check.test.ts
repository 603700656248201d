import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runCliInProcess } from '../../support/cli-child.js';

// The checks themselves run against a real server: test/integration/cli-check.test.ts.
let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'otel-s3-cli-check-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));

test('otel-s3 check on a directory is a usage error that says why', async () => {
  const { code, stdout, stderr } = await runCliInProcess(['check', '--dir', root], { cwd: root });
  expect([code, stdout]).toEqual([2, '']);
  expect(stderr).toBe(
    'otel-s3: otel-s3 check tests S3 access: give --bucket (a directory needs none)\n',
  );
});
