import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { runCli } from '../../src/cli/main.js';
import { collectOutput } from './child.js';
import { makeTempDir, removeDir } from './temp-dir.js';

const CLI = new URL('../../src/cli.ts', import.meta.url).pathname;
/** tsx by absolute URL, so the child can run in any directory. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the `otel-s3` CLI from source in a child process, in `cwd` (a directory of the test's,
 * so no `.otel-s3.json` of the repository applies), with only `env` plus PATH and HOME: the
 * AWS and OTEL_EXPORTER_S3 variables of this process do not leak in.
 */
export function runCliChild(
  args: string[],
  options: {
    env?: Record<string, string>;
    cwd: string;
    timeoutMillis?: number;
    /** A command to run the CLI under, e.g. `['/usr/bin/time', '-v']`. */
    wrapper?: string[];
  },
): Promise<CliRun> {
  const [command, ...wrapperArgs] = [...(options.wrapper ?? []), process.execPath];
  const child = spawn(command as string, [...wrapperArgs, '--import', TSX, CLI, ...args], {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: options.cwd,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = collectOutput(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`otel-s3 ${args.join(' ')} did not exit in time; stderr:\n${output.stderr()}`),
      );
    }, options.timeoutMillis ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: output.stdout(), stderr: output.stderr() });
    });
  });
}

/**
 * `otel-s3 compact` of `prefix` in `bucket` by the data's time, from the hour `fromMillis`, and
 * `extraArgs`, in a child process (runCliChild) in a temp directory of its own, removed after;
 * `env` reaches the server (the integration tests' s3Environment()).
 */
export async function compactInChild(
  where: { bucket: string; prefix: string; fromMillis: number },
  env: Record<string, string>,
  extraArgs: string[] = [],
): Promise<CliRun> {
  const cwd = await makeTempDir('otel-s3-compact-cli-');
  try {
    return await runCliChild(
      [
        'compact',
        '--bucket',
        where.bucket,
        '--prefix',
        where.prefix,
        '--partition-time',
        'data',
        '--from',
        new Date(where.fromMillis).toISOString(),
        ...extraArgs,
      ],
      { cwd, env },
    );
  } finally {
    await removeDir(cwd);
  }
}

export interface CliInProcessOptions {
  /** Default: the test's own directory, given by the caller. */
  cwd?: string;
  env?: Record<string, string>;
  stdoutTTY?: boolean;
  /** The terminal's width that stdout reports (a TTY's `columns`); none without it. */
  stdoutColumns?: number;
  stderrTTY?: boolean;
  signal?: AbortSignal;
  /** Stdout stops being read (EPIPE) after this many bytes. */
  closeAfter?: number;
}

/** Runs the CLI in this process with captured stdout and stderr (faster than a child). */
export async function runCliInProcess(
  args: string[],
  options: CliInProcessOptions & { cwd: string },
): Promise<CliRun & { code: number }> {
  const stdout = Object.assign(new PassThrough(), {
    isTTY: options.stdoutTTY === true,
    ...(options.stdoutColumns === undefined ? {} : { columns: options.stdoutColumns }),
  });
  const stderr = Object.assign(new PassThrough(), {
    isTTY: options.stderrTTY === true,
    columns: 100,
  });
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (options.closeAfter !== undefined && out.length >= options.closeAfter) {
      stdout.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    }
  });
  stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const code = await runCli(args, {
    stdout,
    stderr,
    env: options.env ?? {},
    cwd: options.cwd,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  return { code, stdout: out, stderr: err };
}

/** GNU time's `-v` report in `stderr`: the peak RSS in bytes, and stderr without the report. */
export function splitTimeReport(stderr: string): { maxRssBytes: number; stderr: string } {
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
  if (rss === null) throw new Error(`no "Maximum resident set size" in:\n${stderr}`);
  // The report starts with its "Command being timed" line (after "Command exited ..." if any).
  const start = stderr.search(
    /^(Command exited with non-zero status \d+\n)?\tCommand being timed/m,
  );
  return { maxRssBytes: Number(rss[1]) * 1024, stderr: stderr.slice(0, start) };
}

/** The non-empty lines of a command's output. */
export const lines = (text: string) => text.split('\n').filter((l) => l !== '');
