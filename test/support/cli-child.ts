import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

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
  options: { env?: Record<string, string>; cwd: string; timeoutMillis?: number },
): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import', TSX, CLI, ...args], {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: options.cwd,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`otel-s3 ${args.join(' ')} did not exit in time; stderr:\n${stderr}`));
    }, options.timeoutMillis ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The non-empty lines of a command's output. */
export const lines = (text: string) => text.split('\n').filter((l) => l !== '');
