/**
 * A busy read: many objects, megabytes of output to a reader that applies backpressure. Each
 * wait for the output to drain must leave no listener behind on stdout: 11 of them made Node
 * print "MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 error
 * listeners added to [Socket]" (stdout is a Socket when it is a pipe).
 */
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { runCli } from '../../../src/cli/main.js';
import { LineWriter } from '../../../src/cli/output.js';
import { lines } from '../../support/cli-child.js';
import { batchAt } from '../../support/compaction-data.js';
import { exportToDir } from '../../support/compaction-dir.js';
import { tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR } from '../../support/time.js';

const OBJECTS = 40;
const SERIES = 100;

/** The process's warnings while a test runs. */
const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);
beforeEach(() => {
  warnings.length = 0;
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

/** Warnings are emitted on a later tick: give them one before looking. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('reading a busy prefix', () => {
  let root: string;
  beforeAll(async () => {
    const remove = await tempDir('otel-s3-cli-busy-', (path) => (root = path));
    const batches = Array.from({ length: OBJECTS }, (_, i) =>
      batchAt('api', SETTLED_HOUR + i * 60_000, SERIES, i + 1),
    );
    await exportToDir(join(root, 'm'), { prefix: 'p', format: 'parquet' }, batches);
    return remove;
  });

  test('points over many objects, megabytes to stdout: no listener leak warning', async () => {
    // A pipe's backpressure, as `otel-s3 points ... | consumer` has it: a write completes later
    // (as a socket's does), and while its 16 KiB buffer is full the command waits for 'drain'.
    let out = '';
    const stdout = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _encoding, callback) {
        out += chunk.toString();
        setImmediate(callback);
      },
    });
    const stderr = new PassThrough();
    let err = '';
    let drains = 0;
    stdout.on('drain', () => drains++);
    stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const before = { error: stdout.listenerCount('error'), close: stdout.listenerCount('close') };
    const code = await runCli(
      ['points', '--dir', join(root, 'm'), '--prefix', 'p', '--format', 'jsonl'],
      { stdout, stderr, env: {}, cwd: root },
    );
    await settled();
    expect([code, err]).toEqual([0, '']);
    // A counter, a gauge and a histogram point per series and object.
    expect(lines(out)).toHaveLength(OBJECTS * SERIES * 3);
    expect(drains).toBeGreaterThan(20);
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
    // runCli's and the LineWriter's own 'error' listeners stay; nothing per wait.
    expect({ error: stdout.listenerCount('error'), close: stdout.listenerCount('close') }).toEqual({
      error: before.error + 2,
      close: before.close,
    });
  });
});

describe('LineWriter', () => {
  test('waiting for the output to drain leaves no listener on the stream', async () => {
    let waits = 0;
    const slow = new Writable({
      highWaterMark: 1024,
      write(_chunk, _encoding, callback) {
        setImmediate(callback);
      },
    });
    slow.on('drain', () => waits++);
    const before = { error: slow.listenerCount('error'), close: slow.listenerCount('close') };
    const writer = new LineWriter(slow);
    const line = 'x'.repeat(1023);
    for (let i = 0; i < 64 * 40; i++) await writer.line(line);
    await writer.flush();
    await settled();
    expect(waits).toBeGreaterThanOrEqual(39);
    // The writer's own 'error' listener, and nothing per wait.
    expect({ error: slow.listenerCount('error'), close: slow.listenerCount('close') }).toEqual({
      error: before.error + 1,
      close: before.close,
    });
    expect(warnings).toEqual([]);
  });
});
