// Preloaded with --import into a process the compaction bench measures (the otel-s3 CLI from
// dist/): at exit it prints the process's peak RSS and CPU time as one JSON line on stderr.
import { readFileSync } from 'node:fs';

const started = performance.now();

/**
 * The peak resident set of this process in bytes: the kernel's VmHWM, the high-water mark of the
 * address space that exec made, so this program's own. Not getrusage's maxRSS (resourceUsage()):
 * Linux carries that across fork and exec, so a child spawned by a parent holding 500 MB reports
 * at least 500 MB, even `node -e 0`. maxRSS only where there is no /proc (not Linux).
 * @returns {number}
 */
export function peakRssBytes() {
  try {
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (kb !== undefined) return Number(kb) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}

process.on('exit', () => {
  const usage = process.resourceUsage();
  process.stderr.write(
    `PEAK_RSS ${JSON.stringify({
      // Startup included.
      maxRssBytes: peakRssBytes(),
      cpuMillis: (usage.userCPUTime + usage.systemCPUTime) / 1000,
      millis: performance.now() - started,
    })}\n`,
  );
});
