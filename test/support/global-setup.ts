import type { TestProject } from 'vitest/node';
import { acquireS3Server, NoS3Server, type S3ServerInfo } from './s3-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The S3 server of this run, or why there is none. */
    s3Server: S3ServerInfo | { unavailable: string };
  }
}

/**
 * Provides a real S3 server to the integration tests. In CI (CI=true) a missing server fails
 * the run; elsewhere the integration tests are reported as skipped with the reason.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  try {
    const server = await acquireS3Server();
    console.log(`integration tests use ${server.info.kind} S3 at ${server.info.endpoint}`);
    project.provide('s3Server', server.info);
    return () => server.stop();
  } catch (error) {
    if (!(error instanceof NoS3Server) || process.env.CI === 'true' || process.env.CI === '1')
      throw error;
    console.warn(`integration tests skipped: ${error.message}`);
    project.provide('s3Server', { unavailable: error.message });
    return async () => {};
  }
}
