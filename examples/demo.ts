/**
 * `npm start`: a simulated checkout service exports its metrics, spans and log records with the
 * three exporters of one S3Exporters for a few seconds, shuts down, and then everything stored is
 * read back, decoded and summarized.
 *
 * By default it writes to an embedded fake S3 server (s3rver) that lives only as long as the
 * demo. Set S3_ENDPOINT (and S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_REGION, S3_BUCKET) to
 * use a real S3-compatible server instead. DEMO_SECONDS sets the duration (default 15).
 *
 * At the end it sets up the `otel-s3` CLI to read the same data: `.otel-s3.json` in the current
 * directory points at a mirror of the objects in `.otel-s3-demo/` (the embedded server is gone
 * by then), or at the real server's bucket and prefix (never at its secrets).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  GetObjectCommand,
  HeadBucketCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { type DiagLogFunction, DiagLogLevel, diag } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import {
  AggregationType,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { MultiBar } from 'cli-progress';
// In your own project: 'otel-s3-exporter' and 'otel-s3-exporter/reader' (the package's two
// entries; this repository's examples run on its source).
import { type ExporterStats, S3Exporters, type S3MetricExporter } from '../src/index.js';
import {
  dataPointRows,
  decodeStoredObject,
  encodingOfKey,
  type OtlpObject,
  readMetrics,
} from '../src/reader.js';
import { CheckoutService, ORDER_VALUE_METRIC, type ServiceLogger } from './checkout-service.js';
import { startEmbeddedS3 } from './embedded-s3.js';

// The AWS SDK warns once per process that its 2027 releases will need Node 22. That is noise in
// a demo; this is the SDK's own switch, read when the first S3Client is created.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const EXPORT_INTERVAL_MILLIS = 1_000;
/** Small, so that a short run stores several objects (the default is one a minute). */
const MAX_BATCH_AGE_MILLIS = 3_000;

interface Target {
  description: string;
  /** The embedded s3rver, which is gone when the demo ends. */
  embedded: boolean;
  endpoint: string;
  region: string;
  bucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  close(): Promise<void>;
}

interface StoredObject {
  key: string;
  size: number;
  bytes: Uint8Array;
  request: OtlpObject;
}

// ---- output ----

/** Where status lines go: straight to stderr, or above the progress bar while it is shown. */
let writeStatus: (line: string) => void = (line) => process.stderr.write(`${line}\n`);
const print = (line = '') => process.stdout.write(`${line}\n`);

const integer = (n: number) => n.toLocaleString('en-US');

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

const plural = (n: number, one: string, many = `${one}s`) =>
  `${integer(n)} ${n === 1 ? one : many}`;

/** Shows the exporter's own warnings and errors (it logs through the OpenTelemetry diag API). */
function showDiagnostics(): void {
  const at =
    (level: string): DiagLogFunction =>
    (message, ...args) =>
      writeStatus(`[${level}] ${[message, ...args.map(String)].join(' ')}`);
  const info = at('info');
  diag.setLogger(
    {
      error: at('error'),
      warn: at('warn'),
      // The exporter reports recoveries at info level; the SDK's own info lines are noise here.
      info: (message, ...args) => {
        if (message.startsWith('otel-s3-exporter:')) info(message, ...args);
      },
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.INFO,
  );
}

/** One line about an error: Node's network errors, and S3 errors whose HEAD replies have no body. */
function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map(describeError).join('; ');
  }
  if (!(error instanceof Error)) return String(error);
  const { code, $metadata } = error as { code?: unknown; $metadata?: { httpStatusCode?: number } };
  const status = $metadata?.httpStatusCode;
  if (error.name === 'Unknown' && status !== undefined) {
    return status === 403 ? 'HTTP 403, access denied (check the credentials)' : `HTTP ${status}`;
  }
  const detail = error.message || (typeof code === 'string' ? code : '');
  if (detail === '') return error.name;
  return error.name === 'Error' ? detail : `${error.name}: ${detail}`;
}

// ---- configuration ----

