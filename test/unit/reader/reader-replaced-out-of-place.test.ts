import { UUID } from 'uuidv7';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { outputNames } from '../../../src/layout/outputs.js';
import type { Replaces } from '../../../src/reader/compacted.js';
import { readStoredObjects, type UnreadableObject } from '../../../src/reader.js';
import { withReplaces } from '../../support/hostile-parquet.js';
import {
  collect,
  encodeObject,
  keyAt,
  sampleMetrics,
  sampleParquet,
  writeAtKey,
} from '../../support/reader-fixtures.js';
import { signalKeyAt } from '../../support/signal-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { READER_T0 } from '../../support/time.js';

/**
 * A compaction output replaces only objects of its own signal and hour, never itself (src/compact
 * lists one hour of one signal, and merges it into outputs of that hour). One whose list names
 * anything else (a hostile or broken writer's) must not hide it from every read as "replaced":
 * it replaces nothing, and is reported; what it lists is read.
 */

let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('otel-s3-replaced-out-of-place-');
});
afterAll(() => removeDir(dir));

const HOUR = 3_600_000;
const hourOf = (t: Date) => new Date(Math.floor(t.getTime() / HOUR) * HOUR);

/** A metrics Parquet file of the sample, listing `replaces(rows)` as what it replaces. */
async function outputFile(replaces: (rows: number) => Replaces, padding = 0) {
  return withReplaces(
    await sampleParquet(),
    replaces,
    padding > 0 ? [{ key: 'padding', value: 'x'.repeat(padding) }] : [],
  );
}

const SPANS = JSON.stringify({
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'cart' } }] },
      scopeSpans: [
        {
          scope: { name: 's' },
          spans: [
            {
              traceId: '5b8efff798038103d269b633813fc60c',
              spanId: 'eee19b7ec3c1b174',
              name: 'add item',
              startTimeUnixNano: '1772600767000000000',
              endTimeUnixNano: '1772600767060000000',
            },
          ],
        },
      ],
    },
  ],
});

let runs = 0;
async function scene() {
  const root = `${dir}/${++runs}`;
  const metrics = keyAt('p', READER_T0, '.json');
  const nextHour = keyAt('p', new Date(READER_T0.getTime() + HOUR), '.json');
  const spans = signalKeyAt('traces', 'otlp-json', 'p', READER_T0, '.json');
  const sample = encodeObject(await sampleMetrics(), 'otlp-json', 'none');
  await writeAtKey(root, metrics, sample);
  await writeAtKey(root, nextHour, sample);
  await writeAtKey(root, spans, Buffer.from(SPANS));
  const id = UUID.fromFieldsV7(READER_T0.getTime() + 1000, 1, 0, 1).toString();
  const output = outputNames('p', '', 'metrics').render(hourOf(READER_T0), id);
  return { root, metrics, nextHour, spans, output };
}

async function read(
  root: string,
  limits: { maxObjectBytes?: number; maxDecompressedBytes?: number } = {},
) {
  const problems: UnreadableObject[] = [];
  const stream = readStoredObjects({
    dir: root,
    prefix: 'p',
    signals: ['metrics', 'traces'],
    ...limits,
    onError: (p) => problems.push(p),
  });
  const objects = await collect(stream);
  return { keys: objects.map((o) => o.key).sort(), problems, stats: stream.stats };
}

const TAIL =
  '; an output replaces only other objects of its signal and hour: the objects it replaces were read instead';

