import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { uuidv7 } from 'uuidv7';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { compactLogRecords, compactMetrics, compactSpans } from '../../../src/compact/index.js';
import { batchAt } from '../../support/compaction-data.js';
import {
  compactedFirstHour,
  exportLogsToDir,
  exportSpansToDir,
  exportToDir,
  hourFolderIn,
  keysIn,
} from '../../support/compaction-dir.js';
import { TWO_SMALL_BATCHES } from '../../support/flat-batches.js';
import { makeTempDir, removeDir, tempDir } from '../../support/temp-dir.js';
import { SETTLED_HOUR as HOUR } from '../../support/time.js';

/**
 * OTLP/JSON objects that another writer (the Collector, an older version, a hand-made file) may
 * have stored, holding a value its field does not hold: a fraction, an integer past the field's
 * range, a negative count. Compaction cannot write them to Parquet as they are; it must skip and
 * keep the input (never delete it after writing something else).
 */

const NOW = `${BigInt(HOUR + 60_000) * 1_000_000n}`;
const START = `${BigInt(HOUR) * 1_000_000n}`;

type Json = Record<string, unknown>;

const logRequest = (record: Json): Json => ({
  resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: NOW, ...record }] }] }],
});

const spanRequest = (span: Json): Json => ({
  resourceSpans: [
    {
      scopeSpans: [
        {
          spans: [
            {
              traceId: '0af7651916cd43dd8448eb211c80319c',
              spanId: 'b7ad6b7169203331',
              name: 'x',
              startTimeUnixNano: START,
              endTimeUnixNano: NOW,
              ...span,
            },
          ],
        },
      ],
    },
  ],
});

const metricRequest = (metric: Json): Json => ({
  resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 'm', ...metric }] }] }],
});
const point = (p: Json): Json => ({ startTimeUnixNano: START, timeUnixNano: NOW, ...p });
const gauge = (p: Json) => metricRequest({ gauge: { dataPoints: [point(p)] } });
const histogram = (p: Json) =>
  metricRequest({
    histogram: { aggregationTemporality: 2, dataPoints: [point({ count: '1', ...p })] },
  });
const exponential = (p: Json) =>
  metricRequest({
    exponentialHistogram: {
      aggregationTemporality: 2,
      dataPoints: [point({ count: '1', scale: 0, zeroCount: '0', ...p })],
    },
  });

interface Case {
  what: string;
  request: Json;
  reason: RegExp;
}

const LOG_CASES: Case[] = [
  {
    what: 'a severity number of 2^40',
    request: logRequest({ severityNumber: 2 ** 40 }),
    reason: /severityNumber 1099511627776/,
  },
  {
    what: 'a severity number of 2.5',
    request: logRequest({ severityNumber: 2.5 }),
    reason: /severityNumber 2.5/,
  },
  {
    what: 'a severity number of "2.5"',
    request: logRequest({ severityNumber: '2.5' }),
    reason: /severityNumber "2.5"/,
  },
  {
    what: 'flags of 256 (reserved bits)',
    request: logRequest({ flags: 256 }),
    reason: /flags 256/,
  },
  { what: 'flags of 2.5', request: logRequest({ flags: 2.5 }), reason: /flags 2.5/ },
  { what: 'flags of -1', request: logRequest({ flags: -1 }), reason: /flags -1/ },
  {
    what: 'a negative time as a decimal',
    request: logRequest({ timeUnixNano: '-1000' }),
    reason: /-1000/,
  },
];

const SPAN_CASES: Case[] = [
  { what: 'a kind of 2^40', request: spanRequest({ kind: 2 ** 40 }), reason: /kind 1099511627776/ },
  { what: 'a kind of 2.5', request: spanRequest({ kind: 2.5 }), reason: /kind 2.5/ },
  {
    what: 'a status code of 2^40',
    request: spanRequest({ status: { code: 2 ** 40 } }),
    reason: /code 1099511627776/,
  },
  {
    what: 'a kind of 9 (no SpanKind)',
    request: spanRequest({ kind: 9 }),
    reason: /kind 9 is not one of 0 to 5/,
  },
  {
    what: 'a status code of 3 (no StatusCode)',
    request: spanRequest({ status: { code: 3 } }),
    reason: /code 3 is not one of 0 to 2/,
  },
  {
    what: 'a negative end time as a decimal',
    request: spanRequest({ endTimeUnixNano: '-1' }),
    reason: /-1/,
  },
];

