/**
 * Is the steady-state gap the allocator? The footprint suite's steady state (2,000 series of a
 * counter and a histogram, exported every second) for no exporter, the OTLP/HTTP exporter and
 * ours, each with glibc's defaults and with `MALLOC_MMAP_THRESHOLD_=131072` (every buffer of
 * 128 KiB or more mapped on its own and returned when freed). Not a suite of `npm run bench`:
 * `npx tsx bench/steady-allocator.ts [seconds=90] [defaults]` after `npm run build` (`defaults`:
 * glibc's defaults only).
 */
import { runService, settledRss, startSink } from './lib/footprint-service.js';

const MiB = 1024 * 1024;
const seconds = Number(process.argv[2] ?? 90);
const sink = await startSink();
const thresholds = process.argv[3] === 'defaults' ? [undefined] : [undefined, '131072'];
for (const threshold of thresholds) {
  for (const mode of ['none', 'otlp-http', 'otlp-json'] as const) {
    const env: Record<string, string> =
      threshold === undefined ? {} : { MALLOC_MMAP_THRESHOLD_: threshold };
    const run = await runService(sink, mode, 2000, seconds, env);
    const plateau = settledRss(run, 1 / 3) / MiB;
    console.log(`${threshold ?? 'glibc default'}\t${mode}\tplateau ${plateau.toFixed(1)} MiB`);
  }
}
sink.server.close();
