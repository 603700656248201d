#!/usr/bin/env node
/** `otel-s3`: the command-line reader (see `otel-s3 --help` and src/cli/main.ts). */
import { runCli } from './cli/main.js';

// The AWS SDK warns on every run that its 2027 releases need Node 22; noise for a CLI. This is
// the SDK's own switch, read when the first client is made.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const interrupt = new AbortController();
process.once('SIGINT', () => {
  interrupt.abort();
  // A second Ctrl-C does not wait for the downloads to unwind.
  process.once('SIGINT', () => process.exit(130));
});

// No top-level await: this file is also bundled as CommonJS (dist/cjs/cli.js).
runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  signal: interrupt.signal,
}).then((code) => {
  process.exitCode = code; // a rejection stays unhandled: printed, exit code 1, as before
});
