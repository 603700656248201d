import { InvalidOptionError } from '../base/invalid-option.js';
import { configure, signalVariable, VARIABLE_OF } from '../config/environment.js';
import { optionsOf } from '../config/option-table.js';
import type { S3MetricExporterOptions } from '../config/options.js';
import type { ResolvedConfig } from '../config/resolve.js';
import type { SignalName } from '../layout/formats.js';
import { S3LogRecordExporter } from './log-exporter.js';
import { S3MetricExporter } from './metric-exporter.js';
import {
  createSharedParts,
  SHARED_PARTS,
  type SharedParts,
  type SharedSettings,
} from './shared-parts.js';
import type { SignalExporter } from './signal-exporter.js';
import { S3SpanExporter } from './span-exporter.js';

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

/** SignalOptions' names, for exporters made from JavaScript (no type checks them there). */
const SIGNAL_OPTION_NAMES: ReadonlySet<string> = new Set([
  'format',
  'compression',
  'compressionLevel',
  'maxBatchBytes',
  'maxBatchAgeMillis',
  'flushTimeoutMillis',
  'keyTemplate',
  'filePrefix',
  'partitionTime',
  'partitionTimeZone',
] satisfies (keyof SignalOptions)[]);

/** Whether one signal's exporter of a group may set `option` for itself. */
const signalMay = (signal: SignalName, option: string): boolean =>
  SIGNAL_OPTION_NAMES.has(option) || (signal === 'metrics' && option === 'temporalityPreference');

/** The put's settings (each upload's headers) by the option that sets each. */
const PUT_OPTIONS = {
  ServerSideEncryption: 'serverSideEncryption',
  SSEKMSKeyId: 'sseKmsKeyId',
  StorageClass: 'storageClass',
  Tagging: 'tags',
  Metadata: 'metadata',
} as const;

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

/** The option (and so the variable) behind a resolved setting where their names differ. */
const OPTION_OF: Partial<Record<(typeof SHARED_SETTINGS)[number], string>> = {
  retryInitialDelayMillis: 'retry.initialDelayMillis',
  retryMaxDelayMillis: 'retry.maxDelayMillis',
};

/**
 * The exporters of a service's signals, sharing what one process should have once: one S3
 * connection, one memory bound (`maxBufferedBytes` for all of them together), one upload queue
 * (`uploadConcurrency`) and one spool directory (each signal keeps its own spool under it:
 * metrics in `spoolDir`, spans in `spoolDir/traces`, log records in `spoolDir/logs`).
 *
 * ```ts
 * const s3 = new S3Exporters({ bucket: 'telemetry', prefix: 'prod/checkout' });
 * new PeriodicExportingMetricReader({ exporter: s3.metricExporter() });
 * new BatchSpanProcessor({ exporter: s3.spanExporter() });
 * new BatchLogRecordProcessor({ exporter: s3.logRecordExporter() });
 * ```
 */
export class S3Exporters {
  readonly #options: S3MetricExporterOptions;
  readonly #config: ResolvedConfig;
  readonly #shared: SharedParts;
  readonly #made = new Map<SignalName, SignalExporter<never>>();

  /** The options of every exporter of the group (each may change its SignalOptions). */
  constructor(options: S3MetricExporterOptions = {}) {
    this.#options = options;
    // The group's shared parts: the variables for every signal, none of one signal's only.
    this.#config = configure(options, process.env, 'metrics', null);
    this.#shared = createSharedParts(this.#config);
  }

