import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { formatBytes } from '../base/byte-size.js';
import { InvalidOptionError } from '../base/invalid-option.js';
import { ignoredAwsSwitchesSaid } from '../config/environment.js';
import { DEFAULTS } from '../config/options.js';
import {
  defaultKeyTemplate,
  FORMAT_ROWS,
  FORMATS,
  SIGNAL_NAMES,
  type SignalName,
} from '../layout/formats.js';
import { ReadAccessError } from '../reader/errors.js';
import { DEFAULT_EXPORT_INTERVAL_MILLIS } from '../reader/key-layout.js';
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from '../reader/read-limits.js';
import { causes, describeError } from '../s3/errors.js';
import { profileNote } from './aws-profile.js';
import {
  POINT_FORMATS,
  type PointFormat,
  ROW_FORMATS,
  type RowFormat,
  SEVERITIES,
  type Severity,
  SPAN_STATUSES,
  type SpanStatus,
  TRACE_FORMATS,
  type TraceFormat,
} from './choices.js';
import type { CompactFlags } from './commands/compact.js';
import type { LogsOptions } from './commands/logs.js';
import { CONFIG_FILE_NAME } from './config-file.js';
import { type CommandContext, note } from './context.js';
import { DURATION_HELP } from './duration.js';
import { EXIT, EXIT_CODES_HELP, UsageError } from './exit-codes.js';
import { LineWriter } from './output.js';
import { spanDurationOption, spanIdOption, traceIdOption } from './row-filters.js';
import { commandFlagOrigins, located, type Origins, variableOf } from './setting-sources.js';
import { type GlobalFlags, resolveSettings, type Settings } from './settings.js';
import { terminalColumns } from './terminal-text.js';

/** The process around the CLI; tests pass their own. */
export interface CliIo {
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean };
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** Aborted on Ctrl-C: reading stops and the exit code is 130. */
  signal?: AbortSignal;
}

/** `--bucket <name>  ... (env OTEL_EXPORTER_S3_BUCKET)` */
const env = (setting: Parameters<typeof variableOf>[0]) => `env ${variableOf(setting)}`;

const HELP_AFTER = `
Where to read: --bucket (S3) or --dir (a local directory laid out like the bucket, file path =
key, e.g. an \`aws s3 sync\` mirror). Each setting comes from its flag, else the exporter's
environment variable, else ${CONFIG_FILE_NAME} in the current directory: JSON with the settings
under the options' names (bucket, prefix, keyTemplate, maxBatchAgeMillis, dir, concurrency,
maxObjectBytes, ...; never credentials). Credentials come from the AWS SDK's default chain:
AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ...

The key layout: objects written with a format's default layout (the OTLP formats' minute
partitions, Parquet's hour partitions) are read without a flag. Otherwise give the reader what
the exporter was given (the same environment variables configure both): --object-format,
--key-template, --file-prefix, --partition-time-zone, and, with --partition-time data,
--max-batch-age and --export-interval. Keys that are still not in the layout are counted, and
the note names the flag that would read them; when nothing could be read, the exit code is 5.

The time range: --since, or --from and/or --to; without them, every object under the prefix.
An object's time is its seal time, the timestamp of the UUIDv7 in its name, whatever partition
it is filed under. When the key template starts with time tokens, only the partitions that can
hold the range are listed; otherwise every key under the prefix is.

Size limits: an object stored larger than --max-object-bytes, or that decompresses to more than
--max-decompressed-bytes, is skipped unread and counted (exit code 1), so a huge or hostile
object (a compression bomb) cannot exhaust memory. Sizes: bytes, or KiB, MiB, GiB, TiB (k, m, g, t).
${EXIT_CODES_HELP}

Examples:
  otel-s3 ls --bucket metrics --prefix prod/checkout --since 1h
  otel-s3 points --since 15m --metric 'http.*' --format csv > points.csv
  otel-s3 spans --since 1h --service checkout --status error
  otel-s3 trace 4bf92f3577b34da6a3ce929d0e0e4736 --since 2h --logs
  otel-s3 logs --since 30m --severity warn --attribute http.route=/orders
  otel-s3 stats --from 2026-11-30T00:00Z --to 2026-12-01T00:00Z
  otel-s3 cat --since 1h | gzip > requests.jsonl.gz`;

