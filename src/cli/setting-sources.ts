import { InvalidOptionError } from '../base/invalid-option.js';
import { parseBooleanText, readEnvironment, signalVariable } from '../config/environment.js';
import { OPTION_TABLE, type OptionRow, optionRow } from '../config/option-table.js';
import { SIGNAL_NAMES, type SignalName } from '../layout/formats.js';
import { CONFIG_FILE_KEYS, type ConfigFile, type ConfigFileKey } from './config-file.js';
import { UsageError } from './exit-codes.js';

type Env = Readonly<Record<string, string | undefined>>;

/** How a flag's text reads: as it is, or as a number or a boolean when it is spelled as one. */
type Kind = 'text' | 'integer' | 'boolean';

/**
 * Every setting of the CLI, named as the exporter's (and the reader's) option, from the option
 * table: its flag, its environment variable (the exporter's, so a service's environment
 * configures its reader too) and its key in .otel-s3.json (the option name).
 */
export const SETTINGS: Readonly<Record<ConfigFileKey, { flag: string; kind: Kind }>> =
  Object.fromEntries(
    CONFIG_FILE_KEYS.map((setting) => {
      const { flag, text } = optionRow(setting);
      const kind: Kind = text === 'integer' ? 'integer' : text === 'boolean' ? 'boolean' : 'text';
      return [setting, { flag: flag as string, kind }];
    }),
  ) as Record<ConfigFileKey, { flag: string; kind: Kind }>;

/** The environment variable of a setting, if it has one. */
export function variableOf(setting: ConfigFileKey): string | undefined {
  return optionRow(setting).variable;
}

type Layer = 'flag' | 'environment' | 'file';

interface Given {
  value: unknown;
  layer: Layer;
  /** As messages name it: `flag --bucket`, `environment variable X`, `"bucket" in ./.otel-s3.json`. */
  origin: string;
  variable?: string;
}

/**
 * The values of the CLI's settings: each from its flag, else its environment variable, else
 * the config file; checked by the rules the exporter and the reader use, so a bad value is
 * reported with their wording plus where it came from (a UsageError).
 */
export class SettingSources {
  /** Where each value get() returned came from. */
  readonly origins: Partial<Record<ConfigFileKey, string>> = {};
  readonly #flags: Readonly<Record<string, unknown>>;
  readonly #environment: ReadonlyMap<string, { value: unknown; variable: string }>;
  readonly #file: ConfigFile | undefined;

  /**
   * `signal`: the one signal the command reads (points, spans, logs, trace), whose own variables
   * (`OTEL_EXPORTER_S3_METRICS_PREFIX`) win as they do for its exporter.
   */
  constructor(
    flags: Readonly<Record<string, unknown>>,
    env: Env,
    file: ConfigFile | undefined,
    signal?: SignalName,
  ) {
    this.#flags = flags;
    this.#file = file;
    // Only the CLI's own variables (a bad value of another one is none of its business), parsed
    // as the exporter parses them; the CLI is strict where the exporter warns. One the exporter
    // does not read (OTEL_METRIC_EXPORT_INTERVAL) is read as a flag is: its rule checks it.
    const own = CONFIG_FILE_KEYS.flatMap((setting) => {
      const row = optionRow(setting);
      if (row.variable === undefined) return [];
      const text = row.for.includes('exporter') ? row.text : 'string';
      return [[row.variable, setting, text] as const];
    });
    this.#environment = readEnvironment(
      env,
      (error) => {
        throw new UsageError(error.detail);
      },
      own,
      signal,
    );
    this.ignored =
      signal !== undefined
        ? []
        : own.flatMap(([variable]) =>
            SIGNAL_NAMES.flatMap((s) => {
              const name = signalVariable(variable, s);
              return name !== undefined && env[name]?.trim() ? [name] : [];
            }),
          );
  }

  /** One signal's variables that a command of every signal does not read (see the constructor). */
  readonly ignored: string[];

  /** Which layer gives the setting, if any does. */
  layerOf(setting: ConfigFileKey): Layer | undefined {
    return this.#given(setting)?.layer;
  }

  /** The setting's value checked by `rule`, or undefined when it is not given. */
  get<T>(setting: ConfigFileKey, rule: (option: string, value: unknown) => T): T | undefined {
    const given = this.#given(setting);
    if (given === undefined) return undefined;
    try {
      const value = rule(setting, given.value);
      this.origins[setting] = given.origin;
      return value;
    } catch (error) {
      if (!(error instanceof InvalidOptionError)) throw error;
      const located =
        given.variable === undefined
          ? InvalidOptionError.fromOrigin(error, given.origin)
          : InvalidOptionError.fromVariable(error, given.variable);
      throw new UsageError(located.detail);
    }
  }

  #given(setting: ConfigFileKey): Given | undefined {
    const { flag, kind } = SETTINGS[setting];
    const fromFlag = this.#flags[camelCase(flag)];
    if (fromFlag !== undefined)
      return { value: fromText(kind, fromFlag), layer: 'flag', origin: `flag ${flag}` };
    const fromEnv = this.#environment.get(setting);
    if (fromEnv !== undefined) {
      const { value, variable } = fromEnv;
      return {
        value: fromText(kind, value),
        variable,
        layer: 'environment',
        origin: `environment variable ${variable}`,
      };
    }
    const file = this.#file;
    const fromFile = file?.values[setting];
    if (file === undefined || fromFile === undefined) return undefined;
    return { value: fromFile, layer: 'file', origin: `"${setting}" in ${file.path}` };
  }
}

/** A flag's text as the value it spells; anything else is left for the rule to reject. */
function fromText(kind: Kind, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (kind === 'integer' && /^\s*\d+\s*$/.test(value)) return Number(value);
  if (kind === 'boolean') return parseBooleanText(value) ?? value;
  return value;
}

/** Where options' values came from, by option name: `flag --shard`, `environment variable …`. */
export type Origins = Readonly<Record<string, string>>;

/**
 * The options that a command's own flags (not the global ones) set on its command line, from the
 * option table: `{ shard: 'flag --shard', ... }`.
 */
export function commandFlagOrigins(
  /** Commander's source of a flag's value by its key (`cli` when given on the command line). */
  given: (key: string) => string | undefined,
): Record<string, string> {
  const origins: Record<string, string> = {};
  for (const { name, flag } of OPTION_TABLE as readonly OptionRow[]) {
    if (flag !== undefined && given(camelCase(flag)) === 'cli') origins[name] = `flag ${flag}`;
  }
  return origins;
}

/**
 * The error, naming where its option's value came from when `origins` knows it (a part of an
 * option, `shard.count`, came with the option): "invalid flag --shard (option shard.count): ...".
 */
export function located(error: InvalidOptionError, origins: Origins): InvalidOptionError {
  if (error.origin !== undefined) return error;
  const origin = origins[error.option] ?? origins[error.option.split('.')[0] ?? ''];
  return origin === undefined ? error : InvalidOptionError.fromOrigin(error, origin);
}

const camelCase = (flag: string) =>
  flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
