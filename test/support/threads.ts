import { readdirSync, readFileSync } from 'node:fs';

/** The names of this process's threads (Linux: /proc/self/task), sorted: which thread came or stayed. */
export function threadNames(): string[] {
  return readdirSync('/proc/self/task')
    .map((id) => readFileSync(`/proc/self/task/${id}/comm`, 'utf8').trim())
    .sort();
}