const COMPACT_HELP = `
Every signal's hours (metrics, spans, log records; --signal for some). Inputs: this package's
objects in the settled hours of the range (Parquet files, earlier outputs, and for metrics OTLP
objects of every format and compression). Outputs: Parquet files named
metrics_<uuid>.compacted.parquet (traces/…traces_, logs/…logs_) in the Parquet hour layout,
sorted, near --target-file-bytes;
each lists the objects it replaces, and this package's readers skip those. Each output is
written with If-None-Match, its footer read back and checked against the inputs, and only then
are the Parquet inputs it replaces deleted (OTLP ones only with --delete-inputs). A lease per
hour under <prefix>/_otel_s3_compaction/ keeps compactors apart; a run with nothing to do
writes nothing. Unreadable inputs are skipped, named and never deleted (exit code 1).

Examples:
  otel-s3 compact --bucket metrics --prefix prod --since 2d
  otel-s3 compact --since 1d --dry-run
  otel-s3 compact --since 1d --shard 0/4   # one of four processes
${EXIT_CODES_HELP}`;

const CHECK_HELP = `
Writes one small object, <prefix>/_otel_s3_check/<uuid>.check, with the exporter's own requests
and the PutObject settings of its environment variables (OTEL_EXPORTER_S3_SSE, _TAGS, ...);
writes it again with If-None-Match: * (it must be refused); lists it and reads it as the reader
does; deletes it as the compactor does. Each row says who needs the step and, when it failed,
what to fix. Credentials come from the AWS SDK's default chain, as the exporter's do.

Exit codes:
  0    the exporter can work here (put works), whatever the other rows say
  2    usage error, or the AWS SDK has no endpoint for the settings (AWS_USE_FIPS_ENDPOINT=true
       where there is none)
  3    the exporter cannot: an access fault (credentials, permission, bucket, region)
  4    the exporter cannot: any other failure, e.g. the endpoint cannot be reached
  130  interrupted

Example:
  otel-s3 check --bucket metrics --prefix prod/checkout`;

/** Runs `otel-s3` with `argv` (the arguments after the program name); resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  // A reader that goes away (`otel-s3 --help | head`) must not crash the tool with an
  // unhandled 'error' event; commands notice it through their LineWriter and stop.
  io.stdout.on('error', () => {});
  io.stderr.on('error', () => {});
  let exitCode: number = EXIT.ok;
  const program = buildProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit 0; every parse error is a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    throw error;
  }
  return exitCode;
}

const CSV_VERBATIM_HELP =
  "with --format csv: every field as stored, also one a spreadsheet would run as a formula (by default one starting with =, +, -, @, a tab or a line break gets a leading ')";

/** `--csv-verbatim`, which only --format csv takes. */
function csvVerbatimOption(format: string | undefined, verbatim: boolean | undefined): boolean {
  if (verbatim !== true) return false;
  if (format === 'csv') return true;
  throw new UsageError(
    format === undefined
      ? '--csv-verbatim applies to --format csv only: give --format csv'
      : `--csv-verbatim applies to --format csv only, not --format ${format}`,
  );
}

