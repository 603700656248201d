import type { TestProject } from 'vitest/node';
import { acquirePyarrowPython, type PyarrowPython } from './pyarrow-python.js';
import { acquireS3Server, NoS3Server, type S3ServerInfo } from './s3-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The S3 server of this run, or why there is none. */
    s3Server: S3ServerInfo | { unavailable: string };
    /** The Python with pyarrow of this run, or why there is none. */
    pyarrow: PyarrowPython;
  }
}

/**
 * Provides a real S3 server to the integration tests. In CI (CI=true) a missing server fails
 * the run; elsewhere the integration tests are reported as skipped with the reason. Alongside,
 * the Python with pyarrow that the Parquet writer's cross-check reads with
 * (test/support/pyarrow-python.ts: made by scripts/python-venv.sh when none is named).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [server, pyarrow] = await Promise.allSettled([acquireS3Server(), acquirePyarrowPython()]);
  if (pyarrow.status === 'rejected') throw pyarrow.reason;
  const py = pyarrow.value;
  project.provide('pyarrow', py);
  if ('python' in py) console.log(`the pyarrow test uses ${py.python}`);
  else if (py.skip) console.warn(`${py.unavailable} (skipped)`);
  else console.error(`${py.unavailable} (it fails)`);

  if (server.status === 'fulfilled') {
    console.log(
      `integration tests use ${server.value.info.kind} S3 at ${server.value.info.endpoint}`,
    );
    project.provide('s3Server', server.value.info);
    return () => server.value.stop();
  }
  const error: unknown = server.reason;
  if (!(error instanceof NoS3Server) || process.env.CI === 'true' || process.env.CI === '1')
    throw error;
  console.warn(`integration tests skipped: ${error.message}`);
  project.provide('s3Server', { unavailable: error.message });
  return async () => {};
}
