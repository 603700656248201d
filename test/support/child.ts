import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * Collects what a child process writes to stdout and stderr, as text so far; `onStderr` is
 * handed each stderr chunk as it comes (to relay it, say).
 */
export function collectOutput(
  child: Pick<ChildProcess, 'stdout' | 'stderr'>,
  onStderr: (chunk: Buffer) => void = () => {},
): { stdout(): string; stderr(): string } {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    onStderr(chunk);
  });
  return { stdout: () => stdout, stderr: () => stderr };
}

export interface Child {
  process: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  /** stderr so far, for failure messages. */
  stderr(): string;
  /** The first stdout line (parsed as JSON) for which `match` is true. */
  waitForJson<T>(match: (value: T) => boolean, timeoutMillis?: number): Promise<T>;
  /** Resolves when the process has exited, with its code, signal and performance.now() then. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
}

export interface SpawnOptions {
  /**
   * Runs it as pid 1 of a pid namespace of its own, like a container (Linux, root). Killing the
   * returned process (unshare) kills it too (--kill-child), so nothing is orphaned.
   */
  ownPidNamespace?: boolean;
  /** A pipe to its stdin (`process.stdin` of the child); otherwise stdin is closed. */
  stdin?: boolean;
}

/** Runs a TypeScript file of this repository in a child Node.js process (through tsx). */
export function spawnTs(
  file: string,
  env: Record<string, string | undefined> = {},
  nodeFlags: string[] = [],
  options: SpawnOptions = {},
): Child {
  const node = [process.execPath, ...nodeFlags, '--import', 'tsx', file];
  const [command, ...args] = options.ownPidNamespace
    ? ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc', ...node]
    : node;
  const child = spawn(command as string, args, {
    cwd: ROOT,
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
    stdio: [options.stdin === true ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    lines.push(line);
    for (const waiter of waiters) waiter(line);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>(
    (resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  const parse = <T>(line: string): T | undefined => {
    try {
      return JSON.parse(line) as T;
    } catch {
      return undefined;
    }
  };
  return {
    process: child,
    lines,
    stderr: () => stderr,
    exited,
    waitForJson<T>(match: (value: T) => boolean, timeoutMillis = 30_000): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const check = (line: string) => {
          const value = parse<T>(line);
          if (value !== undefined && match(value)) {
            clearTimeout(timer);
            resolve(value);
          }
        };
        const timer = setTimeout(
          () =>
            reject(new Error(`no matching line within ${timeoutMillis} ms; stderr:\n${stderr}`)),
          timeoutMillis,
        );
        for (const line of lines) check(line);
        waiters.push(check);
        void exited.then(() => {
          clearTimeout(timer);
          reject(
            new Error(
              `child exited before a matching line; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`,
            ),
          );
        });
      });
    },
  };
}

/** A child started ahead of its test, waiting for its go (test/support/children/go.ts). */
export interface WaitingChild {
  /** Resolves once its modules are loaded and it waits. */
  ready: Promise<unknown>;
  /** Lets it go on; the child from then on. */
  go(): Child;
  /** Kills it with SIGKILL unless it has exited (for an afterAll: a test that did not run). */
  kill(): void;
}

/** spawnTs() of a child that waits for its go: start children ahead, together, and go one by one. */
export function spawnWaiting(
  file: string,
  env: Record<string, string | undefined> = {},
  nodeFlags: string[] = [],
): WaitingChild {
  const child = spawnTs(file, { ...env, GO_ON_STDIN: '1' }, nodeFlags, { stdin: true });
  const ready = child.waitForJson<{ ready?: boolean }>((v) => v.ready === true, 120_000);
  ready.catch(() => {}); // a child killed before it was ready: its test, if any, says why
  return {
    ready,
    go() {
      child.process.stdin?.end('go\n');
      return child;
    },
    kill() {
      if (child.process.exitCode === null && child.process.signalCode === null)
        child.process.kill('SIGKILL');
    },
  };
}