function buildProgram(io: CliIo, setExitCode: (code: number) => void): Command {
  const program = new Command('otel-s3')
    .description(
      'Read back the metrics, spans and log records that otel-s3-exporter stored in S3 (or in a local copy of the bucket).',
    )
    .version(packageVersion(), '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(`otel-s3: ${s.replace(/^error: /, '')}`),
    })
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError('(otel-s3 --help shows the usage)')
    .option('--bucket <name>', `bucket to read (${env('bucket')})`)
    .option('--prefix <prefix>', `key prefix, as given to the exporter (${env('prefix')})`)
    .option(
      '--endpoint <url>',
      `S3-compatible server, e.g. http://127.0.0.1:9000 (${env('endpoint')})`,
    )
    .option(
      '--region <region>',
      `region (${env('region')}, else AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1)`,
    )
    .option(
      '--force-path-style',
      `path-style addressing, the default with --endpoint (${env('forcePathStyle')})`,
    )
    .option('--no-force-path-style', 'virtual-hosted-style addressing')
    .option(
      '--object-format <format>',
      `the exporter's format, ${FORMATS.join(', ')}: only its default key template is read (${env('format')}; default: every format's default template)`,
    )
    .option(
      '--key-template <template>',
      `the exporter's keyTemplate (${env('keyTemplate')}; default: the format's, ${DEFAULTS.keyTemplate} or for parquet ${defaultKeyTemplate('parquet', 'metrics')})`,
    )
    .option('--file-prefix <text>', `the exporter's filePrefix (${env('filePrefix')})`)
    .option(
      '--partition-time-zone <zone>',
      `the exporter's partitionTimeZone, UTC or local (${env('partitionTimeZone')}; default UTC)`,
    )
    .option(
      '--partition-time <time>',
      `the exporter's partitionTime, upload or data (${env('partitionTime')}; default upload)`,
    )
    .option(
      '--max-batch-age <ms>',
      `the exporter's maxBatchAgeMillis (${env('maxBatchAgeMillis')}; default ${DEFAULTS.maxBatchAgeMillis}, parquet ${FORMAT_ROWS.parquet.maxBatchAgeMillis})`,
    )
    .option(
      '--export-interval <ms>',
      `the service's metric export interval (${env('exportIntervalMillis')}; default ${DEFAULT_EXPORT_INTERVAL_MILLIS})`,
    )
    .option('--dir <path>', 'read a local directory laid out like the bucket instead of S3')
    .option('--since <duration>', `objects from this long ago on: ${DURATION_HELP}`)
    .option('--from <time>', 'objects from this time on (ISO 8601; UTC unless a zone is given)')
    .option('--to <time>', 'objects before this time')
    .option(
      '--concurrency <n>',
      'objects downloaded at once, 1-64 (default 32; at most 32 MiB ahead)',
    )
    .option(
      '--max-object-bytes <size>',
      'skip objects stored larger than this, e.g. 256MiB (default: --max-decompressed-bytes)',
    )
    .option(
      '--max-decompressed-bytes <size>',
      `skip objects that decompress to more than this, e.g. 256MiB (default ${formatBytes(DEFAULT_MAX_DECOMPRESSED_BYTES)})`,
    )
    .option('--config <file>', `defaults file (default: ./${CONFIG_FILE_NAME} if there is one)`)
    .option('--no-progress', 'never show the progress bar (it is only shown on a terminal)')
    .addHelpText('after', HELP_AFTER);

  const run =
    <O>(command: (ctx: CommandContext, options: O) => Promise<number>) =>
    async (options: O, cmd: Command) => {
      setExitCode(
        await execute(
          io,
          cmd.optsWithGlobals<GlobalFlags>(),
          (ctx) => command(ctx, options),
          COMMAND_SIGNAL[cmd.name()],
          commandFlagOrigins((key) => cmd.getOptionValueSource(key)),
          cmd.name(),
        ),
      );
    };

  program
    .command('ls')
    .description('list the objects in the time range, with their times and sizes (no download)')
    .addOption(
      new Option('--format <format>', 'text (time, bytes, key) or jsonl')
        .choices(['text', 'jsonl'])
        .default('text'),
    )
    .addOption(signalOption())
    .addHelpText('after', EXIT_CODES_HELP)
    .action(
      run<{ format: 'text' | 'jsonl'; signal?: SignalName[] }>(async (ctx, o) =>
        (await import('./commands/ls.js')).ls(ctx, {
          format: o.format,
          signals: signalsOf(o.signal),
        }),
      ),
    );

  program
    .command('cat')
    .description(
      "print each object's request (Export{Metrics,Trace,Logs}ServiceRequest) as one line of OTLP/JSON (any stored format)",
    )
    .option(
      '--with-key',
      'print {"key","signal","time","request"} per line instead of the bare request ("part" too for a row group of a Parquet file over 16 MiB)',
    )
    .addOption(signalOption())
    .addHelpText('after', EXIT_CODES_HELP)
    .action(
      run<{ withKey?: boolean; signal?: SignalName[] }>(async (ctx, o) =>
        (await import('./commands/cat.js')).cat(ctx, {
          withKey: o.withKey === true,
          signals: signalsOf(o.signal),
        }),
      ),
    );

  program
    .command('points')
    .description(
      'print one row per data point: time, resource, metric, type, attributes, value or buckets',
    )
    .addOption(
      new Option(
        '--format <format>',
        'table, csv or jsonl (default: table on a terminal, else jsonl)',
      ).choices(POINT_FORMATS),
    )
    .option('--csv-verbatim', CSV_VERBATIM_HELP)
    .option(
      '--metric <name>',
      'only this metric (repeatable; * is a wildcard, e.g. "http.*")',
      (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
    )
    .addHelpText('after', EXIT_CODES_HELP)
    .action(
      run<{ format?: PointFormat; metric?: string[]; csvVerbatim?: boolean }>(async (ctx, o) =>
        (await import('./commands/points.js')).points(ctx, {
          metric: o.metric ?? [],
          csvVerbatim: csvVerbatimOption(o.format, o.csvVerbatim),
          ...(o.format === undefined ? {} : { format: o.format }),
        }),
      ),
    );

  program
    .command('stats')
    .description(
      'objects, bytes, compression ratio (Parquet: the codec inside, and the size as uncompressed OTLP/JSON), series and data points per metric, spans and log records per service',
    )
    .addOption(
      new Option('--format <format>', 'text or json').choices(['text', 'json']).default('text'),
    )
    .addOption(signalOption())
    .addHelpText('after', EXIT_CODES_HELP)
    .action(
      run<{ format: 'text' | 'json'; signal?: SignalName[] }>(async (ctx, o) =>
        (await import('./commands/stats.js')).stats(ctx, {
          format: o.format,
          signals: signalsOf(o.signal),
        }),
      ),
    );

  const rowFormat = () =>
    new Option(
      '--format <format>',
      'table, csv or jsonl (default: table on a terminal, else jsonl)',
    ).choices(ROW_FORMATS);
  const repeatable = (value: string, previous: string[] | undefined) => [
    ...(previous ?? []),
    value,
  ];
  const attributeHelp =
    'key=value (* a wildcard) or key: the attribute, of the item or else of its resource (repeatable: all must match)';

  program
    .command('spans')
    .description(
      'print one row per span: time, duration, service, name, kind, status, trace id, attributes',
    )
    .addOption(rowFormat())
    .option('--csv-verbatim', CSV_VERBATIM_HELP)
    .option('--service <name>', 'only this service.name (repeatable; * a wildcard)', repeatable)
    .option('--name <name>', 'only spans of this name (repeatable; * a wildcard)', repeatable)
    .addOption(anyCase(new Option('--status <status>', 'only spans of this status'), SPAN_STATUSES))
    .option('--attribute <key=value>', attributeHelp, repeatable)
    .option('--trace-id <id>', 'only the spans of this trace (32 hex digits)', once)
    .option('--min-duration <duration>', 'only spans at least this long: 250ms, 1.5s, 800us', once)
    .addHelpText('after', EXIT_CODES_HELP)
    .action(
      run<{
        format?: RowFormat;
        service?: string[];
        name?: string[];
        status?: SpanStatus;
        attribute?: string[];
        traceId?: string;
        minDuration?: string;
        csvVerbatim?: boolean;
      }>(async (ctx, o) =>
        (await import('./commands/spans.js')).spans(ctx, {
          service: o.service ?? [],
          csvVerbatim: csvVerbatimOption(o.format, o.csvVerbatim),
          name: o.name ?? [],
          attribute: o.attribute ?? [],
          ...(o.format === undefined ? {} : { format: o.format }),
          ...(o.status === undefined ? {} : { status: o.status }),
          ...(o.traceId === undefined ? {} : { traceId: traceIdOption('--trace-id', o.traceId) }),
          ...(o.minDuration === undefined
            ? {}
            : { minDuration: spanDurationOption('--min-duration', o.minDuration) }),
        }),
      ),
    );

  program
    .command('logs')
    .description(
      'print one row per log record: time, severity, service, trace id, body, attributes',
    )
    .addOption(rowFormat())
    .option('--csv-verbatim', CSV_VERBATIM_HELP)
    .option('--service <name>', 'only this service.name (repeatable; * a wildcard)', repeatable)
    .addOption(
      anyCase(
        new Option(
          '--severity <level>',
          'only records of this severity and above (by number; by text for records without one; warning is warn)',
        ),
        SEVERITIES,
        // Python's logging and syslog say WARNING; the filter reads that text as WARN too.
        { warning: 'warn' },
      ),
    )
    .option(
      '--body <text>',
      'only records whose body holds this text (maps and lists as JSON)',
      once,
    )
    .option(
      '--event-name <name>',
      'only events of this name (repeatable; * a wildcard)',
      repeatable,
    )
    .option('--attribute <key=value>', attributeHelp, repeatable)
    .option('--trace-id <id>', 'only the records of this trace (32 hex digits)', once)
    .option('--span-id <id>', 'only the records of this span (16 hex digits)', once)
    .addHelpText('after', EXIT_CODES_HELP)
    .action(
      run<{
        format?: RowFormat;
        service?: string[];
        severity?: Severity;
        body?: string;
        eventName?: string[];
        attribute?: string[];
        traceId?: string;
        spanId?: string;
        csvVerbatim?: boolean;
      }>(async (ctx, o) => {
        const options: LogsOptions = {
          service: o.service ?? [],
          csvVerbatim: csvVerbatimOption(o.format, o.csvVerbatim),
          eventName: o.eventName ?? [],
          attribute: o.attribute ?? [],
        };
        if (o.format !== undefined) options.format = o.format;
        if (o.severity !== undefined) options.severity = o.severity;
        if (o.body !== undefined) options.body = o.body;
        if (o.traceId !== undefined) options.traceId = traceIdOption('--trace-id', o.traceId);
        if (o.spanId !== undefined) options.spanId = spanIdOption('--span-id', o.spanId);
        return (await import('./commands/logs.js')).logs(ctx, options);
      }),
    );

  program
    .command('trace')
    .description(
      'print the spans of one trace as a waterfall: each under its parent, a bar for its start and duration, its status and service',
    )
    .argument('<trace-id>', 'the trace id, 32 hex digits')
    .addOption(
      new Option('--format <format>', 'waterfall, or jsonl: the spans as rows, in its order')
        .choices(TRACE_FORMATS)
        .default('waterfall'),
    )
    .option('--logs', "put the trace's log records under their spans")
    .option(
      '--width <cells>',
      'cells of the bar, 10-200 (default 40, less to fit a narrower terminal)',
    )
    .addHelpText(
      'after',
      `
The whole range is read to find the trace: give --since, or --from and --to, around it.
${EXIT_CODES_HELP}`,
    )
    .action(
      async (
        traceId: string,
        o: { format: TraceFormat; logs?: boolean; width?: string },
        cmd: Command,
      ) =>
        run<undefined>(async (ctx) =>
          (await import('./commands/trace.js')).traceCommand(ctx, {
            traceId: traceIdOption('trace id', traceId),
            format: o.format,
            logs: o.logs === true,
            ...(o.width === undefined ? {} : { width: widthOption(o.width) }),
          }),
        )(undefined, cmd),
    );

  program
    .command('check')
    .description(
      'test the bucket and prefix for what the exporter, the reader and the compactor need: put, conditional put, list, get, delete (one small object, deleted after)',
    )
    .addOption(
      new Option('--format <format>', 'text (a table) or json')
        .choices(['text', 'json'])
        .default('text'),
    )
    .addHelpText('after', CHECK_HELP)
    .action(
      run<{ format: 'text' | 'json' }>(async (ctx, o) =>
        (await import('./commands/check.js')).check(ctx, { format: o.format }),
      ),
    );

  program
    .command('compact')
    .description(
      'merge the closed hours under the prefix into few large sorted Parquet files (docs/parquet.md, Compaction)',
    )
    .option(
      '--out-prefix <prefix>',
      'where the outputs go (the Parquet hour layout under it); default: --prefix',
    )
    .option(
      '--target-file-bytes <size>',
      'output files are cut near this size, 64KiB or more (default 128MiB)',
    )
    .option(
      '--settle <duration>',
      "how long after an hour's end it is compacted, at most 7d (default: the batch age + the flush deadline + 5m)",
    )
    .option('--until <time>', 'only hours before this time, or this long ago (e.g. 2d); like --to')
    .addOption(
      new Option('--compression <codec>', "codec of the outputs' column chunks")
        .choices(['zstd', 'gzip', 'none'])
        .default('zstd'),
    )
    .option('--dry-run', 'print the plan (partitions, objects in, bytes) and write nothing')
    .option(
      '--delete-inputs',
      'also delete the OTLP objects an output replaces (Parquet inputs are always deleted)',
    )
    .option(
      '--shard <i/n>',
      'only the hours whose number (hours since 1970) modulo n is i, e.g. 0/4 (n from 1 to 10000)',
    )
    .option(
      '--single-writer',
      'run on a server without conditional writes: only if no other compactor ever runs on this prefix',
    )
    .option('--partitions <n>', 'hours compacted at once, 1-16 (default 1; memory adds up)')
    .addOption(
      new Option('--format <format>', 'text (a line per partition) or json (the report)')
        .choices(['text', 'json'])
        .default('text'),
    )
    .addOption(signalOption())
    .addHelpText('after', COMPACT_HELP)
    .action(
      run<Omit<CompactFlags, 'signals'> & { signal?: SignalName[] }>(async (ctx, o) =>
        (await import('./commands/compact.js')).compact(ctx, {
          ...o,
          signals: signalsOf(o.signal),
        }),
      ),
    );

  return program;
}