describe('an output that lists what no output can replace replaces nothing', () => {
  test('an output of its hour’s objects replaces them (the case that must still work)', async () => {
    const s = await scene();
    await writeAtKey(
      s.root,
      s.output,
      await outputFile((rows) => ({ inputs: [{ key: s.metrics, rows }], superseded: [] })),
    );
    const { keys, problems, stats } = await read(s.root);
    expect(problems).toEqual([]);
    expect(keys).toEqual([s.nextHour, s.output, s.spans].sort());
    expect(stats.objectsReplaced).toBe(1);
  });

  test.each([
    ['itself', (s: Awaited<ReturnType<typeof scene>>) => s.output, 'itself'],
    [
      'an object of another hour',
      (s: Awaited<ReturnType<typeof scene>>) => s.nextHour,
      'of another hour',
    ],
    ['a traces object', (s: Awaited<ReturnType<typeof scene>>) => s.spans, 'a traces object'],
  ])('listing %s', async (_, listed, what) => {
    const s = await scene();
    const key = listed(s);
    await writeAtKey(
      s.root,
      s.output,
      await outputFile((rows) => ({
        inputs: [
          { key: s.metrics, rows },
          { key, rows: 0 },
        ],
        superseded: [],
      })),
    );
    const { keys, problems, stats } = await read(s.root);
    expect(keys).toEqual([s.metrics, s.nextHour, s.spans].sort());
    expect(stats.objectsReplaced).toBe(0);
    expect(problems.map((p) => [p.key, p.stage])).toEqual([[s.output, 'fetch']]);
    const named = what === 'itself' ? 'itself' : `${key}, ${what}`;
    expect(problems[0]?.error.message).toBe(
      `its list of the objects it replaces names ${named}${TAIL}`,
    );
  });

  test('listing an object of another hour as superseded', async () => {
    const s = await scene();
    await writeAtKey(
      s.root,
      s.output,
      await outputFile((rows) => ({
        inputs: [{ key: s.metrics, rows }],
        superseded: [s.nextHour],
      })),
    );
    const { keys, problems } = await read(s.root);
    expect(keys).toEqual([s.metrics, s.nextHour, s.spans].sort());
    expect(problems.map((p) => p.key)).toEqual([s.output]);
  });
});

describe('outputs’ footers are read within the read’s limits', () => {
  test('a footer over maxDecompressedBytes replaces nothing: its inputs are read', async () => {
    const s = await scene();
    const file = await outputFile(
      (rows) => ({ inputs: [{ key: s.metrics, rows }], superseded: [] }),
      32 * 1024,
    );
    await writeAtKey(s.root, s.output, file);
    const { keys, problems, stats } = await read(s.root, {
      maxObjectBytes: 1024 * 1024,
      maxDecompressedBytes: 16 * 1024,
    });
    // Read with the default 64 MiB, its footer hid the input, and the output was refused.
    expect(keys).toEqual([s.metrics, s.nextHour, s.spans].sort());
    expect(stats.objectsReplaced).toBe(0);
    expect(problems.map((p) => [p.key, p.stage])).toEqual([[s.output, 'fetch']]);
    expect(problems[0]?.error.message).toMatch(
      /^Parquet footer size 3\d\.\d KiB is over the maxDecompressedBytes limit of 16\.0 KiB, so the objects it replaces were read instead$/,
    );
  });
});

describe('an output the read refuses whole replaces nothing', () => {
  test('stored over maxObjectBytes (and read whole, under 16 MiB): its inputs are read', async () => {
    const s = await scene();
    const file = await outputFile((rows) => ({
      inputs: [{ key: s.metrics, rows }],
      superseded: [],
    }));
    await writeAtKey(s.root, s.output, file);
    // Its footer and its row group are each within the limit; the file is not.
    const maxObjectBytes = file.length - 1;
    const { keys, problems, stats } = await read(s.root, { maxObjectBytes });
    expect(keys).toEqual([s.metrics, s.nextHour, s.spans].sort());
    expect(stats.objectsReplaced).toBe(0);
    expect(problems.map((p) => [p.key, p.stage])).toEqual([[s.output, 'fetch']]);
    expect(problems[0]?.error.message).toMatch(
      /^stored size \d+\.\d KiB is over the maxObjectBytes limit of \d+\.\d KiB, so the objects it replaces were read instead$/,
    );
  });
});
