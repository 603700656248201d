import type { MeterProvider } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { settleWithin } from '../base/deadline.js';
import { alertsEmitted } from '../base/log.js';
import { type BodyMaker, createBodyMaker } from '../body/index.js';
import type { ResolvedConfig } from '../config/resolve.js';
import { newTally } from '../encoding/records.js';
import { CONTENT_TYPES, encodingOfExtension, FORMAT_ROWS, objectName } from '../layout/formats.js';
import type { KeyTemplate } from '../layout/key-template.js';
import { failed, UnsealedBatchError } from '../pipeline/admission.js';
import type { BatchOwner } from '../pipeline/budget.js';
import { columnIntake, type Intake, recordIntake } from '../pipeline/intake.js';
import type { JournalRecordFormat } from '../pipeline/journal-port.js';
import type { KeyInputs } from '../pipeline/open-batch.js';
import { Outcomes, type UnfinishedWhy } from '../pipeline/outcomes.js';
import { Preparation } from '../pipeline/preparation.js';
import type { SealedBatch } from '../pipeline/sealed-batch.js';
import { type ExporterStats, emptySpoolStats, emptyStats } from '../pipeline/stats.js';
import { endpointName } from '../s3/client-settings.js';
import { describeError } from '../s3/errors.js';
import type { SignalExport } from '../signals/signal.js';
import { SpoolAdopter } from '../spool/adopter.js';
import { nodeFileSystem } from '../spool/file-system.js';
import { claimSpoolDir } from '../spool/lock.js';
import type { MetaCheck } from '../spool/spool.js';
import { registerSelfMetrics } from './self-metrics.js';
import { createSharedParts, type SharedParts } from './shared-parts.js';

type Lifecycle = 'running' | 'shutting-down' | 'shut-down';

const SUCCESS: ExportResult = { code: ExportResultCode.SUCCESS };

/**
 * How long a shutdown past its deadline waits for the journal's last group commit (the time the
 * spool's writes in flight get too): a disk that stops answering as shutdown begins must not hold
 * it for spoolTimeoutMillis. A chain not committed by then counts as dropped; the next run stores
 * what the disk took of it.
 */
const SHUTDOWN_COMMIT_GRACE_MILLIS = 250;

/**
 * All a shutdown waits for the spool's disk once its uploads are done or given up: the writes in
 * flight, the last group commit, the journal's close and the lock's release together. What a hung
 * disk still holds then goes on unwatched (the directory's claim is released when it ends).
 */
const SHUTDOWN_DISK_GRACE_MILLIS = 1_000;

/**
 * An exporter of one signal to S3-compatible object storage: the lifecycle (running, shutting
 * down, shut down) and the wiring of the parts, whatever the signal. export() only appends to an
 * in-memory batch under a short mutex; sealed batches are compressed off the event loop and
 * uploaded in the background, so neither export() nor a shutdown can block on storage.
 *
 * Its own parts: Admission (the open batch and sealing), Preparation (body, key, write-ahead
 * copy), Outcomes (what is counted and logged), and with a spool the SpoolAdopter. Shared with
 * the exporters of other signals made by one S3Exporters (or its own otherwise): the S3
 * connection, the MemoryBudget (the memory bound and how batches end) and the Uploader.
 * S3MetricExporter, S3SpanExporter and S3LogRecordExporter are this class for their signal.
 */
export class SignalExporter<Item> {
  readonly #config: ResolvedConfig;
  readonly #signal: SignalExport<Item>;
  readonly #shared: SharedParts;
  readonly #leave: () => void;
  readonly #bodies: BodyMaker;
  /** Whether the body maker was told to load what its first body needs (at the first export). */
  #prepared = false;
  readonly #owner: BatchOwner;
  readonly #outcomes: Outcomes;
  readonly #intake: Intake<Item>;
  readonly #spool: SpoolAdopter | undefined;
  #state: Lifecycle = 'running';
  #shutdown: Promise<void> | undefined;

