import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { crc32 } from '@node-rs/crc32';
import { afterAll, describe, expect, test } from 'vitest';
import { type BodyMaker, createBodyMaker, needsWorker } from '../../../src/body/index.js';
import { createWorkerBodyMaker } from '../../../src/body/worker-body-maker.js';
import { builtInZstd, type ZstdEngine, zstdEngine } from '../../../src/compression/zstd-engine.js';
import { ownsItsArrayBuffer } from '../../../src/encoding/handed-over.js';
import { JsonWriter } from '../../../src/encoding/json-writer.js';
import { turnsWhile } from '../../support/loop-turns.js';
import { zstdDecompress } from '../../support/zstd.js';

const ROOT = new URL('../../../', import.meta.url).pathname;

/** The zstd engines this runtime can run: node:zlib from Node 22.15, zstd-napi where it loads. */
const ENGINES: ZstdEngine[] = [
  ...(builtInZstd() ? (['node:zlib'] as const) : []),
  ...(napiLoads() ? (['zstd-napi'] as const) : []),
];

function napiLoads(): boolean {
  try {
    createRequire(import.meta.url)('zstd-napi');
    return true;
  } catch {
    return false;
  }
}

/** Records that compress like metrics but not trivially: repeated structure, varying numbers. */
function records(count: number, bytesEach: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => {
    let text = '';
    for (let j = 0; text.length < bytesEach; j++) {
      text += `{"key":"http.route","value":{"stringValue":"/api/${(i * 7919 + j) % 997}"}},"asInt":${j * i},`;
    }
    const out = Buffer.allocUnsafeSlow(bytesEach);
    out.write(text.slice(0, bytesEach), 'latin1');
    return out;
  });
}

const FRAMING = { head: '{"resourceMetrics":[', separator: ',', tail: ']}\n' };
const makers: BodyMaker[] = [];
afterAll(async () => {
  for (const m of makers) await m.close();
});

