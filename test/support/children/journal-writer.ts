/**
 * Child process: exports SIGNAL (metrics, traces or logs) in FORMAT with a spool in SPOOL_DIR
 * and ten-minute batches, one export every few milliseconds, each carrying its own sequence
 * number, and prints `{"acked":n,"at":ms}` as each export is answered SUCCESS, until killed.
 * With RESTART=1 it exports nothing: it adopts the spool, lets the replay finish, shuts down and
 * prints its stats.
 */
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { S3MetricExporter, S3MetricExporterOptions } from '../../../src/index.js';
import { handBuiltSpan } from '../readable-span.js';
import { sequencedService } from '../service.js';
import { driverOf } from '../signal-driver.js';
import { childSpoolExporter } from './connection.js';

const env = process.env;
const driver = driverOf(env.SIGNAL);
const signal = driver.signal;
const exporter = childSpoolExporter(
  {
    format: (env.FORMAT ?? 'otlp-json') as S3MetricExporterOptions['format'],
    // Nothing would be sealed before the kill: only the journal holds the exports.
    maxBatchAgeMillis: 600_000,
    flushTimeoutMillis: 10_000,
  },
  driver,
);

const resource = resourceFromAttributes({ 'service.name': 'journal-crash' });
const scope = { name: 'journal-crash', version: '1' };
const time = (ms: number): [number, number] => [Math.floor(ms / 1000), (ms % 1000) * 1e6];

/** One export of one span or one log record named by `seq`. */
function item(seq: number): unknown[] {
  const now = time(Date.now());
  if (signal === 'traces') {
    return [
      handBuiltSpan({
        name: `seq-${seq}`,
        spanContext: () => ({
          traceId: seq.toString(16).padStart(32, '0'),
          spanId: seq.toString(16).padStart(16, '0'),
          traceFlags: 1,
        }),
        startTime: now,
        endTime: now,
        attributes: { seq },
        resource,
        instrumentationScope: scope,
      }),
    ];
  }
  return [
    {
      hrTime: now,
      hrTimeObserved: now,
      body: `seq-${seq}`,
      attributes: { seq },
      resource,
      instrumentationScope: scope,
      droppedAttributesCount: 0,
    },
  ];
}

if (env.RESTART === '1') {
  const deadline = Date.now() + 30_000;
  const spool = () => exporter.stats().spool;
  while (spool()?.state !== 'active' && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 10));
  // The replay runs once the spool's files are read: wait for it, then for the uploads.
  while ((spool()?.journalReplayed ?? 0) === 0 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  await exporter.forceFlush();
  await exporter.shutdown();
  console.log(JSON.stringify({ done: true, stats: exporter.stats() }));
} else if (signal === 'metrics') {
  const service = sequencedService(exporter as S3MetricExporter);
  for (;;) {
    await service.exportCollections(1);
    console.log(JSON.stringify({ acked: service.count, at: Date.now() }));
    await new Promise((r) => setTimeout(r, 10));
  }
} else {
  const e = exporter as unknown as {
    export(items: unknown[], cb: (r: { code: number }) => void): void;
  };
  for (let seq = 1; ; seq++) {
    const result = await new Promise<{ code: number }>((resolve) => e.export(item(seq), resolve));
    if (result.code !== 0) throw new Error(`export ${seq} failed`);
    console.log(JSON.stringify({ acked: seq, at: Date.now() }));
    await new Promise((r) => setTimeout(r, 10));
  }
}