/** The one signal a command reads: its exporter's own variables apply (OTEL_EXPORTER_S3_TRACES_PREFIX). */
const COMMAND_SIGNAL: Readonly<Record<string, SignalName>> = {
  points: 'metrics',
  spans: 'traces',
  trace: 'traces',
  logs: 'logs',
};

/** Resolves the settings, runs one command, and turns what went wrong into an exit code. */
async function execute(
  io: CliIo,
  flags: GlobalFlags,
  command: (ctx: CommandContext) => Promise<number>,
  commandSignal?: SignalName,
  flagOrigins: Origins = {},
  commandName?: string,
): Promise<number> {
  const stop = new AbortController();
  const signal = io.signal === undefined ? stop.signal : AbortSignal.any([io.signal, stop.signal]);
  // When the reader of stdout goes away (`| head`), stop downloading and exit quietly.
  const out = new LineWriter(io.stdout, () => stop.abort());
  let settings: Settings | undefined;
  try {
    settings = resolveSettings(flags, io.env, io.cwd, Date.now(), commandSignal, commandName);
    for (const warning of settings.warnings) note(io, warning);
    // Said above in otel-s3's words: the reader's client does not say them again.
    ignoredAwsSwitchesSaid(io.env);
    const code = await command({
      settings,
      out,
      stderr: io.stderr,
      stdoutIsTTY: io.stdout.isTTY === true,
      stdoutColumns: terminalColumns(io.stdout),
      stderrIsTTY: io.stderr.isTTY === true,
      signal,
      env: io.env,
    });
    await out.flush();
    if (out.failure !== undefined) throw out.failure;
    return code;
  } catch (error) {
    await out.flush().catch(() => {});
    if (io.signal?.aborted === true) {
      note(io, 'interrupted');
      return EXIT.interrupted;
    }
    if (out.closed && out.failure === undefined) return EXIT.ok;
    if (error instanceof UsageError) {
      note(io, error.message);
      return EXIT.usage;
    }
    if (error instanceof InvalidOptionError) {
      // Named as the user gave it: by its flag, variable or file key, wherever it was refused.
      note(io, located(error, { ...flagOrigins, ...settings?.origins }).detail);
      return EXIT.usage;
    }
    if (error instanceof ReadAccessError) {
      note(io, error.message);
      const profile = error.reason === 'no-credentials' ? profileNote(io.env) : undefined;
      if (profile !== undefined) note(io, profile);
      if (settings !== undefined) note(io, `(${settingsOrigin(settings)})`);
      return EXIT.access;
    }
    note(io, error instanceof Error ? error.message : describeError(error));
    // The AWS SDK has no endpoint for the settings (AWS_USE_FIPS_ENDPOINT=true where there are
    // none): refused before any request, as a region it refuses is, and fixed by a setting.
    return [...causes(error)].some((s) => s.name === 'EndpointError') ? EXIT.usage : EXIT.failure;
  }
}

