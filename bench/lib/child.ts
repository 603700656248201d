/** Runs a file of this repository in its own Node.js process (TypeScript through tsx), capped. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when the cap was hit and the child was killed. */
  capped: boolean;
  millis: number;
  stdout: string[];
  stderr: string;
}

export interface ChildOptions {
  args?: string[];
  env?: Record<string, string | undefined>;
  /** Node flags before the file (and before --import tsx), e.g. --expose-gc. */
  nodeFlags?: string[];
  capMillis: number;
  /** Echo the child's stderr (its progress lines) as it comes. */
  echoStderr?: boolean;
}

/** A TypeScript file, through tsx. */
export function runTs(file: string, options: ChildOptions): Promise<ChildRun> {
  return runNode(file, {
    ...options,
    nodeFlags: [...(options.nodeFlags ?? []), '--import', 'tsx'],
  });
}

/** A JavaScript file on plain Node.js: no loader in the process (what the footprint measures). */
export function runNode(file: string, options: ChildOptions): Promise<ChildRun> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...(options.nodeFlags ?? []), file, ...(options.args ?? [])],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
    if (options.echoStderr) process.stderr.write(chunk);
  });
  let capped = false;
  const cap = setTimeout(() => {
    capped = true;
    child.kill('SIGKILL'); // our own child, by its handle
  }, options.capMillis);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(cap);
      resolve({
        code,
        signal,
        capped,
        millis: performance.now() - started,
        stdout: out.split('\n').filter((l) => l.length > 0),
        stderr: err,
      });
    });
  });
}

/** The first stdout line that parses as JSON and has `key`, or undefined. */
export function jsonLine<T>(run: ChildRun, key: string): T | undefined {
  for (const line of run.stdout) {
    if (!line.startsWith('{')) continue;
    try {
      const value = JSON.parse(line) as Record<string, unknown>;
      if (key in value) return value as T;
    } catch {
      // not JSON: a log line
    }
  }
  return undefined;
}