function demoSeconds(): number {
  const raw = process.env.DEMO_SECONDS;
  if (raw === undefined || raw === '') return 15;
  const seconds = Number(raw);
  // A day at most: longer timers would overflow setTimeout.
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400) {
    throw new Error(`DEMO_SECONDS must be a number of seconds from 0 to 86400, not ${raw}`);
  }
  return seconds;
}

async function openTarget(): Promise<Target> {
  const env = process.env;
  const endpoint = env.S3_ENDPOINT;
  if (endpoint === undefined || endpoint === '') {
    const s3 = await startEmbeddedS3();
    return {
      description: `embedded fake S3 (s3rver) at ${s3.endpoint}`,
      embedded: true,
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: 'demo-metrics',
      credentials: s3.credentials,
      close: s3.close,
    };
  }
  const accessKeyId = env.S3_ACCESS_KEY_ID ?? env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY ?? env.AWS_SECRET_ACCESS_KEY;
  return {
    description: endpoint,
    embedded: false,
    endpoint,
    region: env.S3_REGION || 'us-east-1',
    bucket: env.S3_BUCKET || 'demo-metrics',
    // Without both, the AWS SDK's default credential chain applies.
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
    close: async () => {},
  };
}

/** A unique prefix per run, e.g. `demo/20250101T120000.123Z` (no colons: s3rver stores keys as file names). */
function runPrefix(): string {
  return `demo/${new Date().toISOString().replace(/[-:]/g, '')}`;
}

async function ensureBucket(s3: S3Client, target: Target): Promise<void> {
  const Bucket = target.bucket;
  try {
    await s3.send(new HeadBucketCommand({ Bucket }));
    return;
  } catch (error) {
    if (!(error instanceof Error && error.name === 'NotFound')) {
      throw new Error(`cannot use bucket ${Bucket} at ${target.endpoint}: ${describeError(error)}`);
    }
  }
  try {
    await s3.send(
      new CreateBucketCommand({
        Bucket,
        // us-east-1 is the default location; S3-compatible servers name their own regions.
        ...(target.region === 'us-east-1'
          ? {}
          : {
              CreateBucketConfiguration: {
                LocationConstraint: target.region as BucketLocationConstraint,
              },
            }),
      }),
    );
  } catch (error) {
    // Someone else (or a concurrent run) made it in between: fine.
    if (error instanceof Error && /^BucketAlready(OwnedByYou|Exists)$/.test(error.name)) return;
    throw new Error(
      `cannot create bucket ${Bucket} at ${target.endpoint}: ${describeError(error)}`,
    );
  }
}

// ---- the run ----

/** Runs the service for `seconds` (or until Ctrl-C or SIGTERM), showing progress on stderr. */
async function simulate(
  seconds: number,
  service: CheckoutService,
  exporter: S3MetricExporter,
): Promise<number> {
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const progress = () => {
    const s = exporter.stats();
    return `${integer(service.requests)} requests | ${plural(s.batchesUploaded, 'object')} uploaded (${bytes(s.bytesUploaded)})`;
  };

  let bars: MultiBar | undefined;
  let update: () => void;
  if (process.stderr.isTTY) {
    bars = new MultiBar({
      format: ' {bar} {elapsed}/{total} s | {progress}',
      barsize: 30,
      hideCursor: true,
      clearOnComplete: true,
      stream: process.stderr,
    });
    const bar = bars.create(seconds, 0, { elapsed: 0, progress: progress() });
    const shown = bars;
    writeStatus = (line) => shown.log(`${line}\n`);
    update = () => {
      const t = Math.min(elapsed(), seconds);
      bar.update(t, { elapsed: Math.floor(t), progress: progress() });
    };
  } else {
    update = () => writeStatus(`  ${elapsed().toFixed(0).padStart(3)} s | ${progress()}`);
  }

  service.start();
  await new Promise<void>((resolve) => {
    const ticker = setInterval(update, bars === undefined ? 1_000 : 200);
    const finish = () => {
      clearTimeout(deadline);
      clearInterval(ticker);
      process.off('SIGINT', onInterrupt);
      process.off('SIGTERM', onInterrupt);
      resolve();
    };
    const deadline = setTimeout(finish, seconds * 1000);
    // The first Ctrl-C (or SIGTERM: `kill`, `timeout`, `docker stop`) ends the traffic early and
    // still shows the results; a second one kills. `npm start` does not pass a SIGTERM sent to
    // npm on: run `node --import tsx examples/demo.ts` to stop the demo with `kill`.
    const onInterrupt = (signal: NodeJS.Signals) => {
      writeStatus(`${signal}: stopping the traffic early (Ctrl-C again to abort).`);
      finish();
    };
    process.once('SIGINT', onInterrupt);
    process.once('SIGTERM', onInterrupt);
  });
  service.stop();
  if (bars === undefined) writeStatus('');
  bars?.stop();
  writeStatus = (line) => process.stderr.write(`${line}\n`);
  return elapsed();
}