describe('body maker (worker thread)', () => {
  const contenders = [
    ...ENGINES.map((engine) => ({ compression: 'zstd' as const, engine })),
    { compression: 'gzip' as const, engine: undefined },
    { compression: 'none' as const, engine: undefined },
  ];
  for (const { compression, engine } of contenders) {
    for (const [label, count, size] of [
      ['one small record', 1, 200],
      ['many records, 12 MiB in all (far past the zstd stream buffer)', 48, 256 * 1024],
    ] as const) {
      test(`${compression}${engine ? ` (${engine})` : ''}, ${label}: the body decodes to head + records joined + tail; checksums match`, async () => {
        const maker = createBodyMaker({
          body: 'framed',
          compression,
          level: compression === 'gzip' ? 6 : 3,
          ...(engine === undefined ? {} : { engine }),
        });
        makers.push(maker);
        const input = records(count, size);
        const expected = Buffer.concat([
          Buffer.from(FRAMING.head),
          ...input.flatMap((r, i) =>
            i === 0 ? [Buffer.from(r)] : [Buffer.from(','), Buffer.from(r)],
          ),
          Buffer.from(FRAMING.tail),
        ]);
        const made = await maker.make({
          records: input,
          framing: FRAMING,
          sha256: true,
          crc32: true,
        });
        const raw =
          compression === 'zstd'
            ? zstdDecompress(made.body)
            : compression === 'gzip'
              ? gunzipSync(made.body)
              : made.body;
        expect(raw.equals(expected)).toBe(true);
        if (compression !== 'none') expect(made.body.length).toBeLessThan(expected.length);
        expect(made.sha256).toBe(createHash('sha256').update(made.body).digest('hex'));
        const crc = Buffer.alloc(4);
        crc.writeUInt32BE(crc32(made.body) >>> 0);
        expect(made.crc32).toBe(crc.toString('base64'));
      });
    }
  }

  for (const engine of ENGINES) {
    test(`zstd (${engine}): protobuf framing (none) concatenates records; incompressible data survives`, async () => {
      const maker = createBodyMaker({ body: 'framed', compression: 'zstd', level: 3, engine });
      makers.push(maker);
      const input = [randomBytes(300_000), randomBytes(5), randomBytes(200_000), randomBytes(0)];
      const expected = Buffer.concat(input.map((b) => Buffer.from(b)));
      const made = await maker.make({ records: input, framing: null, sha256: false, crc32: false });
      expect(zstdDecompress(made.body).equals(expected)).toBe(true);
      expect(made.sha256).toBeUndefined();
      expect(made.crc32).toBeUndefined();
    });

    test(`zstd (${engine}): jobs handed over at once run one after another on one reused context, each its own frame`, async () => {
      const maker = createBodyMaker({ body: 'framed', compression: 'zstd', level: 3, engine });
      makers.push(maker);
      const batches = Array.from({ length: 6 }, (_, i) => records(3, 100_000 + i * 50_000));
      const expected = batches.map((b) => Buffer.concat(b.map((r) => Buffer.from(r))));
      const made = await Promise.all(
        batches.map((b) => maker.make({ records: b, framing: null, sha256: false, crc32: false })),
      );
      for (const [i, m] of made.entries()) {
        expect(zstdDecompress(m.body).equals(expected[i] as Buffer)).toBe(true);
      }
    });
  }

  test('zstd runs on node:zlib wherever the runtime has it, else on zstd-napi', () => {
    const engine = zstdEngine();
    if (builtInZstd()) expect(engine).toBe('node:zlib');
    else if (napiLoads()) expect(engine).toBe('zstd-napi');
    else expect(engine).toBeInstanceOf(Error);
    if (Number(process.versions.node.split('.')[0]) >= 24) expect(engine).toBe('node:zlib');
  });

  test("a worker for zstd-napi and for spans' and log records' Parquet only; the rest runs on libuv's pool (metrics' Parquet on this thread in slices)", () => {
    expect(needsWorker('parquet', undefined, 'metrics')).toBe(false);
    expect(needsWorker('parquet', 'node:zlib', 'metrics')).toBe(false);
    expect(needsWorker('parquet', 'zstd-napi', 'metrics')).toBe(true);
    expect(needsWorker('parquet', 'node:zlib', 'metrics', 'worker')).toBe(true);
    expect(needsWorker('parquet', 'node:zlib', 'traces')).toBe(true);
    expect(needsWorker('parquet', undefined, 'logs')).toBe(true);
    expect(needsWorker('framed', 'zstd-napi')).toBe(true);
    expect(needsWorker('framed', 'node:zlib')).toBe(false);
    expect(needsWorker('framed', undefined)).toBe(false);
    for (const compression of ['gzip', 'none'] as const) {
      const maker = createBodyMaker({ body: 'framed', compression, level: 1 });
      makers.push(maker);
      expect(maker.runsIn).toBe('thread-pool');
    }
    const parquet = (signal: 'metrics' | 'traces', parquetThread?: 'worker') => {
      const maker = createBodyMaker({
        body: 'parquet',
        signal,
        compression: 'gzip',
        level: 1,
        ...(parquetThread === undefined ? {} : { parquetThread }),
      });
      makers.push(maker);
      return maker.runsIn;
    };
    expect(parquet('metrics')).toBe('thread-pool');
    expect(parquet('metrics', 'worker')).toBe('worker');
    expect(parquet('traces')).toBe('worker');
    for (const engine of ENGINES) {
      const zstd = createBodyMaker({ body: 'framed', compression: 'zstd', level: 3, engine });
      makers.push(zstd);
      expect(zstd.runsIn).toBe(engine === 'node:zlib' ? 'thread-pool' : 'worker');
    }
  });

  test('on a runtime with neither engine, zstd fails at construction naming the fixes; gzip still works', async () => {
    // A child process whose node:zlib has no zstd and which cannot load zstd-napi.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--require',
        './test/support/no-zstd.cjs',
        '--import',
        'tsx',
        'test/support/children/zstd-unavailable.ts',
      ],
      { cwd: ROOT },
    );
    const out = JSON.parse(stdout) as {
      compress: { name: string; message: string } | null;
      gzipBytes: number;
    };
    expect(out.compress?.name).toBe('ZstdUnavailableError');
    for (const fix of [
      '22.15',
      'npm install zstd-napi',
      'npm install-scripts approve zstd-napi',
      "compression: 'gzip'",
    ]) {
      expect(out.compress?.message).toContain(fix);
    }
    expect(out.gzipBytes).toBeGreaterThan(0);
  });

  test('worker: an encoder output handed over with spare room travels by transfer, only its own bytes in the body', async () => {
    const maker = createWorkerBodyMaker({ body: 'framed', compression: 'none', level: 3 });
    makers.push(maker);
    const writer = new JsonWriter();
    const bulk = 'x'.repeat(1000);
    const fill = () => {
      for (let i = 0; i < 1000; i++) writer.string(bulk);
    };
    fill();
    writer.finish(); // sizes the next buffer from this output
    fill();
    writer.raw('"end"');
    const handed = writer.finish();
    expect(handed.buffer.byteLength).toBeGreaterThan(handed.length); // a view with spare room
    expect(ownsItsArrayBuffer(handed)).toBe(true);
    const pooled = Buffer.from('small'); // a slice of Node's shared pool: never transferred
    expect(ownsItsArrayBuffer(pooled)).toBe(false);
    const expected = Buffer.concat([Buffer.from(handed), Buffer.from(pooled)]);
    const made = await maker.make({
      records: [handed, pooled],
      framing: null,
      sha256: false,
      crc32: false,
    });
    expect(made.body.equals(expected)).toBe(true);
    expect(handed.buffer.byteLength).toBe(0); // transferred, not copied
    expect(pooled.toString()).toBe('small'); // copied, the pool is untouched
  });

  test.runIf(process.platform === 'linux')(
    'the worker thread runs below the service threads (nice +10), and only it',
    async () => {
      /** Niceness of a thread of this process, from /proc (field 19 of its task's stat). */
      const niceOf = (tid: string | number) => {
        const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      };
      const niceness = () => readdirSync('/proc/self/task').map(niceOf);
      const before = niceness().filter((n) => n === 10).length;
      const maker = createWorkerBodyMaker({ body: 'framed', compression: 'none', level: 3 });
      makers.push(maker);
      await maker.make({ records: records(1, 100), framing: null, sha256: false, crc32: false });
      const after = niceness();
      expect(after.filter((n) => n === 10).length).toBe(before + 1);
      // The main thread (its id is the pid; not the first listed once thread ids wrapped past
      // pid_max, as in a long CI run) keeps its priority.
      expect(niceOf(process.pid)).toBe(0);
      await maker.close();
      expect(niceness().filter((n) => n === 10).length).toBe(before);
    },
  );

  test('a batch the worker cannot be handed (one ArrayBuffer twice) is refused with its records, and the worker goes on', async () => {
    const maker = createWorkerBodyMaker({ body: 'framed', compression: 'none', level: 3 });
    makers.push(maker);
    const shared = Buffer.allocUnsafeSlow(1000).fill(7);
    const twice = [shared, shared]; // both own the whole ArrayBuffer: listed twice for transfer
    await expect(
      maker.make({ records: twice, framing: null, sha256: false, crc32: false }),
    ).rejects.toMatchObject({ name: 'BodyMakerError', contents: { records: twice } });
    expect(shared.length).toBe(1000); // not detached: the caller still has its bytes
    const input = records(2, 500);
    const expected = Buffer.concat(input.map((r) => Buffer.from(r)));
    const made = await maker.make({ records: input, framing: null, sha256: false, crc32: false });
    expect(made.body.equals(expected)).toBe(true);
  });

  test('none: a 12 MiB body is joined and hashed a slice per turn, the event loop runs between them', async () => {
    const maker = createBodyMaker({ body: 'framed', compression: 'none', level: 1 });
    makers.push(maker);
    const { value: made, turns } = await turnsWhile(() =>
      maker.make({
        records: records(48, 256 * 1024),
        framing: FRAMING,
        sha256: true,
        crc32: true,
      }),
    );
    expect(made.body.length).toBeGreaterThan(12 * 1024 * 1024);
    // 12 MiB in slices of 512 KiB: about 24 turns; in one piece, one or two.
    expect(turns).toBeGreaterThanOrEqual(20);
  });

  test('after close(), make() rejects and gives the records back', async () => {
    const maker = createBodyMaker({ body: 'framed', compression: 'gzip', level: 6 });
    await maker.close();
    const input = records(2, 100);
    await expect(
      maker.make({ records: input, framing: null, sha256: false, crc32: false }),
    ).rejects.toMatchObject({
      name: 'BodyMakerError',
      contents: { records: input },
    });
  });
});