/** Where the source came from, so a wrong value from the environment or a file is easy to spot. */
function settingsOrigin(settings: Settings): string {
  const { source, origins } = settings;
  if (source.kind === 'dir') return `directory ${source.dir} from ${origins.dir}`;
  const parts = [`bucket "${source.bucket}" from ${origins.bucket}`];
  if (source.endpoint !== undefined) {
    parts.push(`endpoint ${source.endpoint} from ${origins.endpoint}`);
  }
  if (source.region !== undefined) parts.push(`region ${source.region} from ${origins.region}`);
  return parts.join(', ');
}

function packageVersion(): string {
  const require = createRequire(import.meta.url);
  // This file is src/cli/main.ts, dist/cli/main.js or dist/cjs/cli/main.js.
  for (const path of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = require(path) as { name?: unknown; version?: unknown };
      if (pkg.name === 'otel-s3-exporter' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not this one
    }
  }
  return '0.0.0';
}

/** `--signal`, repeatable: whose objects a command reads; every signal's without it. */
function signalOption(): Option {
  return new Option(
    '--signal <signal>',
    'only the objects of this signal (repeatable; default: all of them)',
  )
    .choices(SIGNAL_NAMES)
    .argParser((value: string, previous: SignalName[] | undefined) => {
      if (!SIGNAL_NAMES.includes(value as SignalName)) {
        throw new InvalidArgumentError(`Allowed choices are ${SIGNAL_NAMES.join(', ')}.`);
      }
      return [...(previous ?? []), value as SignalName];
    });
}

