import { closest, distance } from 'fastest-levenshtein';
import { InvalidOptionError } from '../invalid-option.js';

/** A misspelled option must not be ignored silently: the service would run on defaults. */
export function rejectUnknown(
  options: Record<string, unknown>,
  known: readonly string[],
  path: string,
): void {
  for (const name of Object.keys(options)) {
    if (known.includes(name) || options[name] === undefined) continue;
    throw InvalidOptionError.unknown(path + name, suggest(name, known, path));
  }
}

/** The known name closest to a misspelled one, if it is close enough to be what was meant. */
function suggest(name: string, known: readonly string[], path: string): string | undefined {
  const lower = known.map((k) => k.toLowerCase());
  const best = closest(name.toLowerCase(), lower);
  const index = lower.indexOf(best);
  // Up to 40 % of the longer name: catches a dropped suffix (initialDelay) as well as typos.
  const tolerance = Math.max(2, Math.floor(0.4 * Math.max(name.length, best.length)));
  return distance(name.toLowerCase(), best) <= tolerance ? path + known[index] : undefined;
}