// ---- reading back ----

/** Reads back what the run stored, with the package's own reader (`readMetrics`). */
async function readBack(target: Target, prefix: string): Promise<StoredObject[]> {
  const objects: StoredObject[] = [];
  const problems: string[] = [];
  for await (const object of readMetrics({
    bucket: target.bucket,
    prefix,
    endpoint: target.endpoint,
    region: target.region,
    ...(target.credentials === undefined ? {} : { credentials: target.credentials }),
    onError: (problem) => problems.push(`${problem.key}: ${problem.error.message}`),
  })) {
    objects.push({
      key: object.key,
      size: object.size,
      bytes: object.bytes,
      request: object.request,
    });
  }
  if (problems.length > 0) throw new Error(`unreadable objects: ${problems.join('; ')}`);
  return objects;
}

/** The objects of spans and of log records under the prefix, decoded. */
async function readBackOthers(
  s3: S3Client,
  target: Target,
  prefix: string,
): Promise<{ traces: StoredObject[]; logs: StoredObject[] }> {
  const out = { traces: [] as StoredObject[], logs: [] as StoredObject[] };
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: target.bucket,
        Prefix: `${prefix}/`,
        ContinuationToken: token,
      }),
    );
    for (const entry of page.Contents ?? []) {
      const key = entry.Key ?? '';
      const signal = /\/(traces|logs)_[^/]*$/.exec(key)?.[1] as 'traces' | 'logs' | undefined;
      if (signal === undefined) continue;
      const body = await s3.send(new GetObjectCommand({ Bucket: target.bucket, Key: key }));
      const bytes = await body.Body?.transformToByteArray();
      if (bytes === undefined) throw new Error(`${key}: no body`);
      const { request } = decodeStoredObject(key, bytes);
      out[signal].push({ key, size: bytes.length, bytes, request });
    }
    token = page.NextContinuationToken;
  } while (token !== undefined);
  return out;
}

/** Spans by name and log records by severity, as read back; and what did not add up. */
function reportSpansAndLogs(
  objects: { traces: StoredObject[]; logs: StoredObject[] },
  spanStats: ExporterStats,
  logStats: ExporterStats,
): string[] {
  const problems: string[] = [];
  const count = (
    list: StoredObject[],
    field: 'resourceSpans' | 'resourceLogs',
    inner: 'scopeSpans' | 'scopeLogs',
    items: 'spans' | 'logRecords',
    keyOf: (item: OtlpObject) => string,
  ) => {
    const counts = new Map<string, number>();
    for (const { request } of list) {
      for (const r of (request[field] ?? []) as OtlpObject[]) {
        for (const s of (r[inner] ?? []) as OtlpObject[]) {
          for (const item of (s[items] ?? []) as OtlpObject[]) {
            const k = keyOf(item);
            counts.set(k, (counts.get(k) ?? 0) + 1);
          }
        }
      }
    }
    return counts;
  };
  const spans = count(objects.traces, 'resourceSpans', 'scopeSpans', 'spans', (s) =>
    String(s.name),
  );
  const records = count(objects.logs, 'resourceLogs', 'scopeLogs', 'logRecords', (r) =>
    String(r.severityText ?? ''),
  );
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  print(
    `Read back ${plural(objects.traces.length, 'object')} of spans and ${plural(objects.logs.length, 'object')} of log records (traces_…, logs_…)`,
  );
  const rows = [['span', 'spans']];
  for (const [name, n] of [...spans].sort(([a], [b]) => a.localeCompare(b)))
    rows.push([name, integer(n)]);
  rows.push(['total', integer(total(spans))]);
  for (const line of table(rows, new Set([1]))) print(`  ${line}`);
  print();
  const logRows = [['severity', 'log records']];
  for (const [severity, n] of [...records].sort(([a], [b]) => a.localeCompare(b))) {
    logRows.push([severity, integer(n)]);
  }
  logRows.push(['total', integer(total(records))]);
  for (const line of table(logRows, new Set([1]))) print(`  ${line}`);
  print();
  if (total(spans) === 0) problems.push('no spans were stored');
  if (total(spans) !== spanStats.pointsUploaded) {
    problems.push(
      `decoded ${total(spans)} spans, the exporter uploaded ${spanStats.pointsUploaded}`,
    );
  }
  if (total(records) !== logStats.pointsUploaded) {
    problems.push(
      `decoded ${total(records)} log records, the exporter uploaded ${logStats.pointsUploaded}`,
    );
  }
  return problems;
}

