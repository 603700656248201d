// The compaction worker from TypeScript sources: a worker thread does not inherit the parent's
// tsx loader on every runtime (Node 20 does not), so this thread registers its own, then runs
// src/compact/compact-worker.ts as dist/ would run its build.
import { register } from 'tsx/esm/api';

register();
await import('../../../src/compact/compact-worker.js');
