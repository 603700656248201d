import { Episodes } from '../base/log.js';
import type { ResolvedConfig } from '../config/resolve.js';
import { accessCheckKey } from '../layout/outputs.js';
import { MemoryBudget } from '../pipeline/budget.js';
import { StartupCheck } from '../pipeline/startup-check.js';
import { Uploader } from '../pipeline/uploader.js';
import { endpointName } from '../s3/client-settings.js';
import { createObjectWriter, type WriterHandle } from '../s3/create-writer.js';

/**
 * What the exporters of one bound share: the S3 connection, the memory budget (one
 * maxBufferedBytes for all of them), the uploader (one uploadConcurrency, one verdict on
 * conditional writes) and the alerts (one episode per condition, not one per signal). An exporter
 * made alone has parts of its own; the exporters of one S3Exporters share one set.
 */
export interface SharedParts {
  readonly s3: WriterHandle;
  readonly budget: MemoryBudget;
  readonly uploader: Uploader;
  readonly episodes: Episodes;
  /** The startup check of the connection, once for all its exporters (startupCheck: false: none). */
  readonly startupCheck: StartupCheck | undefined;
  /** An exporter starts using the parts; the returned function is its leaving (at shutdown). */
  join(): () => void;
}

/**
 * Where an exporter made by S3Exporters finds the parts it shares: a symbol-keyed property of the
 * options it is given (Object.keys does not list it, so the option checks never see it).
 */
export const SHARED_PARTS: unique symbol = Symbol('otel-s3-exporter shared parts');

/** The shared parts an exporter's options carry, if any. */
export function sharedPartsOf(options: object): SharedParts | undefined {
  return (options as { [SHARED_PARTS]?: SharedParts })[SHARED_PARTS];
}

/** The options the shared parts are made from (the exporter's resolved configuration). */
export type SharedSettings = Pick<
  ResolvedConfig,
  | 'bucket'
  | 'prefix'
  | 'region'
  | 'endpoint'
  | 'forcePathStyle'
  | 'credentials'
  | 's3Client'
  | 'requestChecksumCalculation'
  | 'userAgent'
  | 'putObject'
  | 'maxBufferedBytes'
  | 'uploadConcurrency'
  | 'requestTimeoutMillis'
  | 'conditionalWrites'
  | 'startupCheck'
  | 'retryInitialDelayMillis'
  | 'retryMaxDelayMillis'
>;

/** The name of the startup check's object under `{prefix}/_otel_s3_check/`. */
export const STARTUP_CHECK_NAME = 'startup.check';

/**
 * Makes the shared parts. Nothing is opened here: the startup check starts when the first
 * exporter joins, and is stopped, and the connection closed, when the last one has left.
 */
export function createSharedParts(c: SharedSettings): SharedParts {
  const s3 = createObjectWriter(c);
  const budget = new MemoryBudget(c.maxBufferedBytes);
  const uploader = new Uploader(
    {
      writer: s3.writer,
      concurrency: c.uploadConcurrency,
      requestTimeoutMillis: c.requestTimeoutMillis,
      conditionalWrites: c.conditionalWrites,
      backoff: {
        initialDelayMillis: c.retryInitialDelayMillis,
        maxDelayMillis: c.retryMaxDelayMillis,
      },
    },
    budget,
  );
  const episodes = new Episodes();
  const key = accessCheckKey(c.prefix, STARTUP_CHECK_NAME);
  const startupCheck = c.startupCheck
    ? new StartupCheck({
        writer: s3.writer,
        episodes,
        key,
        where: `s3://${c.bucket}/${key}`,
        endpoint: c.s3Client === undefined ? endpointName(c) : "the s3Client option's endpoint",
        requestTimeoutMillis: c.requestTimeoutMillis,
        slowRetryMillis: c.retryMaxDelayMillis,
      })
    : undefined;
  let members = 0;
  return {
    s3,
    budget,
    uploader,
    episodes,
    startupCheck,
    join() {
      members++;
      startupCheck?.start();
      let left = false;
      return () => {
        if (left) return;
        left = true;
        if (--members === 0) {
          startupCheck?.stop();
          uploader.clear();
          s3.writer.destroy();
        }
      };
    },
  };
}
