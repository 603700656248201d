import type { SignalName } from '../layout/formats.js';
import type { LayoutSample } from '../reader/in-range.js';
import type { LayoutHint } from '../reader/key-layout.js';
import { type ReadStats, sampleKeyLayout } from '../reader/read-metrics.js';
import { type CommandContext, finalNote, readerOptions } from './context.js';
import { EXIT } from './exit-codes.js';
import { plural } from './format.js';
import { SETTINGS } from './setting-sources.js';
import type { Settings } from './settings.js';

/**
 * The closing note about keys the listing could not place, and EXIT.nothingReadable when nothing
 * was there to read: keys out of the layout and none in it, or an empty prefix. A time range
 * lists only the partitions that can hold it, so when it found nothing, the first keys under
 * the prefix are looked at (one listing request) to tell a quiet range of a prefix that holds
 * objects (a success) from a prefix with none in the layout: the latter gets the note and the
 * exit code it gets without a range.
 */
export async function closingNotes(
  ctx: CommandContext,
  stats: Readonly<ReadStats>,
  signals: readonly SignalName[] = ['metrics'],
): Promise<number | undefined> {
  const { settings } = ctx;
  const ranged = settings.from !== undefined || settings.to !== undefined;
  if (stats.objects > 0) {
    if (stats.keysSkipped > 0) await finalNote(ctx, skippedKeysNote(stats, settings));
    return undefined;
  }
  if (stats.keysSkipped > 0) {
    await finalNote(ctx, `nothing readable: ${skippedKeysNote(stats, settings)}`);
    return EXIT.nothingReadable;
  }
  let others = otherSignalsText(stats);
  if (ranged) {
    const sample = await sampleKeyLayout(readerOptions(ctx), undefined, signals);
    if (sample.inLayout) return undefined;
    if (sample.keysSkipped > 0) {
      await finalNote(ctx, `nothing readable: ${sampledKeysNote(sample, settings)}`);
      return EXIT.nothingReadable;
    }
    // Other signals' objects filled the sample: this signal's may come after them.
    if (sample.truncated) return undefined;
    others = otherSignalsText(sample);
  }
  return noObjectsNote(ctx, signals, others, 'nothing to read');
}

/**
 * For `compact`, which found no hour in the layout to look at: the note and
 * EXIT.nothingReadable when the prefix holds no object of `signals` in the layout at all (a
 * misspelled prefix, one above the exporter's, another layout, only other signals), as the
 * reading commands say it; undefined when it holds some (the range is only quiet).
 */
export async function nothingToCompact(
  ctx: CommandContext,
  signals: readonly SignalName[],
): Promise<number | undefined> {
  const { settings } = ctx;
  const sample = await sampleKeyLayout(readerOptions(ctx), undefined, signals);
  if (sample.inLayout) return undefined;
  if (sample.keysSkipped > 0) {
    await finalNote(ctx, `nothing to compact: ${sampledKeysNote(sample, settings)}`);
    return EXIT.nothingReadable;
  }
  if (sample.truncated) return undefined;
  return noObjectsNote(ctx, signals, otherSignalsText(sample), 'nothing to compact');
}

/**
 * The note for a prefix without objects of `signals`: only `others` (another signal's objects),
 * or none at all (a misspelled --bucket, --dir or --prefix); EXIT.nothingReadable.
 */
async function noObjectsNote(
  ctx: CommandContext,
  signals: readonly SignalName[],
  others: string | undefined,
  lead: string,
): Promise<number> {
  const { settings } = ctx;
  if (others !== undefined) {
    await finalNote(
      ctx,
      `${lead}: no objects of ${signalsText(signals)} under ${settings.where}, only ${others}`,
    );
    return EXIT.nothingReadable;
  }
  const what = settings.source.kind === 's3' ? '--bucket' : '--dir';
  await finalNote(ctx, `${lead}: no objects under ${settings.where}; check ${what} and --prefix`);
  return EXIT.nothingReadable;
}

/**
 * `no key under s3://metrics/svc/ is in the exporter's layout for this prefix (6 keys looked
 * at); objects are under --prefix svc/json`: for a range that found nothing, what the first keys
 * of the prefix say.
 */
function sampledKeysNote(
  sample: LayoutSample,
  settings: Pick<Settings, 'where' | 'layout'>,
): string {
  const looked = `${sample.truncated ? 'the first ' : ''}${plural(sample.keys, 'key')} looked at`;
  const keys = `no key under ${settings.where} is in the exporter's layout for this prefix (${looked})`;
  return `${keys}; ${whereTheyAreRead(sample, settings)}`;
}

/**
 * `ignored 8 keys under s3://metrics/lake/ that are not in the exporter's layout for this
 * prefix; they are read with --object-format parquet`: the flag that would read them, when the
 * reader found one (a deeper prefix or one above, another format's default layout, another
 * filePrefix).
 */
export function skippedKeysNote(
  stats: Pick<ReadStats, 'keysSkipped' | 'otherPrefixes' | 'otherLayouts'>,
  settings: Pick<Settings, 'where' | 'layout'>,
): string {
  const n = stats.keysSkipped;
  const keys = `ignored ${plural(n, 'key')} under ${settings.where} that ${n === 1 ? 'is' : 'are'} not in the exporter's layout for this prefix`;
  return `${keys}; ${whereTheyAreRead(stats, settings)}`;
}

/** The flag that would read the keys out of the layout, when the reader found one. */
function whereTheyAreRead(
  stats: Pick<ReadStats, 'otherPrefixes' | 'otherLayouts'>,
  settings: Pick<Settings, 'layout'>,
): string {
  if (stats.otherPrefixes.length > 0) {
    return `objects are under ${stats.otherPrefixes.map((p) => `--prefix ${p}`).join(', ')}`;
  }
  if (stats.otherLayouts.length > 0) {
    const flags = stats.otherLayouts.map((hint) => hintFlags(hint, settings.layout.keyTemplate));
    return `they are read with ${flags.join(', or ')}`;
  }
  return `if the exporter was given a keyTemplate, give it with ${SETTINGS.keyTemplate.flag}`;
}

/** `--object-format parquet --file-prefix app-` */
function hintFlags(hint: LayoutHint, keyTemplate: string | undefined): string {
  const flags: string[] = [];
  if (hint.format !== undefined) flags.push(`${SETTINGS.format.flag} ${hint.format}`);
  if (hint.filePrefix !== undefined) {
    flags.push(`${SETTINGS.filePrefix.flag} ${hint.filePrefix === '' ? "''" : hint.filePrefix}`);
  }
  const instead = hint.format !== undefined && keyTemplate !== undefined;
  return `${flags.join(' ')}${instead ? ` instead of ${SETTINGS.keyTemplate.flag}` : ''}`;
}

/** What people call each signal's items. */
export const SIGNAL_ITEMS: Readonly<Record<SignalName, string>> = {
  metrics: 'metrics',
  traces: 'spans',
  logs: 'log records',
};

const signalsText = (signals: readonly SignalName[]) =>
  signals.map((s) => SIGNAL_ITEMS[s]).join(', ');

/** `12 objects of metrics, 3 of log records`, or undefined when there are none. */
function otherSignalsText(stats: Pick<ReadStats, 'otherSignals'>): string | undefined {
  const entries = Object.entries(stats.otherSignals) as [SignalName, number][];
  if (entries.length === 0) return undefined;
  return entries
    .map(([signal, n], i) => `${i === 0 ? plural(n, 'object') : n} of ${SIGNAL_ITEMS[signal]}`)
    .join(', ');
}
