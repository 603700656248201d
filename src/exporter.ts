import type { MeterProvider } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import type {
  AggregationTemporality,
  InstrumentType,
  PushMetricExporter,
  ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { Mutex } from 'async-mutex';
import PQueue from 'p-queue';
import { type KeyInputs, OpenBatch } from './batch.js';
import {
  type BodyMaker,
  BodyMakerError,
  createBodyMaker,
  type PreparedBody,
} from './compression/index.js';
import type { ResolvedConfig, S3MetricExporterOptions } from './config.js';
import { settleWithin } from './deadline.js';
import {
  countDataPoints,
  oldestEndTimeMillis,
  type RecordFormat,
  recordFormat,
} from './encoding/format.js';
import { configure } from './env.js';
import { Episodes, log, plural } from './log.js';
import { describeError } from './s3-errors.js';
import { PendingBatches, SealedBatch } from './sealed-batch.js';
import { registerSelfMetrics } from './self-metrics.js';
import { SpoolKeeper } from './spool/keeper.js';
import { Spool } from './spool/spool.js';
import { type ExporterStats, emptySpoolStats, emptyStats, increment } from './stats.js';
import { temporalitySelector } from './temporality.js';
import { type ClientHandle, createClient } from './upload/client.js';

import { type RetryVerdict, Uploader } from './upload/uploader.js';

type Lifecycle = 'running' | 'shutting-down' | 'shut-down';

interface Accepted {
  result: ExportResult;
  sealed: SealedBatch[];
}

const SUCCESS: ExportResult = { code: ExportResultCode.SUCCESS };
const failed = (message: string): ExportResult => ({
  code: ExportResultCode.FAILED,
  error: new Error(`otel-s3-exporter: ${message}`),
});

/**
 * OpenTelemetry push metric exporter that writes batches of OTLP metrics to S3-compatible
 * object storage. export() only appends to an in-memory batch under a short mutex; sealed
 * batches are compressed off the event loop and uploaded in the background, so neither
 * export() nor a shutdown can block on storage.
 */
export class S3MetricExporter implements PushMetricExporter {
  readonly #config: ResolvedConfig;
  readonly #format: RecordFormat;
  readonly #bodies: BodyMaker;
  /**
   * One batch at a time is compressed (and written to the spool): the ones waiting stay
   * `sealed`, droppable under memory pressure, instead of piling up in the worker out of reach.
   */
  readonly #preparations = new PQueue({ concurrency: 1 });
  /** Send a CRC32 we computed off the event loop, where our own client would compute one. */
  readonly #sendCrc32: boolean;
  readonly #s3: ClientHandle;
  readonly #uploader: Uploader;
  readonly #mutex = new Mutex();
  readonly #open: OpenBatch;
  readonly #pending = new PendingBatches();
  readonly #stats = emptyStats();
  readonly #episodes = new Episodes();
  readonly #selectTemporality: (type: InstrumentType) => AggregationTemporality;
  readonly #spool: SpoolKeeper | undefined;
  #ageTimer: NodeJS.Timeout | undefined;
  #seq = 0;
  #state: Lifecycle = 'running';
  #shutdown: Promise<void> | undefined;
  #onUploaded: ((latencyMillis: number) => void) | undefined;

  /** Options win over OTEL_EXPORTER_S3_* environment variables, which win over defaults. */
  constructor(options: S3MetricExporterOptions = {}) {
    this.#config = configure(options);
    const c = this.#config;
    // First, so that a spool directory owned by another exporter fails before anything starts.
    const spool = c.spoolDir === undefined ? undefined : Spool.open(c.spoolDir, c.spoolFileSystem);
    this.#format = recordFormat(c.format);
    this.#bodies = createBodyMaker(c.compression, c.compressionLevel);
    this.#open = new OpenBatch(this.#format);
    this.#selectTemporality = temporalitySelector(c.temporalityPreference);
    this.#s3 = createClient(c);
    this.#sendCrc32 = this.#s3.owned && c.requestChecksumCalculation === 'WHEN_SUPPORTED';
    this.#uploader = new Uploader({
      client: this.#s3.client,
      bucket: c.bucket,
      concurrency: c.uploadConcurrency,
      requestTimeoutMillis: c.requestTimeoutMillis,
      conditionalWrites: c.conditionalWrites,
      putObject: c.putObject,
      backoff: {
        initialDelayMillis: c.retryInitialDelayMillis,
        maxDelayMillis: c.retryMaxDelayMillis,
      },
      onAttempt: (batch) => {
        this.#stats.uploadAttempts++;
        if (batch.attempts > 1) this.#stats.retries++;
      },
      onUploaded: (batch, latency) => this.#uploaded(batch, latency),
      onRejected: (batch, reason, error) => this.#rejected(batch, reason, error),
      onRetry: (batch, verdict, error, delay) => this.#retrying(batch, verdict, error, delay),
    });
    this.#spool = spool && this.#keep(spool);
  }

  #keep(spool: Spool): SpoolKeeper {
    const c = this.#config;
    const stats = emptySpoolStats();
    this.#stats.spool = stats;
    const keeper = new SpoolKeeper(
      spool,
      {
        maxSpoolBytes: c.maxSpoolBytes,
        loadConcurrency: c.uploadConcurrency,
        retryEveryMillis: c.retryMaxDelayMillis,
      },
      {
        pending: this.#pending,
        stats,
        episodes: this.#episodes,
        hasRoom: (bytes) => this.#open.bytes + this.#pending.bytes + bytes <= c.maxBufferedBytes,
        submit: (batch) => this.#uploader.submit(batch),
        drop: (batch, reason) => this.#drop(batch, reason),
        nextSeq: () => ++this.#seq,
      },
    );
    keeper.restore().catch((error: unknown) => {
      log.error(
        `spool ${spool.dir}: could not read what an earlier run left: ${describeError(error)}`,
      );
    });
    return keeper;
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    if (this.#state !== 'running') {
      this.#stats.exportsRejected++;
      resultCallback(failed('export() after shutdown()'));
      return;
    }
    let record: Buffer;
    let points: number;
    let inputs: KeyInputs;
    try {
      // Encoding is the expensive part and needs no lock.
      record = this.#format.encode(metrics);
      points = countDataPoints(metrics);
      inputs = this.#keyInputs(metrics);
    } catch (error) {
      this.#stats.exportsRejected++;
      log.error(`could not encode metrics: ${describeError(error)}`);
      resultCallback(failed(`could not encode metrics: ${describeError(error)}`));
      return;
    }
    this.#mutex
      .runExclusive(() => this.#accept(record, points, inputs))
      .then(
        ({ result, sealed }) => {
          for (const batch of sealed) this.#process(batch);
          resultCallback(result);
        },
        (error: unknown) => resultCallback(failed(describeError(error))),
      );
  }

  /**
   * Seals the open batch and waits until every batch sealed so far is stored, at most
   * flushTimeoutMillis. It resolves at the deadline even if uploads are still failing (they go
   * on in the background, and a warning says how much is pending), because the SDK's shutdown
   * path skips exporter.shutdown() when forceFlush() rejects.
   */
  async forceFlush(): Promise<void> {
    if (this.#state === 'shut-down') return;
    await this.#sealNow();
    const waited = this.#waitForPending(this.#config.flushTimeoutMillis);
    if (!(await waited)) {
      log.warn(
        `forceFlush() deadline of ${this.#config.flushTimeoutMillis} ms passed with ${plural(this.#pending.size, 'batch', 'batches')} ` +
          `(${plural(this.#pending.bytes, 'byte')}) not yet stored; they keep retrying in the background`,
      );
    }
  }

  /**
   * Stops accepting exports, seals the open batch and uploads what is pending until
   * flushTimeoutMillis; then aborts what is left (counted as dropped), stops the compression
   * worker and closes the S3 client it created. Never hangs; calling it again is a no-op.
   */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#doShutdown();
    return this.#shutdown;
  }

  /**
   * Records stats() as OpenTelemetry metrics (meter `otel-s3-exporter`, instruments
   * `s3_exporter.*`) on `meterProvider`, which may be the one this exporter exports for.
   * Returns a function that stops it.
   */
  recordSelfMetrics(meterProvider: MeterProvider): () => void {
    const self = registerSelfMetrics(meterProvider, () => this.stats());
    const previous = this.#onUploaded;
    this.#onUploaded = (millis) => {
      previous?.(millis);
      self.recordUploadLatency(millis);
    };
    return () => self.unregister();
  }

  selectAggregationTemporality(instrumentType: InstrumentType): AggregationTemporality {
    return this.#selectTemporality(instrumentType);
  }

  /** Counters and gauges of what the exporter did and holds; a fresh copy each call. */
  stats(): ExporterStats {
    return {
      ...this.#stats,
      uploadFailures: { ...this.#stats.uploadFailures },
      pointsDroppedByReason: { ...this.#stats.pointsDroppedByReason },
      uploadLatency: { ...this.#stats.uploadLatency },
      spool: this.#stats.spool && {
        ...this.#stats.spool,
        writeFailures: { ...this.#stats.spool.writeFailures },
      },
      bufferedBytes: this.#open.bytes + this.#pending.bytes,
      pendingBatches: this.#pending.size,
    };
  }

  /** What the object key needs from an export, computed outside the lock. */
  #keyInputs(metrics: ResourceMetrics): KeyInputs {
    const keys = this.#config.keys;
    const attributes =
      keys.attributeNames.length === 0 ? {} : keys.attributeValues(metrics.resource.attributes);
    return {
      attributes,
      group: keys.attributeNames.length === 0 ? '' : JSON.stringify(attributes),
      dataTimeMillis:
        this.#config.partitionTime === 'data' ? oldestEndTimeMillis(metrics) : undefined,
    };
  }

  async #doShutdown(): Promise<void> {
    this.#state = 'shutting-down';
    await this.#sealNow();
    const c = this.#config;
    if (!(await this.#waitForPending(c.flushTimeoutMillis))) await this.#giveUpPending();
    this.#uploader.clear();
    this.#state = 'shut-down';
    this.#spool?.close();
    await this.#bodies.close();
    if (this.#s3.owned) this.#s3.client.destroy();
  }

  /** The shutdown deadline passed: what is on disk stays for the next run, the rest is lost. */
  async #giveUpPending(): Promise<void> {
    await this.#spool?.settleWrites();
    let left = 0;
    let dropped = 0;
    let droppedBytes = 0;
    for (const batch of [...this.#pending]) {
      if (batch.spool !== undefined) {
        left++;
        this.#pending.delete(batch);
        batch.settle('spooled');
        this.#uploader.cancel(batch);
      } else {
        dropped++;
        droppedBytes += batch.rawBytes;
        this.#drop(batch, 'shutdown');
      }
    }
    if (this.#stats.spool !== undefined) this.#stats.spool.leftAtShutdown += left;
    const kept =
      left > 0 ? `; ${plural(left, 'batch', 'batches')} stay in the spool for the next run` : '';
    const lost =
      dropped > 0
        ? `: dropped ${plural(dropped, 'batch', 'batches')} (${plural(droppedBytes, 'byte')}) not yet stored`
        : '';
    (dropped > 0 ? log.error : log.warn)(
      `shutdown() deadline of ${this.#config.flushTimeoutMillis} ms passed${lost}${kept}`,
    );
  }

  async #sealNow(): Promise<void> {
    const sealed = await this.#mutex.runExclusive(() => this.#seal());
    if (sealed !== undefined) this.#process(sealed);
  }

  /** Expedites waiting retries, then waits for everything pending now, at most `millis`. */
  #waitForPending(millis: number): Promise<boolean> {
    this.#uploader.expedite();
    this.#spool?.pump();
    const all = Promise.all(Array.from(this.#pending, (batch) => batch.settled));
    return settleWithin(all, millis);
  }

  // ---- inside the mutex: no I/O, no await ----

  #accept(record: Buffer, points: number, inputs: KeyInputs): Accepted {
    const c = this.#config;
    const open = this.#open;
    const sealed: SealedBatch[] = [];
    const sealFirst =
      !open.isEmpty && (open.bytesWith(record.length) > c.maxBatchBytes || open.keyDiffers(inputs));
    const growth = sealFirst
      ? record.length + this.#format.overhead(1)
      : open.bytesWith(record.length) - open.bytes;
    if (!this.#makeRoom(growth)) {
      this.#stats.exportsRejected++;
      this.#countDrop('buffer-full', 0, points, record.length);
      this.#episodes.report(
        'buffer-full',
        'warn',
        `maxBufferedBytes (${c.maxBufferedBytes}) reached with nothing left to drop: rejecting exports until uploads catch up`,
      );
      return { result: failed(`maxBufferedBytes (${c.maxBufferedBytes}) reached`), sealed };
    }
    if (sealFirst) this.#pushSealed(sealed, this.#seal());
    const wasEmpty = open.isEmpty;
    open.append(record, points, inputs);
    this.#stats.exportsAccepted++;
    this.#stats.peakBufferedBytes = Math.max(
      this.#stats.peakBufferedBytes,
      open.bytes + this.#pending.bytes,
    );
    if (open.bytes >= c.maxBatchBytes) {
      this.#pushSealed(sealed, this.#seal());
    } else if (wasEmpty) {
      this.#ageTimer = setTimeout(() => void this.#sealNow(), c.maxBatchAgeMillis);
      // An open batch never keeps the process alive: shutdown() is what flushes it.
      this.#ageTimer.unref();
    }
    return { result: SUCCESS, sealed };
  }

  #pushSealed(list: SealedBatch[], batch: SealedBatch | undefined): void {
    if (batch !== undefined) list.push(batch);
  }

  /** Drops the oldest idle sealed batches until `bytes` more fit under maxBufferedBytes. */
  #makeRoom(bytes: number): boolean {
    const limit = this.#config.maxBufferedBytes;
    while (this.#open.bytes + this.#pending.bytes + bytes > limit) {
      // With a spool, batches on disk go first: their memory is released, nothing is lost.
      const onDisk = this.#spool && this.#pending.oldestDroppable((b) => b.spool !== undefined);
      if (onDisk) {
        this.#uploader.cancel(onDisk);
        this.#spool?.pageOut(onDisk);
        continue;
      }
      const victim = this.#pending.oldestDroppable();
      if (victim === undefined) return false;
      this.#drop(victim, 'buffer-full');
      this.#episodes.report(
        'buffer-full',
        'warn',
        `maxBufferedBytes (${limit}) reached: dropping the oldest batches until uploads catch up (counted in stats().pointsDroppedByReason)`,
      );
    }
    return true;
  }

  /** Swaps the open batch out. The caller processes the result outside the mutex. */
  #seal(): SealedBatch | undefined {
    clearTimeout(this.#ageTimer);
    this.#ageTimer = undefined;
    if (this.#open.isEmpty) return undefined;
    const rawBytes = this.#open.bytes;
    const contents = this.#open.take();
    const batch = new SealedBatch(
      ++this.#seq,
      new Date(),
      contents.records,
      rawBytes,
      contents.points,
    );
    batch.attributes = contents.attributes;
    batch.dataTimeMillis = contents.dataTimeMillis;
    this.#pending.add(batch);
    this.#stats.batchesSealed++;
    return batch;
  }

  // ---- outside the mutex ----

  /** Assembles, compresses (off the event loop), names and queues a sealed batch. */
  #process(batch: SealedBatch): void {
    this.#preparations
      .add(() => this.#prepare(batch))
      .catch((error: unknown) => {
        log.error(`internal error preparing batch ${batch.seq}: ${describeError(error)}`);
        this.#drop(batch, 'internal-error');
      });
  }

  async #prepare(batch: SealedBatch): Promise<void> {
    const records = batch.records;
    if (records === undefined || batch.state !== 'sealed') return; // dropped while it waited
    batch.records = undefined;
    batch.state = 'compressing';
    let prepared: PreparedBody;
    let suffix: { extension: string; contentType: string | undefined } = this.#bodies;
    try {
      prepared = await this.#bodies.make({
        records,
        framing: this.#format.framing,
        sha256: true,
        crc32: this.#sendCrc32,
      });
    } catch (error) {
      if (batch.state !== 'compressing') return; // dropped at shutdown while compressing
      if (!(error instanceof BodyMakerError) || error.records === undefined) throw error;
      // Never lose a batch to the compressor: store it uncompressed, under an uncompressed name.
      log.error(`${describeError(error)}; uploading batch ${batch.seq} uncompressed`);
      const recordBytes = error.records.reduce((n, r) => n + r.length, 0);
      prepared = {
        body: this.#format.assemble(error.records, recordBytes),
        sha256: undefined,
        crc32: undefined,
      };
      suffix = { extension: '', contentType: undefined };
    }
    if (batch.state !== 'compressing') return;
    batch.key = this.#config.keys.render({
      time: batch.dataTimeMillis === undefined ? batch.sealedAt : new Date(batch.dataTimeMillis),
      attributes: batch.attributes,
      extension: this.#format.extension + suffix.extension,
      id: batch.id,
    });
    batch.contentType = suffix.contentType ?? this.#format.contentType;
    batch.body = prepared.body;
    batch.sha256 = prepared.sha256;
    batch.crc32 = prepared.crc32;
    this.#pending.resize(batch, prepared.body.length);
    if (this.#spool !== undefined) {
      // Write-ahead: durable before the first attempt, so a crash cannot lose a sealed batch.
      await this.#spool.persist(batch);
      if (batch.state !== 'compressing') return;
    }
    this.#uploader.submit(batch);
  }

  #uploaded(batch: SealedBatch, latencyMillis: number): void {
    const s = this.#stats;
    s.batchesUploaded++;
    s.bytesUploaded += batch.body?.length ?? 0;
    s.rawBytesUploaded += batch.rawBytes;
    s.pointsUploaded += batch.points;
    const latency = s.uploadLatency;
    latency.count++;
    latency.totalMillis += latencyMillis;
    latency.maxMillis = Math.max(latency.maxMillis, latencyMillis);
    latency.lastMillis = latencyMillis;
    this.#onUploaded?.(latencyMillis);
    this.#pending.delete(batch);
    batch.settle('uploaded');
    this.#spool?.uploaded(batch);
    this.#episodes.clear('upload-failing', (n) => `uploads recovered after ${n} failed attempts`);
    this.#episodes.clear('buffer-full');
    this.#episodes.clearMatching(
      'config:',
      (key) => `uploads work again: the ${key.slice(7)} fault is fixed`,
    );
  }

  #rejected(batch: SealedBatch, reason: string, error: unknown): void {
    increment(this.#stats.uploadFailures, reason);
    log.error(
      `S3 rejected ${batch.key} for good (${describeError(error)}); dropping the batch of ${batch.points} data points`,
    );
    this.#drop(batch, 'rejected');
  }

  #retrying(batch: SealedBatch, verdict: RetryVerdict, error: unknown, delayMillis: number): void {
    increment(this.#stats.uploadFailures, verdict.reason);
    const what = `upload of ${batch.key} failed (${describeError(error)})`;
    switch (verdict.kind) {
      case 'config':
        this.#episodes.report(
          `config:${verdict.reason}`,
          'error',
          `${what}: ${verdict.hint}. Data is kept within maxBufferedBytes and retried about every ${Math.round(this.#config.retryMaxDelayMillis / 1000)} s`,
        );
        break;
      case 'conditional-unsupported':
        log.warn(
          `${what}: the server does not support conditional writes (If-None-Match); continuing without them`,
        );
        break;
      case 'retry':
        this.#episodes.report('upload-failing', 'warn', `${what}; retrying with backoff`);
        log.debug(`${what}; attempt ${batch.attempts}, retrying in ${delayMillis} ms`);
        break;
    }
  }

  #drop(batch: SealedBatch, reason: string): void {
    if (batch.state === 'settled') return;
    this.#countDrop(reason, 1, batch.points, batch.rawBytes);
    this.#pending.delete(batch);
    this.#uploader.cancel(batch);
    batch.settle('dropped');
    this.#spool?.forget(batch);
  }

  #countDrop(reason: string, batches: number, points: number, bytes: number): void {
    const s = this.#stats;
    s.batchesDropped += batches;
    s.pointsDropped += points;
    s.bytesDropped += bytes;
    increment(s.pointsDroppedByReason, reason, points);
  }
}
