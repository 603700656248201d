const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const TiB = 1024 * GiB;

/** Bytes for people: `512 B`, `1.5 KiB`, `128.0 MiB`, `2.00 GiB`, `1.50 TiB`. */
export function formatBytes(n: number): string {
  if (n < KiB) return `${n} B`;
  if (n < MiB) return `${(n / KiB).toFixed(1)} KiB`;
  if (n < GiB) return `${(n / MiB).toFixed(1)} MiB`;
  if (n < TiB) return `${(n / GiB).toFixed(2)} GiB`;
  return `${(n / TiB).toFixed(2)} TiB`;
}

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: KiB,
  kib: KiB,
  m: MiB,
  mib: MiB,
  g: GiB,
  gib: GiB,
  t: TiB,
  tib: TiB,
};

export const BYTE_SIZE_HELP = 'a size in bytes like 134217728, 512KiB, 128MiB or 2GiB';

/**
 * `128MiB`, `2GiB`, `512k`, `1048576` → bytes; undefined when not a positive whole number of
 * bytes. Units are binary (KiB = 1024 bytes); `k`, `m`, `g`, `t` are short for them, as in `ulimit`.
 * Decimal `MB` is refused rather than guessed at.
 */
export function parseByteSize(text: string): number | undefined {
  const bytes = byteSizeOf(text);
  return bytes !== undefined && Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}

/**
 * The number `text` spells in parseByteSize's units, whatever it is (`0`, `1.5`, `9999999999GiB`),
 * for a caller whose range check says what is allowed; undefined when it spells no size.
 */
export function byteSizeOf(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  if (match === null) return undefined;
  const unit = UNITS[(match[2] ?? '').toLowerCase()];
  return unit === undefined ? undefined : Number(match[1]) * unit;
}