// ---- the otel-s3 CLI afterwards ----

const CLI_CONFIG = '.otel-s3.json';
const MIRROR_DIR = '.otel-s3-demo';
/** Marks a config file as the demo's own, so a run replaces it but never someone else's. */
const CONFIG_COMMENT = 'written by the otel-s3-exporter demo (npm start); delete it freely';

/**
 * Points `npx otel-s3` at what this run stored: a mirror of `objects` (every signal's; path =
 * key) when the embedded server is gone with the demo, else the server's endpoint, bucket and
 * prefix. Returns the lines that tell the user what to run.
 */
async function setUpCli(
  target: Target,
  prefix: string,
  objects: StoredObject[],
): Promise<string[]> {
  const config: Record<string, string> = { $comment: CONFIG_COMMENT };
  if (target.embedded) {
    await rm(MIRROR_DIR, { recursive: true, force: true });
    for (const object of objects) {
      const path = join(MIRROR_DIR, ...object.key.split('/'));
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, object.bytes);
    }
    Object.assign(config, { dir: MIRROR_DIR, prefix });
  } else {
    Object.assign(config, {
      endpoint: target.endpoint,
      region: target.region,
      bucket: target.bucket,
      prefix,
    });
  }
  // Credentials are never written down: the CLI takes them from the AWS variables.
  const env = process.env;
  const credentials =
    !target.embedded && env.S3_ACCESS_KEY_ID && env.S3_SECRET_ACCESS_KEY
      ? 'AWS_ACCESS_KEY_ID=$S3_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY=$S3_SECRET_ACCESS_KEY '
      : '';
  const where = target.embedded
    ? `a copy of the objects in ${MIRROR_DIR}/ (the embedded server is gone)`
    : `s3://${target.bucket}/${prefix}/ at ${target.endpoint}`;

  // `npx otel-s3` in a clone runs the package's build, which npm install does not make.
  const build = existsSync(new URL('../dist/cli.js', import.meta.url))
    ? []
    : ['  npm run build   # once: the otel-s3 command of a clone runs dist/'];
  const existing = await readFile(CLI_CONFIG, 'utf8').catch(() => undefined);
  if (existing !== undefined && !existing.includes(CONFIG_COMMENT)) {
    // Someone's own config: leave it, and spell the settings out on the command line instead.
    const flags = target.embedded
      ? `--dir ${MIRROR_DIR} --prefix ${prefix}`
      : `--endpoint ${target.endpoint} --region ${target.region} --bucket ${target.bucket} --prefix ${prefix}`;
    return [
      `Read it back with the otel-s3 CLI (${CLI_CONFIG} here is not the demo's, so it was left alone):`,
      ...build,
      `  ${credentials}npx otel-s3 points --since 1h ${flags}`,
    ];
  }
  await writeFile(CLI_CONFIG, `${JSON.stringify(config, null, 2)}\n`);
  return [
    `Read it back with the otel-s3 CLI; ${CLI_CONFIG} points it at ${where}:`,
    ...build,
    `  ${credentials}npx otel-s3 points --since 1h`,
    `  ${credentials}npx otel-s3 stats --since 1h`,
  ];
}