  /**
   * Stores what every exporter of the group holds, side by side, each within its
   * flushTimeoutMillis. A TracerProvider's forceFlush() does not reach its exporter (the SDK's
   * BatchSpanProcessor only hands it the spans it holds): call this, after the providers' own
   * forceFlush(), where spans must be stored now (a function about to freeze).
   */
  async forceFlush(): Promise<void> {
    await Promise.all([...this.#made.values()].map((exporter) => exporter.forceFlush()));
  }

  /** The metric exporter of the group, for a PeriodicExportingMetricReader. Once per group. */
  metricExporter(
    options: SignalOptions & Pick<S3MetricExporterOptions, 'temporalityPreference'> = {},
  ): S3MetricExporter {
    return this.#make('metrics', options, (o) => new S3MetricExporter(o));
  }

  /** The span exporter of the group, for a BatchSpanProcessor. Once per group. */
  spanExporter(options: SignalOptions = {}): S3SpanExporter {
    return this.#make('traces', options, (o) => new S3SpanExporter(o));
  }

  /** The log record exporter of the group, for a BatchLogRecordProcessor. Once per group. */
  logRecordExporter(options: SignalOptions = {}): S3LogRecordExporter {
    return this.#make('logs', options, (o) => new S3LogRecordExporter(o));
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
    for (const [name, value] of Object.entries(options)) {
      // The group's settings are its own: given to one exporter they would be ignored (its
      // uploads are the group's) or make a second of what is shared (a spool directory).
      if (value === undefined || signalMay(signal, name)) continue;
      throw new InvalidOptionError(
        name,
        value,
        `an option of the whole group, set in new S3Exporters({ ... }): one signal's exporter may set only ${[...SIGNAL_OPTION_NAMES].join(', ')}${signal === 'metrics' ? ', temporalityPreference' : ''}`,
      );
    }
    const { temporalityPreference, ...forAnySignal } = this.#options;
    // The metrics' temporality is no option of the other signals' exporters.
    const group = signal === 'metrics' ? this.#options : forAnySignal;
    const withParts: S3MetricExporterOptions = { ...group, ...options };
    // Checked as the exporter will resolve it, before it is made: a refused exporter never holds
    // the signal's spool directory (nor starts anything), so the signal can be asked for again.
    const own = configure(withParts, process.env, signal);
    for (const setting of SHARED_SETTINGS) {
      // A variable for one signal only (OTEL_EXPORTER_S3_TRACES_BUCKET) cannot move one exporter
      // of the group elsewhere: its objects go where the group's connection goes.
      if (own[setting] !== this.#config[setting]) {
        throw notTheGroups(
          OPTION_OF[setting] ?? setting,
          own[setting],
          String(this.#config[setting]),
          signal,
        );
      }
    }
    // Each upload's headers are the group's writer's: one signal's variable for one of them
    // (OTEL_EXPORTER_S3_METRICS_TAGS) would be ignored.
    const put = own.putObject as Record<string, unknown>;
    const groupPut = this.#config.putObject as Record<string, unknown>;
    for (const [field, option] of Object.entries(PUT_OPTIONS)) {
      if (JSON.stringify(put[field]) === JSON.stringify(groupPut[field])) continue;
      throw notTheGroups(option, put[field], JSON.stringify(groupPut[field]) ?? 'unset', signal);
    }
    // Any other of the group's options (the prefix, the spool's settings) that one signal's
    // variable sets: refused as the option is in code, not applied to that signal alone.
    for (const row of optionsOf('exporter', signal)) {
      if (row.variable === undefined || signalMay(signal, row.name)) continue;
      const variable = signalVariable(row.variable, signal);
      const raw = variable === undefined ? undefined : process.env[variable];
      if (variable === undefined || raw === undefined || raw.trim() === '') continue;
      throw new InvalidOptionError(
        row.name,
        raw,
        `an option of the whole group (${row.variable}): set it for the group, not for one signal`,
        variable,
      );
    }
    Object.defineProperty(withParts, SHARED_PARTS, { value: this.#shared });
    const exporter = make(withParts);
    this.#made.set(signal, exporter);
    return exporter;
  }
}

/**
 * One exporter's `option` differs from its group's (`group`, as text): the error names the
 * signal's own variable where that is what set it.
 */
function notTheGroups(
  option: string,
  value: unknown,
  group: string,
  signal: SignalName,
): InvalidOptionError {
  const base = VARIABLE_OF[option];
  const variable = base === undefined ? undefined : signalVariable(base, signal);
  return new InvalidOptionError(
    option,
    value,
    `the same value for every exporter of an S3Exporters (${group}): set it for the group, not for one signal`,
    variable !== undefined && process.env[variable]?.trim() ? variable : undefined,
  );
}