/**
 * `option` taking one of `values` in any case (`--severity ERROR`, `--status Error`), as the
 * lower-case value; anything else is a usage error that lists them, and so is the option given twice.
 */
function anyCase<T extends string>(
  option: Option,
  values: readonly T[],
  aliases: Readonly<Partial<Record<string, T>>> = {},
): Option {
  const names = values.map((v) => {
    const also = Object.keys(aliases).filter((a) => aliases[a] === v);
    return also.length === 0 ? v : `${v} (or ${also.join(', ')})`;
  });
  return option.choices(values).argParser((value: string, previous: T | undefined): T => {
    const lower = value.toLowerCase();
    const given = (aliases[lower] ?? lower) as T;
    if (!values.includes(given)) {
      throw new InvalidArgumentError(`Allowed choices are ${names.join(', ')} (any case).`);
    }
    return once(given, previous);
  });
}

/**
 * The parser of a filter that takes one value (`--status`, `--trace-id`, `--body`, ...): given
 * again, it is a usage error. Commander would keep the last value and drop the first without a
 * word, where a repeated `--service` or `--name` keeps the rows of any of its values.
 */
function once<T>(value: T, previous: T | undefined): T {
  if (previous !== undefined) {
    throw new InvalidArgumentError(
      `It takes one value, and ${String(previous)} was given before: give it once.`,
    );
  }
  return value;
}

const signalsOf = (given: SignalName[] | undefined): SignalName[] =>
  given === undefined ? [...SIGNAL_NAMES] : SIGNAL_NAMES.filter((s) => given.includes(s));

function widthOption(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 10 || n > 200) {
    throw new UsageError(`--width ${JSON.stringify(value)}: give a whole number of cells, 10-200`);
  }
  return n;
}
