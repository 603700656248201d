import type { LayoutHint } from '../reader/key-layout.js';
import type { ReadStats } from '../reader/metric-types.js';
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
): Promise<number | undefined> {
  const { settings } = ctx;
  const ranged = settings.from !== undefined || settings.to !== undefined;
  if (stats.objects > 0 || (stats.keysSkipped === 0 && ranged)) {
    if (stats.keysSkipped > 0) await finalNote(ctx, skippedKeysNote(stats, settings));
    return undefined;
  }
  if (stats.keysSkipped > 0) {
    await finalNote(ctx, `nothing readable: ${skippedKeysNote(stats, settings)}`);
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
