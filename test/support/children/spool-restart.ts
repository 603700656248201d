/**
 * Child process, one run of a service with a spool (the restart test runs it as pid 1 of a pid
 * namespace of its own, like a container). Exports batches of SIGNAL (metrics unless set) tagged
 * FIRST_TAG..LAST_TAG (5 items each, one batch each), then waits for what WAIT lists (comma-separated), printing JSON lines:
 *   {"loaded":true}                    START is `stdin`: loaded, waiting for a `start` line
 *   {"constructed":true,"state":...}   the constructor returned
 *   {"state":...,"at":ms}              each change of stats().spool.state
 *   {"exported":true,"stats":...}      every batch exported (WAIT has `stored`: and stored in S3)
 *   {"durable":true,"stats":...}       WAIT has `durable`: every batch written to the spool
 *   {"drained":true,"stats":...}       WAIT has `drained`: the spool adopted, REPLAYED batches
 *                                      of an earlier run replayed, nothing pending; then it
 *                                      shuts down
 *   {"done":true,"stats":...}          after shutdown()
 * Otherwise it stays alive until killed, or until a `stop` line arrives on stdin (then it shuts
 * down). START=stdin makes the exporter only once a `start` line arrives: the parent starts the
 * process (loading takes seconds) ahead of the moment the run must begin. LOCK_TIMING (JSON of a
 * LockTiming), when set, gives the exporter those lock intervals instead of the real ones.
 */
import { createInterface } from 'node:readline';
import { LOCK_TIMING_OPTION, type LockTiming } from '../../../src/spool/lock.js';
import { driverOf, exportTagged } from '../signal-driver.js';
import { childSpoolExporter } from './connection.js';

const env = process.env;
const line = (value: object) => console.log(JSON.stringify(value));
let stop = () => {};
const start = new Promise<void>((resolve) => {
  createInterface({ input: process.stdin }).on('line', (command) => {
    if (command === 'start') resolve();
    if (command === 'stop') stop();
  });
});
if (env.START === 'stdin') {
  line({ loaded: true });
  await start;
}

const started = performance.now();
const driver = driverOf(env.SIGNAL);
const lock =
  env.LOCK_TIMING === undefined
    ? {}
    : { [LOCK_TIMING_OPTION]: JSON.parse(env.LOCK_TIMING) as LockTiming };
const exporter = childSpoolExporter(
  {
    maxBatchAgeMillis: 20,
    requestTimeoutMillis: 60_000,
    flushTimeoutMillis: Number(env.FLUSH_TIMEOUT_MILLIS ?? 10_000),
    ...lock,
  },
  driver,
);
const stats = () => exporter.stats();
line({ constructed: true, state: stats().spool?.state });

let state: string | undefined;
const watch = setInterval(() => {
  const now = stats().spool?.state;
  if (now === state) return;
  state = now;
  line({ state, at: Math.round(performance.now() - started) });
}, 10);
const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((r) => setTimeout(r, 10));
};
const shutdown = async () => {
  await exporter.shutdown();
  clearInterval(watch);
  line({ done: true, stats: stats() });
  process.exit(0);
};
stop = () => void shutdown();

const first = Number(env.FIRST_TAG);
const last = Number(env.LAST_TAG);
for (let tag = first; tag <= last; tag++) {
  const sealed = stats().batchesSealed;
  const result = await exportTagged(driver, exporter, 5, tag);
  if (result.code !== 0) throw result.error ?? new Error(`export of tag ${tag} failed`);
  await until(() => stats().batchesSealed > sealed); // one batch per tag
}
const wait = new Set((env.WAIT ?? '').split(','));
if (wait.has('stored')) await until(() => stats().batchesUploaded >= last - first + 1);
line({ exported: true, stats: stats() });
if (wait.has('durable')) {
  await until(() => (stats().spool?.written ?? 0) >= stats().batchesSealed);
  line({ durable: true, stats: stats() });
}
if (wait.has('drained')) {
  const replayed = Number(env.REPLAYED ?? 0);
  await until(() => {
    const s = stats();
    return (
      s.spool?.state === 'active' &&
      s.spool.replayed >= replayed &&
      s.spool.files === 0 &&
      s.pendingBatches === 0
    );
  });
  line({ drained: true, stats: stats() });
  await shutdown();
}
setInterval(() => {}, 1_000);
