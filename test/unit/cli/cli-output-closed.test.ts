import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, test } from 'vitest';
import { runCli } from '../../../src/cli/main.js';
import { lines, runCliInProcess } from '../../support/cli-child.js';
import { encodeObject, keyAt, sampleMetrics, writeAtKey } from '../../support/reader-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { CLI_T0 } from '../../support/time.js';

/**
 * Enough objects that `ls` fills more than one of the CLI's 64 KiB writes (a line is about 130
 * bytes), so its reader can go away while the listing is under way.
 */
const OBJECTS = 1500;

/** Objects of `cat`'s mirror: the first unreadable, the rest readable. */
const CAT_OBJECTS = 50;

let root: string;
/** The key of the unreadable object. */
let broken: string;

beforeAll(async () => {
  root = await makeTempDir('otel-s3-cli-closed-');
  // ls downloads nothing: empty files do.
  for (let i = 0; i < OBJECTS; i++) {
    const key = keyAt('prod', new Date(CLI_T0.getTime() + i * 1000), '.json.zst');
    await writeAtKey(`${root}/mirror`, key, new Uint8Array(0));
  }
  const body = encodeObject(await sampleMetrics('svc'), 'otlp-json', 'none');
  for (let i = 0; i < CAT_OBJECTS; i++) {
    const key = keyAt('cat', new Date(CLI_T0.getTime() + i * 1000), '.json');
    if (i === 0) broken = key;
    await writeAtKey(`${root}/mirror`, key, i === 0 ? Buffer.from('{not json') : body);
  }
  return () => removeDir(root);
});

const LS = ['ls', '--dir', 'mirror', '--prefix', 'prod'];

describe('ls when its output goes away before the listing ends', () => {
  test('all of it read: the totals of every object', async () => {
    const { code, stdout, stderr } = await runCliInProcess(LS, { cwd: root });
    expect(code).toBe(0);
    expect(lines(stdout)).toHaveLength(OBJECTS);
    expect(stderr).toBe(`otel-s3: 1,500 objects, 0 B (0 bytes) in ${root}/mirror/prod/\n`);
  });

  test('the reader went away (| head): no totals of the part listed, as if of the prefix; exit 0', async () => {
    const { code, stdout, stderr } = await runCliInProcess(LS, { cwd: root, closeAfter: 1 });
    expect(lines(stdout).length).toBeLessThan(OBJECTS);
    expect([code, stderr]).toEqual([0, '']);
  });

  test('a write failed (a full disk): the error alone, exit 4', async () => {
    const stdout = new PassThrough();
    let stderr = '';
    const errors = Object.assign(new PassThrough(), { isTTY: false });
    errors.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    stdout.on('data', () => {
      stdout.emit(
        'error',
        Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }),
      );
    });
    const code = await runCli(LS, { stdout, stderr: errors, env: {}, cwd: root });
    expect([code, stderr]).toEqual([4, 'otel-s3: ENOSPC: no space left on device, write\n']);
  });
});

describe('cat when its output goes away before the reading ends', () => {
  const CAT = ['cat', '--dir', 'mirror', '--prefix', 'cat'];

  test('all of it read: the unreadable object named, and counted of all', async () => {
    const { code, stdout, stderr } = await runCliInProcess(CAT, { cwd: root });
    expect(code).toBe(1);
    expect(lines(stdout)).toHaveLength(CAT_OBJECTS - 1);
    expect(lines(stderr)).toHaveLength(2);
    expect(stderr).toContain(`otel-s3: cannot read ${broken} (decode)`);
    expect(stderr).toContain(
      'otel-s3: 1 object of 50 objects could not be read and was skipped (see above)\n',
    );
  });

  test('the reader went away (| head): the object named, no count of the part listed; exit 1', async () => {
    const { code, stdout, stderr } = await runCliInProcess(CAT, { cwd: root, closeAfter: 1 });
    expect(lines(stdout).length).toBeLessThan(CAT_OBJECTS - 1);
    expect(code).toBe(1);
    expect(lines(stderr)).toHaveLength(1);
    expect(stderr).toContain(`otel-s3: cannot read ${broken} (decode)`);
  });
});
