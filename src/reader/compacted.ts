import { plural } from '../base/log.js';
/**
 * What a compaction output says it replaces, for the reader that skips those objects and for the
 * compactor that writes it (src/compact/). Its name is the key layout's (src/layout/outputs.ts).
 *
 * An output's key-value metadata lists every object whose items it holds: while an output and
 * the inputs it replaces both exist, this package's reader reads the output and skips the inputs.
 */

/** Key-value metadata key of the list of replaced objects (JSON, see encodeReplaces). */
export const REPLACES_KEY = 'otel_s3.compaction.replaces';

/** The objects an output replaces. */
export interface Replaces {
  /** The objects read into this output, with the data points (rows) each held. */
  inputs: { key: string; rows: number }[];
  /**
   * Objects replaced earlier by an output that this one replaces in turn (raw objects that were
   * kept): the reader must go on skipping them once that output is gone.
   */
  superseded: string[];
}

/** Every key an output replaces. */
export function replacedKeys(replaces: Replaces): string[] {
  return [...replaces.inputs.map((input) => input.key), ...replaces.superseded];
}

/** The rows the inputs an output lists held, together. */
export const inputRows = (replaces: Replaces): number =>
  replaces.inputs.reduce((sum, input) => sum + input.rows, 0);

/**
 * An output whose file holds other than the rows its inputs held (its footer disagrees with
 * itself): not every item of those inputs is in it, so it replaces none of them.
 */
export class InconsistentOutputError extends Error {
  constructor(fileRows: number, replaces: Replaces) {
    super(
      `its footer says it holds ${plural(fileRows, 'row')}, and the ${plural(replaces.inputs.length, 'object')} it replaces held ${inputRows(replaces)}`,
    );
    this.name = 'InconsistentOutputError';
  }
}

/**
 * An output whose list of replaced objects names what no output replaces: itself, or an object
 * of another signal or hour (the compactor merges one hour of one signal into outputs of that
 * hour). A hostile or broken writer's: it replaces none of them.
 */
export class OutOfPlaceOutputError extends Error {
  constructor(named: string) {
    super(
      `its list of the objects it replaces names ${named}; an output replaces only other objects of its signal and hour`,
    );
    this.name = 'OutOfPlaceOutputError';
  }
}

/**
 * Replaces as the metadata value: `{"base":"…/hour=05/","inputs":[["minute=07/metrics_….json.zst",
 * 200],…],"superseded":[…]}`, keys relative to their longest common directory (thousands of OTLP
 * objects an hour: the shared part is written once).
 */
export function encodeReplaces(replaces: Replaces): string {
  const all = replacedKeys(replaces);
  const base = commonDirectory(all);
  const rel = (key: string) => key.slice(base.length);
  return JSON.stringify({
    base,
    inputs: replaces.inputs.map((input) => [rel(input.key), input.rows]),
    superseded: replaces.superseded.map(rel),
  });
}

/** The metadata value back into Replaces; throws on anything this package does not write. */
export function decodeReplaces(text: string): Replaces {
  const value = JSON.parse(text) as unknown;
  const bad = () => new Error(`${REPLACES_KEY} is not a list of replaced objects`);
  if (typeof value !== 'object' || value === null) throw bad();
  const { base, inputs, superseded } = value as Record<string, unknown>;
  if (typeof base !== 'string' || !Array.isArray(inputs) || !Array.isArray(superseded)) throw bad();
  return {
    inputs: inputs.map((entry: unknown) => {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string') throw bad();
      const rows = entry[1];
      if (typeof rows !== 'number' || !Number.isSafeInteger(rows) || rows < 0) throw bad();
      return { key: base + entry[0], rows };
    }),
    superseded: superseded.map((key: unknown) => {
      if (typeof key !== 'string') throw bad();
      return base + key;
    }),
  };
}

/** The longest common prefix of the keys that ends with "/" (or ''). */
function commonDirectory(keys: readonly string[]): string {
  if (keys.length === 0) return '';
  let common = keys[0] as string;
  for (const key of keys) {
    let i = 0;
    while (i < common.length && i < key.length && common[i] === key[i]) i++;
    common = common.slice(0, i);
  }
  return common.slice(0, common.lastIndexOf('/') + 1);
}
