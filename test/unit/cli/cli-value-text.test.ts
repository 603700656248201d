import { join } from 'node:path';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  InMemoryLogRecordExporter,
  LoggerProvider,
  SimpleLogRecordProcessor,
} from '@opentelemetry/sdk-logs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newTally } from '../../../src/encoding/records.js';
import { flatEncoder } from '../../../src/signals/flat-parquet/table.js';
import { logColumnBuilders } from '../../../src/signals/logs/parquet.js';
import { LOG_RECORDS } from '../../../src/signals/logs/parquet-schema.js';
import { type CliInProcessOptions, lines, runCliInProcess } from '../../support/cli-child.js';
import { writeAtKey } from '../../support/reader-fixtures.js';
import { encodeLogRecords, signalKeyAt } from '../../support/signal-fixtures.js';
import { makeTempDir, removeDir } from '../../support/temp-dir.js';
import { CLI_T0 } from '../../support/time.js';

/**
 * `otel-s3 logs` on the same SDK log records stored as OTLP/protobuf and as Parquet: its filters
 * and its table and CSV text read values as the Parquet tables spell them (docs/parquet.md), so
 * they find and print the same records alike from either format. The texts expected are spelled
 * here from that document: Go's JSON, map keys sorted by their bytes, integers in full.
 */

const BIG = 2 ** 60; // 1152921504606846976

let root: string;
beforeAll(async () => {
  root = await makeTempDir('otel-s3-cli-value-text-');
  const exporter = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'svc' }),
    processors: [new SimpleLogRecordProcessor({ exporter })],
  });
  provider.getLogger('l').emit({
    body: { z: BIG, a: 'x', '10': 1, '9': [BIG, 1e21] },
    timestamp: [Math.floor(CLI_T0.getTime() / 1000), 0],
    attributes: {
      ints: [BIG, -BIG, 1],
      doubles: [1e21, Number.NaN],
      map: { b: { y: -BIG, x: 1 }, a: new Uint8Array([255]) },
    },
  });
  const records = exporter.getFinishedLogRecords();
  await provider.shutdown();
  const at = new Date(CLI_T0.getTime() + 1000);
  await writeAtKey(
    join(root, 'otlp'),
    signalKeyAt('logs', 'otlp-proto', 'p', at, '.binpb'),
    encodeLogRecords(records, 'otlp-proto', 'none'),
  );
  const builders = logColumnBuilders();
  builders.append(records, newTally(false));
  const parquet = await flatEncoder(LOG_RECORDS)(builders.seal(), { compression: 'none' });
  await writeAtKey(
    join(root, 'parquet'),
    signalKeyAt('logs', 'parquet', 'p', at, '.parquet'),
    new Uint8Array(parquet),
  );
});
afterAll(() => removeDir(root));

const BODY = '{"10":1,"9":[1152921504606846976,1e+21],"a":"x","z":1152921504606846976}';
const MAP = '{"a":"/w==","b":{"x":1,"y":-1152921504606846976}}';

/** stdout of `otel-s3 logs <args>` over the objects of one format. */
async function logs(format: 'otlp' | 'parquet', args: string[], options: CliInProcessOptions = {}) {
  const { code, stdout } = await runCliInProcess(
    ['logs', ...args, '--dir', format, '--prefix', 'p'],
    { cwd: root, ...options },
  );
  expect(code).toBe(0);
  return stdout;
}

describe('otel-s3 logs reads a value as the same text from OTLP objects and Parquet files', () => {
  test.each(['otlp', 'parquet'] as const)(
    '--attribute and --body match the text (%s)',
    async (f) => {
      const found = async (...filters: string[]) =>
        lines(await logs(f, ['--format', 'jsonl', ...filters])).length;
      expect(await found('--attribute', 'ints=[1152921504606846976,-1152921504606846976,1]')).toBe(
        1,
      );
      expect(await found('--attribute', 'doubles=[1e+21,"NaN"]')).toBe(1);
      expect(await found('--attribute', `map=${MAP}`)).toBe(1);
      expect(await found('--body', BODY)).toBe(1);
      expect(await found('--body', '"z":1152921504606846976')).toBe(1);
    },
  );

  test('the table and the CSV body are the same text from either format', async () => {
    const table = (f: 'otlp' | 'parquet') => logs(f, [], { stdoutTTY: true });
    const csv = (f: 'otlp' | 'parquet') => logs(f, ['--format', 'csv']);
    const otlpTable = await table('otlp');
    expect(otlpTable).toContain(BODY);
    expect(otlpTable).toContain(`map=${MAP}`);
    expect(await table('parquet')).toBe(otlpTable);
    const field = `"${BODY.replaceAll('"', '""')}"`;
    expect(lines(await csv('otlp'))[1]).toContain(`,${field},`);
    expect(lines(await csv('parquet'))[1]).toContain(`,${field},`);
  });
});