interface MetricSummary {
  kind: string;
  points: number;
  /** Distinct attribute sets. */
  series: Set<string>;
}

function summarizeMetrics(objects: StoredObject[]): Map<string, MetricSummary> {
  const metrics = new Map<string, MetricSummary>();
  for (const { request } of objects) {
    for (const row of dataPointRows(request)) {
      // The type as `otel-s3 points` and `stats` name it (e.g. `up-down-counter`).
      const kind = row.type;
      const summary = metrics.get(row.metric) ?? { kind, points: 0, series: new Set<string>() };
      summary.points += 1;
      summary.series.add(JSON.stringify(row.attributes));
      metrics.set(row.metric, summary);
    }
  }
  return metrics;
}

function table(rows: string[][], rightAligned: Set<number>): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return rows.map((row) =>
    row
      .map((cell, i) => {
        const width = widths?.[i] ?? 0;
        return rightAligned.has(i) ? cell.padStart(width) : cell.padEnd(width);
      })
      .join('   ')
      .trimEnd(),
  );
}

/** Prints what was read back; returns the problems found (empty when all is consistent). */
function report(objects: StoredObject[], stats: ExporterStats, where: string): string[] {
  const problems: string[] = [];
  const stored = objects.reduce((sum, o) => sum + o.size, 0);
  const first = objects[0];
  const encoding = first === undefined ? undefined : encodingOfKey(first.key);
  const what = encoding === undefined ? '' : ` (${encoding.format}, ${encoding.compression})`;

  print(`Read back ${plural(objects.length, 'object')}${what} from ${where}`);
  // The exporter's stats know the uncompressed size; the objects only hold compressed bytes.
  const raw = stats.rawBytesUploaded;
  const ratio = stored > 0 ? `, ${(raw / stored).toFixed(1)}x smaller` : '';
  print(`  stored       ${bytes(stored)} (${bytes(raw)} uncompressed${ratio})`);
  print(
    `  uploads      ${plural(stats.uploadAttempts, 'PutObject request')}, ` +
      `${plural(stats.retries, 'retry', 'retries')}, ` +
      `${plural(stats.pointsDropped, 'data point')} dropped`,
  );
  if (first !== undefined) print(`  example key  ${first.key}`);
  print();

  const metrics = summarizeMetrics(objects);
  const rows = [['metric', 'type', 'series', 'data points']];
  let total = 0;
  for (const [name, m] of [...metrics].sort(([a], [b]) => a.localeCompare(b))) {
    rows.push([name, m.kind, integer(m.series.size), integer(m.points)]);
    total += m.points;
  }
  rows.push(['total', '', '', integer(total)]);
  for (const line of table(rows, new Set([2, 3]))) print(`  ${line}`);
  print();

  if (objects.length === 0) problems.push('no objects were stored');
  if (objects.length !== stats.batchesUploaded) {
    problems.push(
      `found ${objects.length} objects, the exporter uploaded ${stats.batchesUploaded}`,
    );
  }
  if (stored !== stats.bytesUploaded) {
    problems.push(`found ${stored} bytes, the exporter uploaded ${stats.bytesUploaded}`);
  }
  if (total !== stats.pointsUploaded) {
    problems.push(`decoded ${total} data points, the exporter uploaded ${stats.pointsUploaded}`);
  }
  if (stats.pointsDropped > 0) {
    problems.push(
      `the exporter dropped ${stats.pointsDropped} data points: ${JSON.stringify(stats.pointsDroppedByReason)}`,
    );
  }
  const kinds = new Set([...metrics.values()].map((m) => m.kind));
  for (const kind of [
    'counter',
    'up-down-counter',
    'gauge',
    'histogram',
    'exponential-histogram',
  ]) {
    if (!kinds.has(kind)) problems.push(`no ${kind} was stored`);
  }
  return problems;
}

// ---- main ----

