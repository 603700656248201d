import { spawn } from 'node:child_process';
import { collectOutput } from './child.js';

const VENV_SCRIPT = new URL('../../scripts/python-venv.sh', import.meta.url).pathname;

/** scripts/python-venv.sh's exit status when there is no Python 3 with the venv module. */
export const NO_PYTHON_EXIT = 3;

/**
 * Where the pyarrow cross-check (test/integration/parquet-writer-engines.test.ts) finds its
 * Python, or why it has none. Plain data: it crosses to the test workers. `skip`: the test is
 * reported as skipped with the reason (no Python 3 here, outside CI); otherwise it fails with it.
 */
export type PyarrowPython = { python: string } | { unavailable: string; skip: boolean };

export interface VenvRun {
  /** The exit status, or null when killed. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs scripts/python-venv.sh, its stderr relayed as it comes (pip's errors, the one-time line). */
function runVenvScript(env: NodeJS.ProcessEnv): Promise<VenvRun> {
  return new Promise((resolve) => {
    const child = spawn('bash', [VENV_SCRIPT], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = collectOutput(child, (chunk) => process.stderr.write(chunk));
    child.on('error', (error) =>
      resolve({ code: null, stdout: output.stdout(), stderr: error.message }),
    );
    child.on('close', (code) =>
      resolve({ code, stdout: output.stdout(), stderr: output.stderr() }),
    );
  });
}

/** What a run of scripts/python-venv.sh means for the pyarrow test. */
export function pyarrowFromVenvRun(run: VenvRun, ci: boolean): PyarrowPython {
  const python = run.stdout.trim();
  if (run.code === 0 && python !== '') return { python };
  const lines = run.stderr
    .trim()
    .split('\n')
    .filter((l) => l.trim() !== '');
  const last = lines.at(-1) ?? `exit status ${run.code}`;
  if (run.code === NO_PYTHON_EXIT) {
    return { unavailable: `pyarrow test: ${last.replace(/^python-venv\.sh: /, '')}`, skip: !ci };
  }
  return {
    unavailable: `pyarrow test: bash scripts/python-venv.sh could not make its venv (exit status ${run.code}): ${last}`,
    skip: false,
  };
}

/**
 * The Python with pyarrow for this test run: OTEL_S3_PYARROW_PYTHON when set; else
 * scripts/python-venv.sh's, made in the cache directory the first time (a few seconds from a
 * wheel mirror, then under a second). Without Python 3 the pyarrow test is skipped with the
 * reason, and fails in CI (CI=true); any other failure fails it everywhere.
 */
export async function acquirePyarrowPython(env = process.env): Promise<PyarrowPython> {
  const fromEnv = env.OTEL_S3_PYARROW_PYTHON;
  if (fromEnv !== undefined && fromEnv !== '') return { python: fromEnv };
  return pyarrowFromVenvRun(await runVenvScript(env), env.CI === 'true' || env.CI === '1');
}
