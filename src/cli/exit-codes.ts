/** Exit codes of `otel-s3`, for scripts. Documented in `otel-s3 --help` and docs/reading.md. */
export const EXIT = {
  /** Everything in the range was read. */
  ok: 0,
  /** Some objects could not be read: each was reported on stderr and skipped; the rest was printed. */
  unreadable: 1,
  /** Bad command line, environment variable or `.otel-s3.json`. */
  usage: 2,
  /** Credentials, permissions, missing bucket or directory, wrong region: nothing could be read. */
  access: 3,
  /** Any other failure, e.g. the endpoint cannot be reached. */
  failure: 4,
  /**
   * Nothing to read: the keys under the prefix are not in the exporter's layout (a note names
   * the flag that reads them), or there is no object under it at all.
   */
  nothingReadable: 5,
  /**
   * `trace <id>`: everything was read and the trace has no span in the range. Were some objects
   * unreadable (1) or nothing readable (5), that code is kept: the trace may be in them.
   */
  notFound: 6,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;

export const EXIT_CODES_HELP = `
Exit codes:
  0    ok
  1    some objects could not be read; each was reported on stderr and skipped, the rest printed
  2    usage error: a bad option, environment variable or .otel-s3.json value
  3    access error: credentials, permissions, missing bucket or directory, wrong region
  4    other failure, e.g. the endpoint cannot be reached
  5    nothing to read: the keys under the prefix are not in the exporter's layout (the note
       names the flag that reads them), or the prefix holds nothing at all
  6    trace <id>: everything was read and the trace has no span in the range
  130  interrupted`;

/** A bad flag, environment variable or config file value: exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