const METRIC_CASES: Case[] = [
  {
    what: 'a temporality of 2^40',
    request: metricRequest({
      sum: { aggregationTemporality: 2 ** 40, dataPoints: [point({ asDouble: 1 })] },
    }),
    reason: /aggregationTemporality 1099511627776/,
  },
  {
    what: 'an asDouble of "abc"',
    request: gauge({ asDouble: 'abc' }),
    reason: /asDouble "abc" is not a double/,
  },
  {
    what: 'an asDouble of "0x10"',
    request: gauge({ asDouble: '0x10' }),
    reason: /asDouble "0x10"/,
  },
  { what: 'a sum of true', request: histogram({ sum: true }), reason: /sum true/ },
  {
    what: 'an explicit bound of null',
    request: histogram({ explicitBounds: [null], bucketCounts: ['1', '0'] }),
    reason: /explicit bound null/,
  },
  {
    what: 'an asInt past int64',
    request: gauge({ asInt: '9223372036854775808' }),
    reason: /asInt "9223372036854775808"/,
  },
  { what: 'an asInt of 2.5', request: gauge({ asInt: 2.5 }), reason: /asInt 2.5/ },
  {
    what: 'a count of 2^64',
    request: histogram({ count: '18446744073709551616' }),
    reason: /count "18446744073709551616"/,
  },
  { what: 'a count of -1', request: histogram({ count: '-1' }), reason: /count "-1"/ },
  { what: 'a count of 2.5', request: histogram({ count: 2.5 }), reason: /count 2.5/ },
  {
    what: 'a bucket count of 2.5',
    request: histogram({ explicitBounds: [1], bucketCounts: ['1', 2.5] }),
    reason: /count 2.5/,
  },
  { what: 'a zero count of -3', request: exponential({ zeroCount: -3 }), reason: /zeroCount -3/ },
  { what: 'a scale of 2.5', request: exponential({ scale: 2.5 }), reason: /scale 2.5/ },
  {
    what: 'a scale of 2^40',
    request: exponential({ scale: 2 ** 40 }),
    reason: /scale 1099511627776/,
  },
  {
    what: 'an offset of 2^40',
    request: exponential({ positive: { offset: 2 ** 40, bucketCounts: ['1'] } }),
    reason: /offset 1099511627776/,
  },
  {
    what: 'flags of 2^32',
    request: gauge({ asDouble: 1, flags: 2 ** 32 }),
    reason: /flags 4294967296/,
  },
  {
    what: 'a negative time as a decimal',
    request: gauge({ asDouble: 1, timeUnixNano: '-1000000' }),
    reason: /-1000000/,
  },
];

describe('compaction of OTLP objects holding a value their field does not hold', () => {
  let dir: string;
  beforeEach(() => tempDir('otel-s3-compact-range-', (path) => (dir = path)));

  const signals = [
    {
      name: 'log records',
      cases: LOG_CASES,
      word: 'logs',
      fill: (to: string) => exportLogsToDir(to, HOUR, TWO_SMALL_BATCHES, 'otlp-json'),
      compact: compactLogRecords,
    },
    {
      name: 'spans',
      cases: SPAN_CASES,
      word: 'traces',
      fill: (to: string) => exportSpansToDir(to, HOUR, TWO_SMALL_BATCHES, 'otlp-json'),
      compact: compactSpans,
    },
    {
      name: 'metrics',
      cases: METRIC_CASES,
      word: 'metrics',
      fill: (to: string) =>
        exportToDir(to, { prefix: 'p', format: 'otlp-json', compression: 'none' }, [
          batchAt('x', HOUR + 60_000, 2),
        ]),
      compact: compactMetrics,
    },
  ];

  // A signal's good objects, exported once (the same for each of its cases): each test copies
  // them into its own directory and adds its bad object.
  const filled = new Map<string, string>();
  beforeAll(async () => {
    for (const { name, fill } of signals) {
      const template = await makeTempDir('otel-s3-compact-range-fill-');
      filled.set(name, template);
      await fill(template);
    }
  });
  afterAll(async () => {
    for (const template of filled.values()) await removeDir(template);
  });

  for (const { name, cases, word, compact } of signals) {
    for (const { what, request, reason } of cases) {
      test(`${name}: ${what} is skipped and kept, never written changed`, async () => {
        await cp(filled.get(name) as string, dir, { recursive: true });
        const bad = `${await hourFolderIn(dir)}/${word}_${uuidv7()}.json`;
        await writeFile(join(dir, bad), `${JSON.stringify(request)}\n`);
        const partition = await compactedFirstHour(compact, dir, new Date(HOUR));
        expect(partition?.skipped.map((s) => [s.key, s.stage])).toEqual([[bad, 'decode']]);
        expect(partition?.skipped[0]?.reason).toMatch(reason);
        expect(partition?.status).toBe('compacted');
        expect(await keysIn(dir)).toContain(bad);
      });
    }
  }

  test('log records: flags of 256 in OTLP/protobuf (a fixed32) are skipped and kept, never cut to 0', async () => {
    await exportLogsToDir(dir, HOUR, TWO_SMALL_BATCHES, 'otlp-proto');
    const bad = `${await hourFolderIn(dir)}/logs_${uuidv7()}.binpb`;
    // ExportLogsServiceRequest { resource_logs { scope_logs { log_records {
    //   time_unix_nano (1, fixed64), flags (8, fixed32) = 256 } } } }, written out by hand.
    const time = Buffer.alloc(8);
    time.writeBigUInt64LE(BigInt(NOW));
    const record = Buffer.concat([Buffer.from([0x09]), time, Buffer.from([0x45, 0, 1, 0, 0])]);
    const field = (tag: number, body: Buffer) =>
      Buffer.concat([Buffer.from([tag, body.length]), body]);
    await writeFile(join(dir, bad), field(0x0a, field(0x12, field(0x12, record))));
    const partition = await compactedFirstHour(compactLogRecords, dir, new Date(HOUR));
    expect(partition?.skipped.map((s) => [s.key, s.stage, s.reason])).toEqual([
      [
        bad,
        'decode',
        'flags 256 is not trace flags: a whole number from 0 to 255 (bits 8-31 are reserved)',
      ],
    ]);
    expect(partition?.status).toBe('compacted');
    expect(await keysIn(dir)).toContain(bad);
  });
});
