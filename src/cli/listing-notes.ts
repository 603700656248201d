import type { SignalName } from '../layout/formats.js';
import type { LayoutHint } from '../reader/key-layout.js';
import type { ReadStats } from '../reader/read-metrics.js';
import { type CommandContext, finalNote } from './context.js';
import { EXIT } from './exit-codes.js';
import { plural } from './format.js';
import { SETTINGS } from './setting-sources.js';
import type { Settings } from './settings.js';

/**
 * The closing note about keys the listing could not place, and EXIT.nothingReadable when nothing
 * was there to read: keys out of the layout and none in it, or an empty prefix (with no time
 * range, so not a quiet hour). A range with no objects and nothing skipped is a success.
 */
export async function closingNotes(
  ctx: CommandContext,
  stats: Readonly<ReadStats>,
  signals: readonly SignalName[] = ['metrics'],
): Promise<number | undefined> {
  const { settings } = ctx;
  const ranged = settings.from !== undefined || settings.to !== undefined;
  const others = otherSignalsText(stats);
  if (stats.objects > 0 || (stats.keysSkipped === 0 && ranged)) {
    if (stats.keysSkipped > 0) await finalNote(ctx, skippedKeysNote(stats, settings));
    return undefined;
  }
  if (stats.keysSkipped > 0) {
    await finalNote(ctx, `nothing readable: ${skippedKeysNote(stats, settings)}`);
  } else if (others !== undefined) {
    await finalNote(
      ctx,
      `nothing to read: no objects of ${signalsText(signals)} under ${settings.where}, only ${others}`,
    );
  } else {
    const what = settings.source.kind === 's3' ? '--bucket' : '--dir';
    await finalNote(
      ctx,
      `nothing to read: no objects under ${settings.where}; check ${what} and --prefix`,
    );
  }
  return EXIT.nothingReadable;
}

/**
 * `ignored 8 keys under s3://metrics/lake/ that are not in the exporter's layout for this
 * prefix; they are read with --object-format parquet`: the flag that would read them, when the
 * reader found one (a deeper prefix, another format's default layout, another filePrefix).
 */
export function skippedKeysNote(
  stats: Pick<ReadStats, 'keysSkipped' | 'otherPrefixes' | 'otherLayouts'>,
  settings: Pick<Settings, 'where' | 'layout'>,
): string {
  const n = stats.keysSkipped;
  const keys = `ignored ${plural(n, 'key')} under ${settings.where} that ${n === 1 ? 'is' : 'are'} not in the exporter's layout for this prefix`;
  if (stats.otherPrefixes.length > 0) {
    return `${keys}; objects are under ${stats.otherPrefixes.map((p) => `--prefix ${p}`).join(', ')}`;
  }
  if (stats.otherLayouts.length > 0) {
    const flags = stats.otherLayouts.map((hint) => hintFlags(hint, settings.layout.keyTemplate));
    return `${keys}; they are read with ${flags.join(', or ')}`;
  }
  return `${keys}; if the exporter was given a keyTemplate, give it with ${SETTINGS.keyTemplate.flag}`;
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
