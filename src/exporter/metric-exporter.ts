import type { MeterProvider } from '@opentelemetry/api';
import type { ExportResult } from '@opentelemetry/core';
import type {
  AggregationTemporality,
  InstrumentType,
  PushMetricExporter,
  ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import { settleWithin } from '../base/deadline.js';
import { Episodes } from '../base/log.js';
import { type BodyMaker, createBodyMaker } from '../body/index.js';
import { configure } from '../config/environment.js';
import type { S3MetricExporterOptions } from '../config/options.js';
import type { ResolvedConfig } from '../config/resolve.js';
import { CONTENT_TYPES, encodingOfExtension, FORMAT_ROWS, objectName } from '../layout/formats.js';
import type { KeyTemplate } from '../layout/key-template.js';
import { failed } from '../pipeline/admission.js';
import { MemoryBudget } from '../pipeline/budget.js';
import { columnIntake, type Intake, recordIntake } from '../pipeline/intake.js';
import type { KeyInputs } from '../pipeline/open-batch.js';
import { Outcomes } from '../pipeline/outcomes.js';
import { Preparation } from '../pipeline/preparation.js';
import type { SealedBatch } from '../pipeline/sealed-batch.js';
import { type ExporterStats, emptySpoolStats, emptyStats } from '../pipeline/stats.js';
import { Uploader } from '../pipeline/uploader.js';
import { endpointName } from '../s3/client-settings.js';
import { createObjectWriter, type WriterHandle } from '../s3/create-writer.js';
import { describeError } from '../s3/errors.js';
import { metricsExport } from '../signals/metrics/export.js';
import { temporalitySelector } from '../signals/metrics/temporality.js';
import { SpoolAdopter } from '../spool/adopter.js';
import { nodeFileSystem } from '../spool/file-system.js';
import { claimSpoolDir } from '../spool/lock.js';
import type { MetaCheck } from '../spool/spool.js';
import { registerSelfMetrics } from './self-metrics.js';

type Lifecycle = 'running' | 'shutting-down' | 'shut-down';

const SIGNAL = metricsExport;

/**
 * OpenTelemetry push metric exporter that writes batches of OTLP metrics to S3-compatible
 * object storage. export() only appends to an in-memory batch under a short mutex; sealed
 * batches are compressed off the event loop and uploaded in the background, so neither
 * export() nor a shutdown can block on storage.
 *
 * This class owns the lifecycle and wires the parts: Admission (the open batch and sealing),
 * Preparation (body, key, write-ahead copy), Uploader (requests and retries), MemoryBudget
 * (the memory bound and how batches end), Outcomes (what is counted and logged), and with a
 * spool the SpoolKeeper.
 */
export class S3MetricExporter implements PushMetricExporter {
  readonly #config: ResolvedConfig;
  readonly #bodies: BodyMaker;
  readonly #s3: WriterHandle;
  readonly #episodes = new Episodes();
  readonly #outcomes: Outcomes;
  readonly #budget: MemoryBudget;
  readonly #intake: Intake<ResourceMetrics>;
  readonly #uploader: Uploader;
  readonly #spool: SpoolAdopter | undefined;
  readonly #selectTemporality: (type: InstrumentType) => AggregationTemporality;
  #state: Lifecycle = 'running';
  #shutdown: Promise<void> | undefined;

  /** Options win over OTEL_EXPORTER_S3_* environment variables, which win over defaults. */
  constructor(options: S3MetricExporterOptions = {}) {
    this.#config = configure(options);
    const c = this.#config;
    // First, so that a spool directory another exporter of this process has fails before
    // anything starts. No disk I/O: the directory is opened in the background (SpoolAdopter).
    const claim = c.spoolDir === undefined ? undefined : claimSpoolDir(c.spoolDir);
    let bodies: BodyMaker | undefined;
    let s3: WriterHandle | undefined;
    try {
      const row = FORMAT_ROWS[c.format];
      bodies = createBodyMaker({
        ...(row.body === 'parquet' ? { body: 'parquet', signal: SIGNAL.name } : { body: 'framed' }),
        compression: c.compression,
        level: c.compressionLevel,
      });
      this.#bodies = bodies;
      this.#selectTemporality = temporalitySelector(c.temporalityPreference);
      s3 = createObjectWriter(c);
      this.#s3 = s3;
      const stats = emptyStats();
      this.#outcomes = new Outcomes(stats, this.#episodes, {
        slowRetryMillis: c.retryMaxDelayMillis,
        maxBufferedBytes: c.maxBufferedBytes,
        requestTimeoutMillis: c.requestTimeoutMillis,
        flushTimeoutMillis: c.flushTimeoutMillis,
        endpoint: c.s3Client === undefined ? endpointName(c) : "the s3Client option's endpoint",
      });
      // The open batch's bytes count from the start; the batch itself is made below.
      let intake: Intake<ResourceMetrics> | undefined;
      const open = {
        get bytes() {
          return intake?.open.bytes ?? 0;
        },
      };
      this.#budget = new MemoryBudget(c.maxBufferedBytes, open, this.#outcomes);
      this.#uploader = new Uploader(
        {
          writer: this.#s3.writer,
          concurrency: c.uploadConcurrency,
          requestTimeoutMillis: c.requestTimeoutMillis,
          conditionalWrites: c.conditionalWrites,
          backoff: {
            initialDelayMillis: c.retryInitialDelayMillis,
            maxDelayMillis: c.retryMaxDelayMillis,
          },
        },
        this.#budget,
        this.#outcomes,
      );
      if (claim !== undefined && c.spoolDir !== undefined) {
        stats.spool = emptySpoolStats();
        this.#spool = new SpoolAdopter(
          claim,
          {
            dir: c.spoolDir,
            fs: c.spoolFileSystem ?? nodeFileSystem,
            maxSpoolBytes: c.maxSpoolBytes,
            loadConcurrency: c.uploadConcurrency,
            retryEveryMillis: c.retryMaxDelayMillis,
            diskTimeoutMillis: c.spoolTimeoutMillis,
            check: spoolFileCheck(c.keys),
          },
          {
            budget: this.#budget,
            uploader: this.#uploader,
            stats: stats.spool,
            episodes: this.#episodes,
          },
        );
      }
      const preparation = new Preparation({
        records: SIGNAL.records[c.format],
        columnsAsRecords: (columns) => SIGNAL.columnsAsRecords(columns),
        name: objectName(c.format, c.compression),
        fallback: row.fallback,
        bodies: this.#bodies,
        keys: c.keys,
        sendCrc32: this.#s3.owned && c.requestChecksumCalculation === 'WHEN_SUPPORTED',
        budget: this.#budget,
        uploader: this.#uploader,
        spool: this.#spool,
      });
      const admission = { maxBatchBytes: c.maxBatchBytes, maxBatchAgeMillis: c.maxBatchAgeMillis };
      const parts = {
        budget: this.#budget,
        outcomes: this.#outcomes,
        onSealed: (batch: SealedBatch) => preparation.add(batch),
        appendFailed: (error: unknown) => this.#outcomes.encodeFailed(error),
      };
      intake =
        row.body === 'parquet'
          ? columnIntake(() => SIGNAL.loadColumns(), admission, parts)
          : recordIntake(SIGNAL.records[c.format], admission, { ...parts, bodies: this.#bodies });
      this.#intake = intake;
      this.#spool?.start();
    } catch (error) {
      // Nothing may outlive a failed constructor: not the spool's claim (a retry would get a
      // SpoolLockedError naming this very process), not the worker, not the client.
      claim?.release();
      void bodies?.close();
      s3?.writer.destroy();
      throw error;
    }
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    if (this.#state !== 'running') {
      this.#outcomes.exportRefused();
      resultCallback(failed('export() after shutdown()'));
      return;
    }
    let accepted: Promise<ExportResult>;
    try {
      // An OTLP record is encoded here, outside any lock: the expensive part.
      accepted = this.#intake.accept(metrics, SIGNAL.count(metrics), this.#keyInputs(metrics));
    } catch (error) {
      this.#outcomes.encodeFailed(error);
      resultCallback(failed(`could not encode metrics: ${describeError(error)}`));
      return;
    }
    accepted.then(resultCallback, (error: unknown) => resultCallback(failed(describeError(error))));
  }

  /**
   * Seals the open batch and waits until every batch sealed so far is stored, at most
   * flushTimeoutMillis. It resolves at the deadline even if uploads are still failing (they go
   * on in the background, and an alert says how much is pending and why), because the SDK's
   * shutdown path skips exporter.shutdown() when forceFlush() rejects.
   */
  async forceFlush(): Promise<void> {
    if (this.#state === 'shut-down') return;
    await this.#intake.sealNow();
    const waited = await this.#waitForPending(this.#config.flushTimeoutMillis);
    if (waited === 'settled') this.#outcomes.flushFinished();
    else this.#outcomes.flushUnfinished(waited, this.#budget.pending());
  }

  /**
   * Stops accepting exports, seals the open batch and uploads what is pending until
   * flushTimeoutMillis, or until all of it is blocked on a configuration fault (no such bucket,
   * access denied); then aborts what is left (counted as dropped; with a spool, what is on disk
   * stays for the next run), stops the compression worker and closes the S3 client it created.
   * Never hangs; calling it again is a no-op.
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
    const stopLatency = this.#outcomes.onUploadLatency((millis) =>
      self.recordUploadLatency(millis),
    );
    return () => {
      stopLatency();
      self.unregister();
    };
  }

  selectAggregationTemporality(instrumentType: InstrumentType): AggregationTemporality {
    return this.#selectTemporality(instrumentType);
  }

  /** Counters and gauges of what the exporter did and holds; a fresh copy each call. */
  stats(): ExporterStats {
    const s = this.#outcomes.stats;
    return {
      ...s,
      uploadFailures: { ...s.uploadFailures },
      pointsDroppedByReason: { ...s.pointsDroppedByReason },
      uploadLatency: { ...s.uploadLatency },
      spool: s.spool && {
        ...s.spool,
        writeFailures: { ...s.spool.writeFailures },
        readFailures: { ...s.spool.readFailures },
      },
      bufferedBytes: this.#budget.bytes,
      pendingBatches: this.#budget.size,
    };
  }

  /** What the object key needs from an export, computed outside the lock. */
  #keyInputs(metrics: ResourceMetrics): KeyInputs {
    const keys = this.#config.keys;
    const attributes =
      keys.attributeNames.length === 0
        ? {}
        : keys.attributeValues(SIGNAL.resourceAttributes(metrics));
    return {
      attributes,
      group: keys.attributeNames.length === 0 ? '' : JSON.stringify(attributes),
      dataTimeMillis:
        this.#config.partitionTime === 'data' ? SIGNAL.oldestTimeMillis(metrics) : undefined,
    };
  }

  async #doShutdown(): Promise<void> {
    this.#state = 'shutting-down';
    this.#spool?.stopWaiting();
    await this.#intake.sealNow();
    const waited = await this.#waitForPending(this.#config.flushTimeoutMillis);
    if (waited !== 'settled') await this.#giveUp(waited);
    this.#uploader.clear();
    this.#state = 'shut-down';
    await this.#spool?.close();
    await this.#bodies.close();
    this.#s3.writer.destroy();
  }

  /**
   * Shutdown cannot store what is pending (deadline, or a fault waiting cannot fix): what is on
   * disk stays for the next run, the rest is lost.
   */
  async #giveUp(why: 'timeout' | 'blocked'): Promise<void> {
    await this.#spool?.settleWrites();
    this.#outcomes.gaveUp(why, this.#budget.abandonAll());
  }

  /**
   * Expedites waiting retries, then waits for everything pending now to be stored, at most
   * `millis`; it stops early when what is left is blocked on a configuration fault.
   */
  async #waitForPending(millis: number): Promise<'settled' | 'blocked' | 'timeout'> {
    this.#uploader.expedite();
    this.#spool?.pump();
    const batches = [...this.#budget];
    if (!(await settleWithin(this.#budget.whenSettledOrBlocked(batches), millis))) return 'timeout';
    return batches.every((b) => b.isSettled) ? 'settled' : 'blocked';
  }
}

/** A spool file's metadata must name an object this configuration writes: data, not commands. */
function spoolFileCheck(keys: KeyTemplate): MetaCheck {
  return (meta) => {
    const parsed = keys.parse(meta.key);
    if (parsed === undefined)
      return `its key ${JSON.stringify(meta.key.slice(0, 200))} is not one this exporter writes (prefix, filePrefix, keyTemplate)`;
    if (encodingOfExtension(parsed.extension) === undefined)
      return `its key ends in ${JSON.stringify(parsed.extension)}, not a known format`;
    if (!CONTENT_TYPES.has(meta.contentType))
      return `its content type ${JSON.stringify(meta.contentType.slice(0, 100))} is not one of ours`;
    return undefined;
  };
}
