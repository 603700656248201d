import { InvalidOptionError } from '../base/invalid-option.js';

/** A value from the environment: parsed, and the variable it came from. */
export interface EnvironmentValue {
  value: unknown;
  variable: string;
  /** For a signal's variable, the variable for all signals: used if this value is refused. */
  fallback?: EnvironmentValue;
}

/** Reports a refused environment value; `instead`: the variable used in its place, if any. */
export type EnvironmentWarn = (error: InvalidOptionError, instead?: string) => void;

/** Each option's value from code, else the environment, else its default; see resolveSources. */
export class Fields {
  readonly #code: Readonly<Record<string, unknown>>;
  readonly #environment: ReadonlyMap<string, EnvironmentValue>;
  readonly #warn: EnvironmentWarn;
  readonly #origins = new Map<string, 'code' | 'environment'>();

  constructor(
    code: Readonly<Record<string, unknown>>,
    environment: ReadonlyMap<string, EnvironmentValue>,
    warn: EnvironmentWarn,
  ) {
    this.#code = code;
    this.#environment = environment;
    this.#warn = warn;
  }

  get<T, D>(option: string, parse: (option: string, value: unknown) => T, fallback: D): T | D {
    const fromCode = this.#code[option];
    if (fromCode !== undefined) {
      this.#origins.set(option, 'code');
      return parse(option, fromCode);
    }
    this.#origins.delete(option);
    // A signal's variable, then (if it is refused) the variable for all, then the default.
    for (let fromEnv = this.#environment.get(option); fromEnv !== undefined; ) {
      try {
        const value = parse(option, fromEnv.value);
        this.#origins.set(option, 'environment');
        return value;
      } catch (error) {
        if (!(error instanceof InvalidOptionError)) throw error;
        this.#warn(
          InvalidOptionError.fromVariable(error, fromEnv.variable),
          fromEnv.fallback?.variable ?? defaultText(fallback),
        );
        fromEnv = fromEnv.fallback;
      }
    }
    return fallback;
  }

  /**
   * As get() without a default, for an option whose absence sends data elsewhere (no endpoint:
   * AWS S3): when every variable given for it is refused, the first one's error is thrown, as
   * for a required option, instead of a warning.
   */
  strict<T>(option: string, parse: (option: string, value: unknown) => T): T | undefined {
    const first = this.#environment.get(option);
    if (this.#code[option] === undefined && first !== undefined) {
      let refused: InvalidOptionError | undefined;
      for (let fromEnv: EnvironmentValue | undefined = first; ; fromEnv = fromEnv.fallback) {
        if (fromEnv === undefined) throw refused;
        try {
          parse(option, fromEnv.value);
          break;
        } catch (error) {
          if (!(error instanceof InvalidOptionError)) throw error;
          refused ??= InvalidOptionError.fromVariable(error, fromEnv.variable);
        }
      }
    }
    return this.get(option, parse, undefined);
  }

  /** Where the value get() last returned for `option` came from. */
  origin(option: string): 'code' | 'environment' | 'default' {
    return this.#origins.get(option) ?? 'default';
  }

  /** As get(), for an option without a default: a bad environment value throws too. */
  required<T>(option: string, parse: (option: string, value: unknown) => T): T {
    const fromEnv = this.#environment.get(option);
    const fromCode = this.#code[option];
    if (fromCode !== undefined || fromEnv === undefined) return parse(option, fromCode);
    try {
      return parse(option, fromEnv.value);
    } catch (error) {
      if (!(error instanceof InvalidOptionError)) throw error;
      throw InvalidOptionError.fromVariable(error, fromEnv.variable);
    }
  }

  /**
   * A value that is valid alone but conflicts with another: throws if it came from code, warns
   * and falls back if it came from the environment; a default is kept as it is.
   */
  reject<T>(option: string, expected: string, fallback: T): T {
    if (this.origin(option) === 'default') return fallback;
    return this.get(
      option,
      (o, v): T => {
        throw new InvalidOptionError(o, v, expected);
      },
      fallback,
    );
  }
}

/**
 * What a refused variable is replaced by, as its warning says it: the default with its value
 * where it is one (a default raised by another option, say retry.maxDelayMillis to
 * retry.initialDelayMillis, is not the documented one).
 */
function defaultText(fallback: unknown): string | undefined {
  if (typeof fallback === 'number' || typeof fallback === 'boolean') {
    return `the default (${String(fallback)})`;
  }
  if (typeof fallback === 'string') return `the default (${JSON.stringify(fallback)})`;
  return undefined;
}
