/**
 * Where a stall came from: reads a V8 .cpuprofile (node --cpu-prof) and prints its longest
 * stretches of uninterrupted main-thread work, each with the functions that took its time
 * (self time, and the deepest frames of our own code and of dependencies on the stack).
 *
 *   npx tsx bench/profile-stalls.ts FILE.cpuprofile [stretches=5] [minMillis=3]
 */
import { readFileSync } from 'node:fs';
import { busyStretches, type Profile } from './lib/busy-stretches.js';

const [file, count = '5', min = '3'] = process.argv.slice(2);
if (file === undefined) {
  console.error('usage: npx tsx bench/profile-stalls.ts FILE.cpuprofile [stretches] [minMillis]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
for (const s of busyStretches(profile, Number(min)).slice(0, Number(count))) {
  console.log(`\n${s.millis.toFixed(1)} ms of uninterrupted main-thread work`);
  console.log('  self:');
  for (const [name, ms] of s.self.slice(0, 6))
    console.log(`    ${ms.toFixed(1).padStart(7)} ms  ${name}`);
  console.log('  on the stack (src/ and dependencies):');
  for (const [name, ms] of s.inclusive.slice(0, 10))
    console.log(`    ${ms.toFixed(1).padStart(7)} ms  ${name}`);
}
