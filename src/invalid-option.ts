/** Thrown at construction for a bad option; names the option, the value and what is allowed. */
export class InvalidOptionError extends TypeError {
  readonly option: string;
  readonly value: unknown;
  /** The environment variable the value came from, if it did. */
  readonly variable: string | undefined;
  readonly expected: string;
  /** The message without the package name in front, for tools that print their own. */
  readonly detail: string;
  constructor(option: string, value: unknown, expected: string, variable?: string) {
    const where =
      variable === undefined
        ? `option ${option}`
        : `environment variable ${variable} (option ${option})`;
    const detail = `invalid ${where}: ${show(value)} (expected ${expected})`;
    super(`otel-s3-exporter: ${detail}`);
    this.detail = detail;
    this.name = 'InvalidOptionError';
    this.option = option;
    this.value = value;
    this.variable = variable;
    this.expected = expected;
  }
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
