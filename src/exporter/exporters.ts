import { InvalidOptionError } from '../base/invalid-option.js';
import { configure } from '../config/environment.js';
import type { S3MetricExporterOptions } from '../config/options.js';
import type { ResolvedConfig } from '../config/resolve.js';
import type { SignalName } from '../layout/formats.js';
import { S3MetricExporter } from './metric-exporter.js';
import {
  createSharedParts,
  SHARED_PARTS,
  type SharedParts,
  type SharedSettings,
} from './shared-parts.js';
import { configOf, type SignalExporter } from './signal-exporter.js';

/**
 * What may differ between the exporters of one S3Exporters: how each signal's objects are made
 * and named. Everything else (the bucket and how to reach it, the memory bound, uploads, the
 * spool's settings) is the group's.
 */
export type SignalOptions = Pick<
  S3MetricExporterOptions,
  | 'format'
  | 'compression'
  | 'compressionLevel'
  | 'maxBatchBytes'
  | 'maxBatchAgeMillis'
  | 'flushTimeoutMillis'
  | 'keyTemplate'
  | 'filePrefix'
  | 'partitionTime'
  | 'partitionTimeZone'
>;

/** The settings the group's exporters share, checked equal in each (they come from one place). */
const SHARED_SETTINGS = [
  'bucket',
  'region',
  'endpoint',
  'forcePathStyle',
  's3Client',
  'requestChecksumCalculation',
  'userAgent',
  'maxBufferedBytes',
  'uploadConcurrency',
  'requestTimeoutMillis',
  'conditionalWrites',
  'startupCheck',
  'retryInitialDelayMillis',
  'retryMaxDelayMillis',
] as const satisfies readonly (keyof SharedSettings)[];

/**
 * The exporters of a service's signals, sharing what one process should have once: one S3
 * connection, one memory bound (`maxBufferedBytes` for all of them together), one upload queue
 * (`uploadConcurrency`) and one spool directory (each signal keeps its own spool under it:
 * metrics in `spoolDir`, spans in `spoolDir/traces`, log records in `spoolDir/logs`).
 *
 * ```ts
 * const s3 = new S3Exporters({ bucket: 'telemetry', prefix: 'prod/checkout' });
 * new PeriodicExportingMetricReader({ exporter: s3.metricExporter() });
 * ```
 */
export class S3Exporters {
  readonly #options: S3MetricExporterOptions;
  readonly #config: ResolvedConfig;
  readonly #shared: SharedParts;
  readonly #made = new Set<SignalName>();

  /** The options of every exporter of the group (each may change its SignalOptions). */
  constructor(options: S3MetricExporterOptions = {}) {
    this.#options = options;
    this.#config = configure(options);
    this.#shared = createSharedParts(this.#config);
  }

  /** The metric exporter of the group, for a PeriodicExportingMetricReader. Once per group. */
  metricExporter(
    options: SignalOptions & Pick<S3MetricExporterOptions, 'temporalityPreference'> = {},
  ): S3MetricExporter {
    return this.#make('metrics', options, (o) => new S3MetricExporter(o));
  }

  #make<T extends SignalExporter<never>>(
    signal: SignalName,
    options: object,
    make: (options: S3MetricExporterOptions) => T,
  ): T {
    if (this.#made.has(signal)) {
      throw new InvalidOptionError(
        'signal',
        signal,
        `one ${signal} exporter per S3Exporters (a second would share its spool and its counts)`,
      );
    }
    const withParts: S3MetricExporterOptions = { ...this.#options, ...options };
    Object.defineProperty(withParts, SHARED_PARTS, { value: this.#shared });
    const exporter = make(withParts);
    for (const setting of SHARED_SETTINGS) {
      // A variable for one signal only (OTEL_EXPORTER_S3_TRACES_BUCKET) cannot move one exporter
      // of the group elsewhere: its objects go where the group's connection goes.
      const own = configOf(exporter)[setting];
      if (own !== this.#config[setting]) {
        void exporter.shutdown();
        throw new InvalidOptionError(
          setting,
          own,
          `the same value for every exporter of an S3Exporters (${String(this.#config[setting])}): set it for the group, not for one signal`,
        );
      }
    }
    this.#made.add(signal);
    return exporter;
  }
}
