import { randomUUID } from 'node:crypto';
import { objectMissing } from '../s3/errors.js';
import { headerMayBeTheCause } from '../s3/verdict.js';
import { probeKey } from './bookkeeping.js';
import type { CompactionStore } from './store.js';

/** A probe is a line of JSON; anything longer at its key is not ours. */
const MAX_PROBE_BYTES = 4096;

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
  // The nonce makes the probe's bytes its own, to tell them from anything else at the key.
  const probe = { probe: 'If-None-Match', nonce: randomUUID() };
  const body = new TextEncoder().encode(`${JSON.stringify(probe)}\n`);
  try {
    if (!(await createdByUs(store, key, body, signal))) return false;
    return (await store.put(key, body, true, signal)) === 'exists';
  } catch (error) {
    if (conditionalHeaderRefused(error)) return false;
    throw error;
  } finally {
    await store.delete([key], signal).catch(() => {});
  }
}

/**
 * Whether the first conditional PUT of the fresh key stored `body`. 'exists' is no evidence by
 * itself: when the answer to a PUT that landed is lost, the SDK sends it again, and that retry
 * is refused (412) for our own object. So the key is read back: our bytes there, it was created;
 * anything else (nothing at all) means the server refuses to create a key no object has.
 */
async function createdByUs(
  store: CompactionStore,
  key: string,
  body: Uint8Array,
  signal: AbortSignal,
): Promise<boolean> {
  if ((await store.put(key, body, true, signal)) === 'created') return true;
  try {
    const stored = await store.source.get(key, signal, MAX_PROBE_BYTES);
    return Buffer.from(stored).equals(body);
  } catch (error) {
    signal.throwIfAborted();
    if (objectMissing(error)) return false;
    throw error;
  }
}

/** True when a conditional PUT failed because the server may not know the header. */
function conditionalHeaderRefused(error: unknown): boolean {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  return headerMayBeTheCause(cause);
}
