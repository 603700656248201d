/** Options whose values are never shown at all: only their shape. */
const SECRET_OPTIONS = new Set(['credentials']);
/** Keys whose values are never shown, wherever they appear in a value. */
const SECRET_KEY =
  /secret|token|password|passwd|credential|session|signature|authorization|accesskey/i;
const REDACTED = '[redacted]';

/**
 * Thrown at construction for a bad option; names the option, the value and what is allowed.
 * Values that hold credentials are never shown, in the message or in `value`.
 */
export class InvalidOptionError extends TypeError {
  readonly option: string;
  /** The value, with anything that could hold a credential replaced by `[redacted]`. */
  readonly value: unknown;
  /** The environment variable the value came from, if it did. */
  readonly variable: string | undefined;
  /**
   * Where the value came from when it was not passed in code, as messages name it:
   * `environment variable X`, or what a tool passed to fromOrigin (`flag --bucket`, ...).
   */
  readonly origin: string | undefined;
  readonly expected: string;
  /** The message without the package name in front, for tools that print their own. */
  readonly detail: string;

  /** `detail` replaces the usual "invalid option X: value (expected ...)" wording. */
  constructor(
    option: string,
    value: unknown,
    expected: string,
    variable?: string,
    detail?: string,
    origin?: string,
  ) {
    origin ??= variable === undefined ? undefined : `environment variable ${variable}`;
    const where = origin === undefined ? `option ${option}` : `${origin} (option ${option})`;
    const safe = redact(option, value);
    detail ??= `invalid ${where}: ${show(safe)} (expected ${expected})`;
    super(`otel-s3-exporter: ${detail}`);
    this.detail = detail;
    this.name = 'InvalidOptionError';
    this.option = option;
    this.value = safe;
    this.variable = variable;
    this.origin = origin;
    this.expected = expected;
  }

  /** The same error, for a value that came from environment variable `variable`. */
  static fromVariable(error: InvalidOptionError, variable: string): InvalidOptionError {
    return new InvalidOptionError(error.option, error.value, error.expected, variable);
  }

  /**
   * The same error, for a value that came from `origin`, e.g. `flag --bucket` or
   * `/home/me/.otel-s3.json "bucket"`: "invalid flag --bucket (option bucket): ...".
   */
  static fromOrigin(error: InvalidOptionError, origin: string): InvalidOptionError {
    return new InvalidOptionError(
      error.option,
      error.value,
      error.expected,
      undefined,
      undefined,
      origin,
    );
  }

  /** An option name that does not exist, with the likely intended one. Its value is not shown. */
  static unknown(option: string, suggestion: string | undefined): InvalidOptionError {
    const hint = suggestion === undefined ? '' : `; did you mean ${suggestion}?`;
    return new InvalidOptionError(
      option,
      undefined,
      `a known option name${hint}`,
      undefined,
      `unknown option ${option}${hint}`,
    );
  }
}

/** The value as it may be shown: credentials and secret-looking fields replaced. */
function redact(option: string, value: unknown): unknown {
  if (value === undefined || value === null) return value;
  if (SECRET_OPTIONS.has(option.split('.')[0] ?? option)) return describeShape(value);
  return scrub(value, 0);
}

function scrub(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return stripUrlPassword(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 8) return REDACTED;
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] = SECRET_KEY.test(key) ? REDACTED : scrub(v, depth + 1);
  }
  return out;
}

/**
 * `https://user:pass@host/...` → `https://[redacted]@host/...`, for each URL anywhere in the text:
 * the user information is dropped whole, up to the URL's last "@" (secret keys may hold "/" and
 * "+", so the authority cannot be parsed reliably). A URL ends at whitespace.
 */
function stripUrlPassword(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)\S*@/gi, `$1${REDACTED}@`);
}

/** What kind of value it is, without any of its contents. */
function describeShape(value: unknown): string {
  if (typeof value === 'function') return '[function]';
  if (typeof value !== 'object' || value === null) return `[${typeof value}, redacted]`;
  const keys = Object.keys(value);
  const kind = Array.isArray(value) ? 'array' : (value.constructor?.name ?? 'object');
  return `[${kind}${keys.length === 0 ? '' : ` with keys ${keys.slice(0, 8).join(', ')}`}, values redacted]`;
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (value === null || typeof value !== 'object') return String(value);
  try {
    return JSON.stringify(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
