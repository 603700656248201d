import { closest, distance } from 'fastest-levenshtein';
import { InvalidOptionError } from '../base/invalid-option.js';

/** A misspelled option must not be ignored silently: the service would run on defaults. */
export function rejectUnknown(
  options: Record<string, unknown>,
  known: readonly string[],
  path: string,
): void {
  for (const name of Object.keys(options)) {
    if (known.includes(name) || options[name] === undefined) continue;
    const suggestion = closestName(name, known);
    throw InvalidOptionError.unknown(
      path + name,
      suggestion === undefined ? undefined : path + suggestion,
    );
  }
}

/**
 * The known name closest to a misspelled one (case aside), if it is close enough to be what was
 * meant; shared by option names and environment variable names.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const lower = known.map((k) => k.toLowerCase());
  const best = closest(name.toLowerCase(), lower);
  const index = lower.indexOf(best);
  // Up to 40 % of the longer name: catches a dropped suffix (initialDelay) as well as typos.
  const tolerance = Math.max(2, Math.floor(0.4 * Math.max(name.length, best.length)));
  return distance(name.toLowerCase(), best) <= tolerance ? known[index] : undefined;
}
