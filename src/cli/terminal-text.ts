import stringWidth from 'string-width';

/**
 * Characters a terminal obeys instead of showing: C0 controls (ESC starts the sequences that
 * move the cursor, recolour or retitle the window), DEL, C1 controls (U+009B is a one-character
 * CSI), the bidirectional overrides and isolates of "Trojan Source" (they reorder what is shown),
 * and the Unicode line and paragraph separators. Keys, metric names and attribute values are
 * written by whoever writes to the bucket: none of this reaches a terminal raw.
 */
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The subset JSON.stringify leaves raw: it already escapes U+0000-U+001F. */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const hex = (c: string, digits: number) => c.charCodeAt(0).toString(16).padStart(digits, '0');

/**
 * Text for a terminal line: each unsafe character as a visible escape (`\n`, `\x1b`, `\u202e`).
 * Backslashes are left as they are, so this is for people to read, not to parse back.
 */
export function printable(text: string): string {
  return text.replace(
    UNSAFE,
    (c) => NAMED[c] ?? (c < '\u0100' ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`),
  );
}

/**
 * One line of JSON: JSON.stringify with the characters it leaves raw (DEL, C1 controls, bidi
 * controls, U+2028/U+2029) escaped as `\uXXXX` too. The same JSON value, safe on a terminal and
 * in line-oriented tools.
 */
export function jsonLine(value: object): string {
  return JSON.stringify(value).replace(RAW_IN_JSON, (c) => `\\u${hex(c, 4)}`);
}

/**
 * The cells `text` takes on a terminal, which its length (UTF-16 units) is not: a CJK character
 * takes two, a combining accent none. What columns are padded by, so they line up. string-width
 * (the version cli-progress already brings) knows the wide and zero-width characters.
 */
export function textCells(text: string): number {
  // Printable ASCII (the usual case) and the waterfall's own lines and bars are one cell a
  // character: counted here, as string-width counts them, without its regular expressions.
  for (let i = 0; i < text.length; i++) {
    if (!oneCell(text.charCodeAt(i))) return stringWidth(text);
  }
  return text.length;
}

/**
 * Characters string-width counts as one cell whatever is beside them: printable ASCII, the box
 * drawing and block characters (`│ ├─ └─`, `█`), `…` and `◆`. None is a control, a combining
 * mark, wide, part of an emoji or of an ANSI sequence (which would start with ESC or U+009B).
 */
const oneCell = (code: number): boolean =>
  (code >= 0x20 && code <= 0x7e) ||
  (code >= 0x2500 && code <= 0x259f) ||
  code === 0x2026 ||
  code === 0x25c6;

/**
 * The columns of the terminal `stream` writes to: its `columns` when it is a TTY that reports a
 * width (Node's tty.WriteStream does), else undefined (a pipe, a file: no width to fit).
 */
export function terminalColumns(stream: { isTTY?: boolean; columns?: number }): number | undefined {
  const { columns } = stream;
  return stream.isTTY === true && Number.isInteger(columns) && (columns as number) > 0
    ? columns
    : undefined;
}

/**
 * `text` in at most `cells` terminal cells: as it is when it fits, else its longest beginning
 * (whole characters, never half a surrogate pair) that leaves a cell for the `…` after it.
 */
export function cutToCells(text: string, cells: number): string {
  if (textCells(text) <= cells) return text;
  let out = '';
  let used = 0;
  for (const c of text) {
    const w = textCells(c);
    if (used + w > cells - 1) break;
    out += c;
    used += w;
  }
  return `${out}…`;
}
