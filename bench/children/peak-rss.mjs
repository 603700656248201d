// Preloaded with --import into a process the compaction bench measures (the otel-s3 CLI from
// dist/): at exit it prints the process's peak RSS and CPU time as one JSON line on stderr.
const started = performance.now();
process.on('exit', () => {
  const usage = process.resourceUsage();
  process.stderr.write(
    `PEAK_RSS ${JSON.stringify({
      // resourceUsage().maxRSS is in KiB: the peak resident set, startup included.
      maxRssBytes: usage.maxRSS * 1024,
      cpuMillis: (usage.userCPUTime + usage.systemCPUTime) / 1000,
      millis: performance.now() - started,
    })}\n`,
  );
});
