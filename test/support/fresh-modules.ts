// Before each unit file (vitest.config.ts: setupFiles). The unit files share their worker
// (isolate: false), so the packages they import load once per worker; the package's own modules
// and the test helpers are evaluated afresh here for every file, so that no state of one file's
// modules (counters, once-only warnings, caches) reaches the next.
import { vi } from 'vitest';

vi.resetModules();
