import { BYTE_SIZE_HELP, parseByteSize } from '../base/byte-size.js';
import { InvalidOptionError } from '../base/invalid-option.js';
import { alert } from '../base/log.js';
import { SIGNAL_NAMES, type SignalName } from '../layout/formats.js';
import { defaultRegion } from '../s3/client-settings.js';
import { optionsOf, type TextKind } from './option-table.js';
import type { S3MetricExporterOptions } from './options.js';
import {
  type EnvironmentValue,
  type EnvironmentWarn,
  type ResolvedConfig,
  resolveSources,
} from './resolve.js';
import { region } from './rules.js';
import { closestName } from './unknown-options.js';

/** Every option settable from the environment, OTel style: [variable, option, how its text reads]. Constructor options win. */
export const ENVIRONMENT_VARIABLES: readonly (readonly [string, string, TextKind])[] = optionsOf(
  'exporter',
).flatMap((row) =>
  row.variable === undefined ? [] : [[row.variable, row.name, row.text] as const],
);

/** The environment variable that sets an option. */
export const VARIABLE_OF: Readonly<Record<string, string>> = Object.fromEntries(
  ENVIRONMENT_VARIABLES.map(([variable, option]) => [option, variable]),
);

type Env = Readonly<Record<string, string | undefined>>;

/** The namespace of this exporter's variables: a name in it that is none of them is a typo. */
const VARIABLE_PREFIX = 'OTEL_EXPORTER_S3_';

/**
 * The variable that sets an option for one signal's exporter only, as OTel's
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT does for OTEL_EXPORTER_OTLP_ENDPOINT:
 * `OTEL_EXPORTER_S3_TRACES_FORMAT` for `OTEL_EXPORTER_S3_FORMAT`. Undefined for a variable that
 * is no OTEL_EXPORTER_S3_ one (OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE is a signal's
 * already).
 */
export function signalVariable(variable: string, signal: SignalName): string | undefined {
  if (!variable.startsWith(VARIABLE_PREFIX)) return undefined;
  return `${VARIABLE_PREFIX}${signal.toUpperCase()}_${variable.slice(VARIABLE_PREFIX.length)}`;
}

const KNOWN_VARIABLES: readonly string[] = ENVIRONMENT_VARIABLES.flatMap(([variable]) => [
  variable,
  ...SIGNAL_NAMES.flatMap((signal) => signalVariable(variable, signal) ?? []),
]);

/**
 * Each known name after the words it shares with our prefix: OTEL_EXPORTER_S3_ENDPOINT's is
 * ENDPOINT, but OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE's is
 * OTLP_METRICS_TEMPORALITY_PREFERENCE (cutting 17 characters from it would suggest a name no one
 * reads).
 */
const KNOWN_TAILS: readonly string[] = KNOWN_VARIABLES.map((known) => {
  let shared = 0;
  for (let i = 0; i < VARIABLE_PREFIX.length && known[i] === VARIABLE_PREFIX[i]; i++) {
    if (known[i] === '_') shared = i + 1;
  }
  return known.slice(shared);
});

/** OTel's convention: an empty value is the same as none (blank too, as for our own names). */
const isSet = (value: string | undefined): value is string =>
  value !== undefined && value.trim() !== '';

/** A set variable named like ours that is none of ours, and the one it probably means. */
export interface UnknownVariable {
  variable: string;
  suggestion: string | undefined;
}

/**
 * The `OTEL_EXPORTER_S3_*` names in `env` that no option reads. A misspelled name is otherwise
 * ignored without a word (`OTEL_EXPORTER_S3_ENDPIONT`, and the exporter sends to AWS).
 */
