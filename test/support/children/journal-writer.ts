/**
 * Child process: exports SIGNAL (metrics, traces or logs) in FORMAT with a spool in SPOOL_DIR
 * and ten-minute batches, one export every few milliseconds, each carrying its own sequence
 * number, and prints `{"acked":n,"at":ms}` as each export is answered SUCCESS, until killed.
 * Sequence numbers start after SEQ_BASE (0 unless set), so the runs of one spool can be told apart.
 * With RESTART=1 it exports nothing: it adopts the spool, lets the replay finish, shuts down and
 * prints its stats.
 *
 * KILL_POINT stops the replay of what an earlier run left at a chosen point, for the parent's
 * SIGKILL, while the exports go on: spool-create (the replayed batch's seal is in its chain, its
 * spool file not begun), spool-rename (its spool file written and fsynced in tmp/, not renamed),
 * chain-unlink (its spool file durable, its chain's first part deleted and the next, the seal,
 * not yet). There it prints {"killpoint":...}, and that disk call never returns (a deletion that
 * never returns holds the group commits behind it: kill at once). REPLAY_DELAY_MILLIS delays the
 * replay's listing of the journal, so the run's own exports are journaled before it.
 */
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { S3MetricExporter, S3MetricExporterOptions } from '../../../src/index.js';
import { nodeFileSystem, type SpoolFileSystem } from '../../../src/spool/file-system.js';
import { handBuiltSpan } from '../readable-span.js';
import { sequencedService } from '../service.js';
import { driverOf } from '../signal-driver.js';
import { childSpoolExporter } from './connection.js';
import { waitForGo } from './go.js';

const env = process.env;
const driver = driverOf(env.SIGNAL);
const signal = driver.signal;
const base = Number(env.SEQ_BASE ?? 0);
const point = env.KILL_POINT;
if (point !== undefined && !['spool-create', 'spool-rename', 'chain-unlink'].includes(point))
  throw new Error(`KILL_POINT ${point}: not spool-create, spool-rename or chain-unlink`);

/** Tells the parent where we are, then never returns. */
function stop(path: string): Promise<never> {
  console.log(JSON.stringify({ killpoint: point, path, at: Date.now() }));
  return new Promise<never>(() => {});
}
let replayDelay = Number(env.REPLAY_DELAY_MILLIS ?? 0);
let journalUnlinks = 0;
let stopped = false;
const killFs: SpoolFileSystem = {
  ...nodeFileSystem,
  async create(path) {
    if (point === 'spool-create' && !stopped && path.includes('/tmp/')) {
      stopped = true;
      await stop(path);
    }
    return nodeFileSystem.create(path);
  },
  async rename(from, to) {
    if (point === 'spool-rename' && !stopped && from.includes('/tmp/')) {
      stopped = true;
      await stop(from);
    }
    await nodeFileSystem.rename(from, to);
  },
  async readdir(path) {
    if (path.endsWith('/journal') && replayDelay > 0) {
      const delay = replayDelay;
      replayDelay = 0;
      await new Promise((r) => setTimeout(r, delay));
    }
    return nodeFileSystem.readdir(path);
  },
  async unlink(path) {
    if (point === 'chain-unlink' && path.includes('/journal/') && ++journalUnlinks === 2) {
      stopped = true;
      await stop(path);
    }
    await nodeFileSystem.unlink(path);
  },
};

await waitForGo();
const exporter = childSpoolExporter(
  {
    ...(point === undefined ? {} : { spoolFileSystem: killFs, spoolTimeoutMillis: 600_000 }),
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
  const service = sequencedService(exporter as S3MetricExporter, base);
  for (;;) {
    await service.exportCollections(1);
    console.log(JSON.stringify({ acked: service.count, at: Date.now() }));
    await new Promise((r) => setTimeout(r, 10));
  }
} else {
  const e = exporter as unknown as {
    export(items: unknown[], cb: (r: { code: number }) => void): void;
  };
  for (let seq = base + 1; ; seq++) {
    const result = await new Promise<{ code: number }>((resolve) => e.export(item(seq), resolve));
    if (result.code !== 0) throw new Error(`export ${seq} failed`);
    console.log(JSON.stringify({ acked: seq, at: Date.now() }));
    await new Promise((r) => setTimeout(r, 10));
  }
}
