/**
 * Child processes that the tests of a file each wait for, started together: the first call starts
 * `start(key)` for every key at once (they run side by side, not one test after another), and
 * each call returns its own key's promise. A failure belongs to its key's test alone.
 */
export function startedTogether<K, T>(
  keys: readonly K[],
  start: (key: K) => Promise<T>,
): (key: K) => Promise<T> {
  let started: Map<K, Promise<T>> | undefined;
  return (key) => {
    started ??= new Map(
      keys.map((k) => {
        const running = start(k);
        running.catch(() => {}); // reported by the test that awaits it
        return [k, running];
      }),
    );
    const running = started.get(key);
    if (running === undefined) throw new Error(`startedTogether: ${String(key)} is not a key`);
    return running;
  };
}