export function unknownVariables(env: Env): UnknownVariable[] {
  const unknown: UnknownVariable[] = [];
  for (const variable of Object.keys(env)) {
    if (!variable.startsWith(VARIABLE_PREFIX) || KNOWN_VARIABLES.includes(variable)) continue;
    // Empty (or blank) is unset, as for the known names: nothing is ignored.
    if (!isSet(env[variable])) continue;
    // Compared after the common prefix, so the tolerance is the distinctive part's.
    const suggestion = closestName(variable.slice(VARIABLE_PREFIX.length), KNOWN_TAILS);
    unknown.push({
      variable,
      suggestion:
        suggestion === undefined ? undefined : KNOWN_VARIABLES[KNOWN_TAILS.indexOf(suggestion)],
    });
  }
  return unknown;
}

/** `unknown environment variable X (did you mean Y?); it is ignored` */
export function describeUnknownVariable({ variable, suggestion }: UnknownVariable): string {
  const hint = suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`;
  return `unknown environment variable ${variable}${hint}; it is ignored`;
}

/** Names already warned about: once per process, however many exporters are made. */
const warnedVariables = new Set<string>();
/** Bad values already warned about, by their message: an S3Exporters reads each 4 times. */
const warnedValues = new Set<string>();

/**
 * What an integer variable takes, with its unit where its name does not say it
 * (OTEL_EXPORTER_S3_MAX_BATCH_AGE is in milliseconds: "5s" is refused).
 */
function integerHelp(option: string): string {
  if (option.endsWith('Millis')) return 'a non-negative integer of milliseconds, e.g. 5000 for 5 s';
  if (option.endsWith('Bytes')) return 'a non-negative integer of bytes, e.g. 8388608 for 8 MiB';
  return 'a non-negative integer';
}

/** Parses one variable's text; throws InvalidOptionError naming the variable. */
function parse(variable: string, option: string, raw: string, kind: TextKind): unknown {
  if (kind === 'string') return raw;
  if (kind === 'map') return parseMap(variable, option, raw);
  const value = raw.trim();
  if (kind === 'integer') {
    if (!/^\d+$/.test(value))
      throw new InvalidOptionError(option, raw, integerHelp(option), variable);
    return Number(value);
  }
  if (kind === 'boolean') {
    const parsed = parseBooleanText(value);
    if (parsed === undefined) throw new InvalidOptionError(option, raw, 'true or false', variable);
    return parsed;
  }
  if (kind === 'bytes') {
    const parsed = parseByteSize(value);
    if (parsed === undefined) throw new InvalidOptionError(option, raw, BYTE_SIZE_HELP, variable);
    return parsed;
  }
  // Enumerations: OTel's values are case-insensitive (e.g. CUMULATIVE); ours are spelled as listed.
  const match = kind.find((k) => k.toLowerCase() === value.toLowerCase());
  if (match === undefined) {
    throw new InvalidOptionError(
      option,
      raw,
      `one of ${kind.map((k) => `'${k}'`).join(', ')}`,
      variable,
    );
  }
  return match;
}

/**
 * `key=value,key2=value2`, as OTEL_RESOURCE_ATTRIBUTES: values may be percent-encoded. A key
 * given twice is refused: keeping either value would drop the other without a word.
 */
function parseMap(variable: string, option: string, raw: string): Record<string, string> {
  const out = new Map<string, string>();
  for (const pair of raw.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    if (at < 1 || key === '') {
      throw new InvalidOptionError(option, raw, 'comma-separated key=value pairs', variable);
    }
    if (out.has(key)) {
      throw new InvalidOptionError(
        option,
        raw,
        `comma-separated key=value pairs, each key once: "${key}" is given twice`,
        variable,
      );
    }
    try {
      out.set(key, decodeURIComponent(pair.slice(at + 1).trim()));
    } catch {
      throw new InvalidOptionError(
        option,
        raw,
        'comma-separated key=value pairs (valid percent-encoding)',
        variable,
      );
    }
  }
  // Own properties, whatever the key: an assignment of `__proto__` would set no key at all.
  return Object.fromEntries(out);
}

/**
 * The OTEL_EXPORTER_S3_* values, parsed, by option name. Empty values count as unset; text
 * that does not parse goes to `warn` and is left out. A signal's variable wins over the one for
 * every signal, which stays behind it (`fallback`) for when the signal's is refused, as the OTLP
 * exporters do with OTEL_EXPORTER_OTLP_TRACES_TIMEOUT.
 */
export function readEnvironment(
  env: Env,
  warn: EnvironmentWarn,
  variables: readonly (readonly [string, string, TextKind])[] = ENVIRONMENT_VARIABLES,
  signal?: SignalName,
): Map<string, EnvironmentValue> {
  const values = new Map<string, EnvironmentValue>();
  const set = (name: string | undefined) =>
    name !== undefined && isSet(env[name]) ? name : undefined;
  const read = (variable: string, option: string, kind: TextKind) => {
    try {
      return { entry: { value: parse(variable, option, env[variable] as string, kind), variable } };
    } catch (error) {
      if (!(error instanceof InvalidOptionError)) throw error;
      return { error };
    }
  };
  for (const [base, option, kind] of variables) {
    const all = set(base);
    const own = set(signal && signalVariable(base, signal));
    const general = all === undefined ? undefined : read(all, option, kind);
    if (own !== undefined) {
      const mine = read(own, option, kind);
      if (mine.entry !== undefined) {
        const fallback = general?.entry;
        values.set(option, fallback === undefined ? mine.entry : { ...mine.entry, fallback });
        continue;
      }
      warn(mine.error, general?.entry?.variable);
    }
    // Said only when it is the one that would be used.
    if (general?.error !== undefined) warn(general.error);
    else if (general?.entry !== undefined) values.set(option, general.entry);
  }
  return values;
}

/**
 * Options from the environment as constructor options, and which variable set each. A value
 * that does not parse is left out (and passed to `warn`).
 */
export function optionsFromEnvironment(
  env: Env = process.env,
  warn: (error: InvalidOptionError) => void = () => {},
): { options: S3MetricExporterOptions; variables: Map<string, string> } {
  const options: Record<string, unknown> = {};
  const retry: Record<string, unknown> = {};
  const variables = new Map<string, string>();
  for (const [option, { value, variable }] of readEnvironment(env, warn)) {
    if (option.startsWith('retry.')) retry[option.slice('retry.'.length)] = value;
    else options[option] = value;
    variables.set(option, variable);
  }
  if (Object.keys(retry).length > 0) options.retry = retry;
  return { options: options as S3MetricExporterOptions, variables };
}

/**
 * Constructor options over environment variables over defaults, validated. A bad option in
 * code throws; a bad environment value is reported (warning, code OTEL_S3_INVALID_ENV) and its
 * default used; each bad value, and each unknown OTEL_EXPORTER_S3_* name, is reported once per
 * process (same code).
 */
export function configure(
  options: S3MetricExporterOptions,
  env: Env = process.env,
  signal: SignalName = 'metrics',
  /** Whose signal-only variables apply (`OTEL_EXPORTER_S3_TRACES_…`); null: none (a group's). */
  variablesOf: SignalName | null = signal,
): ResolvedConfig {
  for (const unknown of unknownVariables(env)) {
    if (warnedVariables.has(unknown.variable)) continue;
    warnedVariables.add(unknown.variable);
    alert('warn', 'OTEL_S3_INVALID_ENV', describeUnknownVariable(unknown));
  }
  const warn: EnvironmentWarn = (error, instead) => {
    // By what it says: the same value refused for another reason (another signal's) is said too.
    const key = error.detail;
    if (warnedValues.has(key)) return;
    warnedValues.add(key);
    alert(
      'warn',
      'OTEL_S3_INVALID_ENV',
      `${error.detail}; using ${instead ?? 'the default'} instead`,
    );
  };
  const config = resolveSources({
    options,
    environment: readEnvironment(env, warn, ENVIRONMENT_VARIABLES, variablesOf ?? undefined),
    warn,
    signal,
  });
  // With the caller's own client, no region is read at all.
  if (config.region === undefined && config.s3Client === undefined) {
    config.region = regionFromAwsVariables(env, warn);
  }
  if (config.s3Client === undefined) warnIgnoredAwsSwitches(env);
  return config;
}

/**
 * Warns (OTEL_S3_INVALID_ENV) about each ignoredAwsSwitches message not yet said in this
 * process: the exporter and the reader library, before making an S3 client.
 */
export function warnIgnoredAwsSwitches(env: Env): void {
  for (const message of ignoredAwsSwitches(env)) {
    if (warnedValues.has(message)) continue;
    warnedValues.add(message);
    alert('warn', 'OTEL_S3_INVALID_ENV', message);
  }
}

/** Marks the ignoredAwsSwitches messages as said: otel-s3 says them itself, once. */
export function ignoredAwsSwitchesSaid(env: Env): void {
  for (const message of ignoredAwsSwitches(env)) warnedValues.add(message);
}

/** The AWS SDK's endpoint switches, with the AWS config file's setting it reads after each. */
const AWS_SWITCH_VARIABLES = [
  ['AWS_USE_FIPS_ENDPOINT', 'use_fips_endpoint'],
  ['AWS_USE_DUALSTACK_ENDPOINT', 'use_dualstack_endpoint'],
] as const;

/**
 * What is wrong with AWS_USE_FIPS_ENDPOINT and AWS_USE_DUALSTACK_ENDPOINT, one message each. The
 * AWS SDK reads "true" and "false" only, and passes over any other value ("TRUE", "1") without a
 * word, to the AWS config file, else false: FIPS asked for, and uploads going to the standard
 * endpoint. Empty is unset, as for the SDK's other variables.
 */
export function ignoredAwsSwitches(env: Env): string[] {
  return AWS_SWITCH_VARIABLES.flatMap(([variable, setting]) => {
    const value = env[variable];
    if (value === undefined || value === '' || value === 'true' || value === 'false') return [];
    return [
      `invalid environment variable ${variable}: ${JSON.stringify(value)} (expected "true" or "false", in lower case); the AWS SDK ignores it and takes ${setting} of the AWS config file, else false`,
    ];
  });
}

/** The AWS SDK's region variables, in the order defaultRegion reads them. */
const AWS_REGION_VARIABLES = ['AWS_REGION', 'AWS_DEFAULT_REGION'] as const;

/**
 * The region variables that are set, in the order defaultRegion reads them (it skips an empty
 * one, and stops at the first other), each checked as the region option is: `error` names the
 * variable of a region the AWS SDK refuses (it would fail every request before sending).
 */
export function* awsRegionVariables(
  env: Env,
): Generator<{ variable: string; value: string; error?: InvalidOptionError }> {
  for (const variable of AWS_REGION_VARIABLES) {
    const value = env[variable];
    if (value === undefined || value === '') continue;
    try {
      yield { variable, value: region('region', value) };
    } catch (error) {
      if (!(error instanceof InvalidOptionError)) throw error;
      yield { variable, value, error: InvalidOptionError.fromVariable(error, variable) };
    }
  }
}

/**
 * The region the default would take from AWS_REGION or AWS_DEFAULT_REGION: one the AWS SDK
 * refuses is reported as any bad environment value and skipped, and the region the default then
 * takes is returned. Undefined when none is refused: the default reads them at the first upload,
 * as before.
 */
function regionFromAwsVariables(
  env: Env,
  warn: (error: InvalidOptionError) => void,
): string | undefined {
  const accepted: Record<string, string | undefined> = {};
  let refused = false;
  for (const { variable, value, error } of awsRegionVariables(env)) {
    if (error === undefined) {
      accepted[variable] = value;
      break;
    }
    warn(error);
    refused = true;
  }
  return refused ? defaultRegion(accepted) : undefined;
}

/** `true` or `false` in any case, around spaces; anything else is undefined. */
export function parseBooleanText(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  return t === 'true' ? true : t === 'false' ? false : undefined;
}
