import { headerMayBeTheCause } from '../s3/verdict.js';
import { probeKey } from './bookkeeping.js';
import type { CompactionStore } from './store.js';

/**
 * Whether the server honours `If-None-Match: *`: a probe object is created twice with it; the
 * second must be refused. A server that refuses the header (501, or 400 from servers that reject
 * unknown conditions) or ignores it (both succeed) cannot keep two compactors apart. The probe is
 * deleted. Run only when there is work to do: a run with nothing to do writes nothing.
 */
export async function conditionalWritesWork(
  store: CompactionStore,
  outPrefix: string,
  signal: AbortSignal,
): Promise<boolean> {
  const key = probeKey(outPrefix);
  const body = new TextEncoder().encode('{"probe":"If-None-Match"}\n');
  try {
    if ((await store.put(key, body, true, signal)) !== 'created') return false;
    return (await store.put(key, body, true, signal)) === 'exists';
  } catch (error) {
    if (conditionalHeaderRefused(error)) return false;
    throw error;
  } finally {
    await store.delete([key], signal).catch(() => {});
  }
}

/** True when a conditional PUT failed because the server may not know the header. */
function conditionalHeaderRefused(error: unknown): boolean {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  return headerMayBeTheCause(cause);
}