  /**
   * `config`: this exporter's resolved options; `shared`: the parts it shares with the exporters
   * of other signals (made from `config` when not given).
   */
  constructor(config: ResolvedConfig, signal: SignalExport<Item>, shared?: SharedParts) {
    this.#config = config;
    this.#signal = signal;
    const c = config;
    // First, so that a spool directory another exporter of this process has fails before
    // anything starts. No disk I/O: the directory is opened in the background (SpoolAdopter).
    const claim = c.spoolDir === undefined ? undefined : claimSpoolDir(c.spoolDir);
    let bodies: BodyMaker | undefined;
    let made: SharedParts | undefined;
    // Set below, once it exists: the spool hands it the batches it replays from the journal.
    let preparation: Preparation | undefined;
    // What the journal keeps of an export: the format's records; Parquet's as OTLP/protobuf.
    const journalRecords = signal.records[c.format === 'parquet' ? 'otlp-proto' : c.format];
    try {
      const row = FORMAT_ROWS[c.format];
      bodies = createBodyMaker({
        ...(row.body === 'parquet'
          ? { body: 'parquet', signal: signal.name }
          : { body: 'framed' as const }),
        compression: c.compression,
        level: c.compressionLevel,
        recordsRepeat: signal.recordsRepeat,
        maxBatchBytes: c.maxBatchBytes,
      });
      this.#bodies = bodies;
      if (shared === undefined) made = createSharedParts(c);
      this.#shared = shared ?? (made as SharedParts);
      const { budget, uploader, episodes, s3 } = this.#shared;
      const stats = emptyStats();
      this.#outcomes = new Outcomes(stats, episodes, {
        slowRetryMillis: c.retryMaxDelayMillis,
        maxBufferedBytes: budget.limit,
        requestTimeoutMillis: c.requestTimeoutMillis,
        flushTimeoutMillis: c.flushTimeoutMillis,
        endpoint: c.s3Client === undefined ? endpointName(c) : "the s3Client option's endpoint",
        signal: signal.name,
      });
      this.#owner = { outcomes: this.#outcomes, pager: undefined };
      if (claim !== undefined && c.spoolDir !== undefined) {
        stats.spool = emptySpoolStats();
        this.#spool = new SpoolAdopter(
          claim,
          {
            dir: c.spoolDir,
            signal: signal.name,
            fs: c.spoolFileSystem ?? nodeFileSystem,
            lock: c.spoolLock,
            maxSpoolBytes: c.maxSpoolBytes,
            loadConcurrency: c.uploadConcurrency,
            retryEveryMillis: c.retryMaxDelayMillis,
            diskTimeoutMillis: c.spoolTimeoutMillis,
            check: spoolFileCheck(c.spoolKeys),
            lost: (items) =>
              this.#outcomes.quarantinedBatch(items?.points ?? 0, items?.rawBytes ?? 0),
            journal:
              c.journalSyncMillis === 0
                ? undefined
                : {
                    signal: signal.name,
                    // Parquet journals OTLP/protobuf records: 5x cheaper to encode than JSON.
                    format: c.format === 'otlp-json' ? 'otlp-json' : 'otlp-proto',
                    syncMillis: c.journalSyncMillis,
                    // A batch (Parquet: its JSON, larger than its columns) and what one interval adds.
                    maxPendingBytes: Math.max(2 * c.maxBatchBytes, Math.floor(budget.limit / 4)),
                    overhead: (count, format) => signal.records[format].overhead(count),
                    lost: (points, rawBytes) => this.#outcomes.quarantinedBatch(points, rawBytes),
                    unwritten: (points, rawBytes) =>
                      this.#outcomes.journalUnwritten(points, rawBytes),
                  },
          },
          {
            budget,
            owner: this.#owner,
            uploader,
            stats: stats.spool,
            episodes,
            // One at a time: each on disk before the next is rebuilt, so making room for the
            // next pages it out, and one without room is paged out once on disk, never dropped.
            replay: async (batch) => {
              budget.admitRestored(batch, batch.rawBytes, this.#owner);
              await preparation?.add(batch);
            },
          },
        );
      }
      const replayedName = (format: JournalRecordFormat) => ({
        records: signal.records[format],
        name: objectName(format, row.body === 'parquet' ? 'none' : c.compression),
        fallback: FORMAT_ROWS[format].fallback,
      });
      preparation = new Preparation({
        records: signal.records[c.format],
        columnsAsRecords: (columns) => signal.columnsAsRecords(columns),
        name: objectName(c.format, c.compression),
        fallback: row.fallback,
        bodies,
        columns: row.body === 'parquet',
        // A chain of either kind is replayed, whatever this run's format (it may have changed):
        // compressed as this run's objects, or as they are where the body is made from columns.
        replayed: {
          'otlp-json': replayedName('otlp-json'),
          'otlp-proto': replayedName('otlp-proto'),
        },
        keys: c.keys,
        sendCrc32: s3.owned && c.requestChecksumCalculation === 'WHEN_SUPPORTED',
        budget,
        uploader,
        spool: this.#spool,
      });
      const admission = {
        maxBatchBytes: c.maxBatchBytes,
        maxBatchAgeMillis: c.maxBatchAgeMillis,
        times: c.partitionTime === 'data',
      };
      const prepare = preparation;
      const journal = this.#spool?.journal;
      const parts = {
        budget,
        owner: this.#owner,
        onSealed: (batch: SealedBatch) => void prepare.add(batch),
        appendFailed: (error: unknown) => this.#outcomes.encodeFailed(error),
        journal,
      };
      this.#intake =
        row.body === 'parquet'
          ? columnIntake(() => signal.loadColumns(), admission, {
              ...parts,
              // What an append would have counted, for an export shutdown() gave up on.
              itemsOf: (item: Item) => {
                const tally = newTally(false);
                try {
                  journalRecords.encode(item, tally);
                } catch {
                  // What it counted before the item that cannot be encoded.
                }
                return tally.items;
              },
              // Columns have no record: the journal keeps the export as OTLP/protobuf.
              journalEncode:
                journal === undefined
                  ? undefined
                  : (item: Item) => {
                      const tally = newTally(admission.times);
                      const record = journalRecords.encode(item, tally);
                      return { record, points: tally.items, dataTimeMillis: tally.oldestMillis };
                    },
            })
          : recordIntake(signal.records[c.format], admission, { ...parts, bodies });
      const intake = this.#intake;
      budget.addOpen(intake.open, {
        owner: this.#owner,
        seal: () => {
          if (intake.open.bytes === 0) return;
          void intake.sealNow().catch((error: unknown) => this.#outcomes.sealDeferred(error));
        },
      });
      if (journal !== undefined) budget.addOpen(journal);
      this.#leave = this.#shared.join();
      this.#spool?.start();
    } catch (error) {
      // Nothing may outlive a failed constructor: not the spool's claim (a retry would get a
      // SpoolLockedError naming this very process), not the worker, not the client.
      claim?.release();
      void bodies?.close();
      made?.s3.writer.destroy();
      throw error;
    }
  }

  /**
   * Appends one export to the open batch and answers once it is there (never after I/O):
   * SUCCESS, or FAILED after shutdown() or when it cannot fit under maxBufferedBytes.
   */
  export(item: Item, resultCallback: (result: ExportResult) => void): void {
    if (this.#state !== 'running') {
      this.#outcomes.answered(false);
      resultCallback(failed('export() after shutdown()'));
      return;
    }
    if (!this.#prepared) {
      this.#prepared = true;
      this.#bodies.prepare?.();
    }
    const accepted: Promise<ExportResult>[] = [];
    let notEncoded: ExportResult | undefined;
    try {
      // One append per resource: objects keyed by a resource attribute hold that resource's
      // items only. An OTLP record is encoded here, outside any lock: the expensive part.
      this.#signal.splitByResource(item, {
        part: (part) => accepted.push(this.#intake.accept(part, this.#keyInputs(part))),
      });
    } catch (error) {
      this.#outcomes.encodeFailed(error);
      notEncoded = failed(`could not encode ${this.#signal.name}: ${describeError(error)}`);
    }
    // One answer, counted once, once the parts taken before are in (each one handled, also when
    // a later part could not be encoded): FAILED if any part was not taken (those taken are
    // stored).
    const answer = (result: ExportResult) => {
      this.#outcomes.answered(result.code === ExportResultCode.SUCCESS);
      resultCallback(result);
    };
    Promise.all(accepted).then(
      (results) =>
        answer(notEncoded ?? results.find((r) => r.code !== ExportResultCode.SUCCESS) ?? SUCCESS),
      (error: unknown) => answer(notEncoded ?? failed(describeError(error))),
    );
  }

  /**
   * Seals the open batch and waits until every batch sealed so far is stored, at most
   * flushTimeoutMillis. It resolves at the deadline even if uploads are still failing (they go
   * on in the background, and an alert says how much is pending and why), because the SDK's
   * shutdown path skips exporter.shutdown() when forceFlush() rejects. During shutdown() it
   * waits for the shutdown instead, which alone says what it stored and what it gave up.
   */
  async forceFlush(): Promise<void> {
    if (this.#state === 'shut-down') return;
    if (this.#shutdown !== undefined) return this.#shutdown;
    const { waited, unsealed } = await this.#sealAndWait('forceFlush()');
    if (waited !== 'settled')
      this.#outcomes.flushUnfinished(waited, this.#shared.budget.pending(this.#owner));
    // When the open batch could not be sealed, sealFailed() has said so: not stored everything.
    else if (!unsealed) this.#outcomes.flushFinished();
    await alertsEmitted();
  }

  /**
   * Stops accepting exports, seals the open batch and uploads what is pending until
   * flushTimeoutMillis, or until all of it is blocked on a configuration fault (no such bucket,
   * access denied); then aborts what is left (counted as dropped; with a spool, what is on disk
   * stays for the next run), stops the compression worker and, once the exporters that share it
   * are shut down too, closes the S3 client it created. Never hangs; calling it again is a no-op.
   */
  shutdown(): Promise<void> {
    this.#shutdown ??= this.#doShutdown();
    return this.#shutdown;
  }

  /**
   * Records stats() as OpenTelemetry metrics (meter `otel-s3-exporter`, instruments
   * `s3_exporter.*`, attribute `signal`) on `meterProvider`, which may be the one this exporter
   * exports for. Returns a function that stops it.
   */
  recordSelfMetrics(meterProvider: MeterProvider): () => void {
    const self = registerSelfMetrics(meterProvider, this.#signal.name, () => this.stats());
    const stopLatency = this.#outcomes.onUploadLatency((millis) =>
      self.recordUploadLatency(millis),
    );
    return () => {
      stopLatency();
      self.unregister();
    };
  }

  /** Counters and gauges of what the exporter did and holds; a fresh copy each call. */
  stats(): ExporterStats {
    const s = this.#outcomes.stats;
    const { budget } = this.#shared;
    return {
      ...s,
      uploadFailures: { ...s.uploadFailures },
      pointsDroppedByReason: { ...s.pointsDroppedByReason },
      uploadLatency: { ...s.uploadLatency },
      spool: s.spool && {
        ...s.spool,
        writeFailures: { ...s.spool.writeFailures },
        readFailures: { ...s.spool.readFailures },
        journalWriteFailures: { ...s.spool.journalWriteFailures },
      },
      bufferedBytes: budget.heldBy(this.#owner, this.#intake.open, this.#spool?.journal),
      pendingBatches: budget.pending(this.#owner).batches,
    };
  }

  /** What the object key needs from an export, computed outside the lock. */
  #keyInputs(item: Item): KeyInputs {
    const keys = this.#config.keys;
    const attributes =
      keys.attributeNames.length === 0
        ? {}
        : keys.attributeValues(this.#signal.resourceAttributes(item));
    return {
      attributes,
      group: keys.attributeNames.length === 0 ? '' : JSON.stringify(attributes),
      // Counted by the one walk of the export, its encoding or its append.
      dataTimeMillis: undefined,
    };
  }

  async #doShutdown(): Promise<void> {
    this.#state = 'shutting-down';
    this.#spool?.stopWaiting();
    const { waited } = await this.#sealAndWait('shutdown()');
    const diskBy = performance.now() + SHUTDOWN_DISK_GRACE_MILLIS;
    if (waited !== 'settled') await this.#giveUp(waited);
    this.#state = 'shut-down';
    this.#outcomes.close();
    await this.#spool?.close(Math.max(0, diskBy - performance.now()));
    await this.#bodies.close();
    this.#leave();
    await alertsEmitted();
  }

  /**
   * Seals the open batch and waits for everything pending to be stored, both within
   * flushTimeoutMillis: sealing Parquet's batch waits for its column builders to load (a dynamic
   * import), which must not hold a flush or a shutdown past its deadline either.
   */
  async #sealAndWait(
    caller: 'forceFlush()' | 'shutdown()',
  ): Promise<{ waited: UnfinishedWhy | 'settled'; unsealed: boolean }> {
    const millis = this.#config.flushTimeoutMillis;
    const deadline = performance.now() + millis;
    // A seal that throws: a flush leaves the items in the open batch; a shutdown empties it.
    let unsealed = false;
    const sealing = this.#intake.sealNow(caller === 'shutdown()').catch((error: unknown) => {
      unsealed = true;
      if (error instanceof UnsealedBatchError)
        this.#outcomes.sealFailed(caller, error.cause, error);
      else this.#outcomes.sealFailed(caller, error);
    });
    if (!(await settleWithin(sealing, millis))) {
      // A flush leaves them waiting (the builders may load yet); a shutdown answers them.
      const dropped =
        caller === 'shutdown()'
          ? this.#intake.abandonWaiting(
              `shutdown() gave up waiting for the Parquet column builders to load (flushTimeoutMillis ${millis} ms)`,
            )
          : undefined;
      this.#outcomes.sealUnfinished(caller, dropped);
      return { waited: 'timeout', unsealed };
    }
    // What was sealed before is waited for all the same.
    return {
      waited: await this.#waitForPending(Math.max(0, deadline - performance.now())),
      unsealed,
    };
  }

  /**
   * Shutdown cannot store what is pending (deadline, or a fault waiting cannot fix): what is on
   * disk stays for the next run, the rest is lost.
   */
  async #giveUp(why: UnfinishedWhy): Promise<void> {
    await this.#spool?.settleWrites();
    const budget = this.#shared.budget;
    // A batch with no spool file (its write failed) may be whole in its journal chain.
    const chains = budget
      .batchesOf(this.#owner)
      .flatMap((b) => (b.spool === undefined && b.journal !== undefined ? [b.journal] : []));
    const whole =
      (await this.#spool?.journal?.whole(chains, SHUTDOWN_COMMIT_GRACE_MILLIS)) ??
      new Set<string>();
    this.#outcomes.gaveUp(
      why,
      budget.abandonAll(this.#owner, (b) => b.journal !== undefined && whole.has(b.journal)),
    );
  }

  /**
   * Expedites this exporter's retries in an ordinary backoff (not the other signals', nor a
   * server's Retry-After) and starts their backoff over, then waits for everything of this
   * exporter pending now to be stored, at most `millis`. It stops early when what is left is
   * blocked on a configuration fault, or waits for the server's Retry-After (or the
   * configuration-fault pace) past the deadline: no attempt can come before it, so sitting out
   * the deadline stores nothing.
   */
  async #waitForPending(millis: number): Promise<UnfinishedWhy | 'settled'> {
    const { budget, uploader } = this.#shared;
    const batches = budget.batchesOf(this.#owner);
    const deadline = performance.now() + millis;
    const unhurry = uploader.hurry(batches);
    this.#spool?.pump();
    const futile = (b: SealedBatch) => uploader.waitsPast(b, deadline);
    // A batch meeting a Retry-After meanwhile waits the server's time, not a longer backoff.
    const stop = budget.onChange(() => uploader.keepToServerTime(batches));
    const giveUp = new AbortController();
    try {
      const waited = budget.whenSettledOrBlocked(batches, futile, giveUp.signal);
      if (!(await settleWithin(waited, millis))) return 'timeout';
    } finally {
      giveUp.abort();
      stop();
      unhurry();
    }
    const left = batches.filter((b) => !b.isSettled);
    if (left.length === 0) return 'settled';
    return left.every((b) => b.blocked) ? 'blocked' : 'waiting';
  }
}

/** A spool file's metadata must name an object this configuration writes: data, not commands. */
function spoolFileCheck(layouts: readonly KeyTemplate[]): MetaCheck {
  return (meta) => {
    const parsed = layouts.map((keys) => keys.parse(meta.key)).find((p) => p !== undefined);
    if (parsed === undefined)
      return `its key ${JSON.stringify(meta.key.slice(0, 200))} is not one this exporter writes (prefix, filePrefix, keyTemplate)`;
    if (encodingOfExtension(parsed.extension) === undefined)
      return `its key ends in ${JSON.stringify(parsed.extension)}, not a known format`;
    if (!CONTENT_TYPES.has(meta.contentType))
      return `its content type ${JSON.stringify(meta.contentType.slice(0, 100))} is not one of ours`;
    return undefined;
  };
}
