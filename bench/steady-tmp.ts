import { runService, settledRss, startSink } from './lib/footprint-service.js';

const sink = await startSink();
const MiB = 1024 * 1024;
const seconds = Number(process.argv[2] ?? 90);
for (const malloc of [false, true]) {
  for (const mode of ['none', 'otlp-http', 'otlp-json'] as const) {
    const r = await runService(
      sink,
      mode,
      2000,
      seconds,
      malloc ? { MALLOC_MMAP_THRESHOLD_: '131072' } : {},
    );
    console.log(
      malloc ? 'mmap-threshold' : 'default',
      mode,
      (settledRss(r, 1 / 3) / MiB).toFixed(1),
      'MiB',
    );
  }
}
sink.server.close();
