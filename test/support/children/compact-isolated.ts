/**
 * Child process: compacts DIR (PREFIX, from FROM) through compactIsolated() with the worker's
 * TypeScript file (through compact-worker-tsx.mjs, which gives the thread a tsx loader). Prints
 * each event type once, then {"report"} or {"error": {name, reason, message}}.
 */
import { compactIsolated } from '../../../src/compact/isolated.js';

const env = process.env;
const seen = new Set<string>();
const run = compactIsolated(
  {
    dir: env.DIR as string,
    prefix: env.PREFIX as string,
    from: new Date(env.FROM as string),
    settleMillis: 0,
  },
  (event) => {
    if (!seen.has(event.type)) console.log(JSON.stringify({ event: event.type }));
    seen.add(event.type);
  },
  new AbortController().signal,
  new URL('./compact-worker-tsx.mjs', import.meta.url),
);
try {
  if (run === undefined) throw new Error('compactIsolated did not start a worker');
  console.log(JSON.stringify({ report: await run }));
} catch (error) {
  const e = error as {
    name?: string;
    reason?: string;
    message?: string;
    constructor: { name: string };
  };
  console.log(
    JSON.stringify({
      error: { name: e.name, class: e.constructor.name, reason: e.reason, message: e.message },
    }),
  );
}