async function main(): Promise<void> {
  const seconds = demoSeconds();
  showDiagnostics();
  const target = await openTarget();
  const s3 = new S3Client({
    region: target.region,
    endpoint: target.endpoint,
    forcePathStyle: true,
    ...(target.credentials === undefined ? {} : { credentials: target.credentials }),
    // As the exporter does with a custom endpoint: many S3-compatible servers reject the SDK's
    // default CRC32 checksum trailers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  try {
    await ensureBucket(s3, target);
    const prefix = runPrefix();
    const where = `s3://${target.bucket}/${prefix}/`;
    print('otel-s3-exporter demo');
    print(`  target  ${target.description}`);
    print(`  writes  ${where}`);
    print(`  runs    ${seconds} s of simulated checkout traffic`);
    print(
      `  exports every ${EXPORT_INTERVAL_MILLIS / 1000} s; a batch is stored ` +
        `${MAX_BATCH_AGE_MILLIS / 1000} s after its first export`,
    );
    print();

    // One connection, one memory bound and one upload queue for the three signals.
    const exporters = new S3Exporters({
      bucket: target.bucket,
      prefix,
      endpoint: target.endpoint,
      region: target.region,
      ...(target.credentials === undefined ? {} : { credentials: target.credentials }),
      maxBatchAgeMillis: MAX_BATCH_AGE_MILLIS,
    });
    const exporter = exporters.metricExporter();
    const spanExporter = exporters.spanExporter();
    const logExporter = exporters.logRecordExporter();
    const resource = resourceFromAttributes({
      'service.name': 'checkout',
      'service.version': '1.4.2',
      'service.instance.id': `checkout-${process.pid}`,
      'deployment.environment.name': 'demo',
    });
    const tracerProvider = new TracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor({ exporter: spanExporter })],
    });
    const loggerProvider = new LoggerProvider({
      resource,
      processors: [new BatchLogRecordProcessor({ exporter: logExporter })],
    });
    const meterProvider = new MeterProvider({
      resource,
      views: [
        {
          instrumentName: ORDER_VALUE_METRIC,
          aggregation: { type: AggregationType.EXPONENTIAL_HISTOGRAM },
        },
      ],
      readers: [
        new PeriodicExportingMetricReader({
          exporter,
          exportIntervalMillis: EXPORT_INTERVAL_MILLIS,
        }),
      ],
    });
    const service = new CheckoutService(meterProvider.getMeter('checkout-service', '1.4.2'), 120, {
      tracer: tracerProvider.getTracer('checkout-service', '1.4.2'),
      logger: loggerProvider.getLogger('checkout-service', '1.4.2') as ServiceLogger,
    });

    const ran = await simulate(seconds, service, exporter);
    print(`Simulated ${integer(service.requests)} requests in ${ran.toFixed(1)} s.`);

    // Shutdown collects and exports one last time, seals the open batches and uploads them.
    const shutdownStarted = performance.now();
    await Promise.all([
      meterProvider.shutdown(),
      tracerProvider.shutdown(),
      loggerProvider.shutdown(),
    ]);
    const shutdownMillis = performance.now() - shutdownStarted;
    print(`Shutdown took ${shutdownMillis.toFixed(0)} ms (last export, last upload, cleanup).`);
    print();

    const objects = await readBack(target, prefix);
    const problems = report(objects, exporter.stats(), where);
    const others = await readBackOthers(s3, target, prefix);
    problems.push(...reportSpansAndLogs(others, spanExporter.stats(), logExporter.stats()));
    if (problems.length > 0) throw new Error(problems.join('; '));
    print(
      'OK: every data point, span and log record the exporters uploaded was read back and decoded.',
    );
    print();
    // Every signal's objects, so that `otel-s3 spans`, `logs` and `stats` read the mirror too.
    const stored = [...objects, ...others.traces, ...others.logs];
    for (const line of await setUpCli(target, prefix, stored)) print(line);
  } finally {
    s3.destroy();
    await target.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`\ndemo failed: ${describeError(error)}\n`);
  // Exit even if something (a timer, a socket) would keep the process alive.
  process.exit(1);
});
