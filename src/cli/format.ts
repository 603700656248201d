import type { LineWriter } from './output.js';
import { textCells } from './terminal-text.js';

export const formatInteger = (n: number) => n.toLocaleString('en-US');

/** The one `1 object` / `2 objects` wording, shared with the exporter's messages. */
export { plural } from '../base/log.js';

/** One CSV field (RFC 4180): quoted when it holds a comma, quote or line break. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * The first characters that make a spreadsheet opening a CSV take a field for a formula (OWASP's
 * CSV injection list: `=`, `+`, `-`, `@`, tab, carriage return; and a line feed).
 */
const FORMULA_START = /^[=+\-@\t\r\n]/;
/** A decimal number (`-5`, `+1.5e3`, `-.25`): a spreadsheet reads it as that number. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The fields of CSV lines. Unless `verbatim`, a text field a spreadsheet would run as a formula
 * is written with a leading `'` (which spreadsheets show as text) and counted, for the note.
 * Numbers, and text that is a decimal number, are written as they are.
 */
export class CsvFields {
  readonly #verbatim: boolean;
  /** Text fields written with a leading `'`. */
  escaped = 0;

  constructor(verbatim: boolean) {
    this.#verbatim = verbatim;
  }

  /** A field of text that came from the bucket (a name, a body, an attribute value). */
  text(value: string): string {
    if (this.#verbatim || !FORMULA_START.test(value) || DECIMAL.test(value)) return csvField(value);
    this.escaped++;
    return csvField(`'${value}`);
  }

  /** A field of the row's own making: a number, a boolean, or objects as JSON text. */
  plain(value: string): string {
    return csvField(value);
  }

  /** The note after the output, when fields were escaped; undefined when none was. */
  note(): string | undefined {
    if (this.escaped === 0) return undefined;
    return `${formatInteger(this.escaped)} CSV field${this.escaped === 1 ? '' : 's'} began with =, +, -, @, a tab or a line break and ${this.escaped === 1 ? 'was' : 'were'} written with a leading ' (so a spreadsheet shows them as text, not as formulas); --csv-verbatim writes them as they are`;
  }
}

/** Pads cells into columns three spaces apart; the last column is not padded. */
export function alignRow(cells: string[], widths: number[], rightAligned: ReadonlySet<number>) {
  return cells
    .map((cell, i) => {
      // Padded to the cells a terminal shows, not to the length: wide characters take two.
      const pad = ' '.repeat(Math.max((widths[i] ?? 0) - textCells(cell), 0));
      return rightAligned.has(i) ? pad + cell : cell + pad;
    })
    .join('   ')
    .trimEnd();
}

export function columnWidths(rows: string[][], start: number[] = []): number[] {
  const widths = [...start];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, textCells(cell));
    });
  }
  return widths;
}

/**
 * A text table written as rows come: rows are held in blocks of `blockSize` and each block is
 * aligned on the widths seen so far, so memory stays bounded however many rows there are.
 */
export class TableWriter {
  readonly #out: LineWriter;
  readonly #header: string[];
  readonly #rightAligned: ReadonlySet<number>;
  readonly #blockSize: number;
  #block: string[][] = [];
  #widths: number[] = [];
  #headerWritten = false;

  constructor(
    out: LineWriter,
    header: string[],
    rightAligned: ReadonlySet<number>,
    blockSize = 1000,
  ) {
    this.#out = out;
    this.#header = header;
    this.#rightAligned = rightAligned;
    this.#blockSize = blockSize;
  }

  async row(cells: string[]): Promise<void> {
    this.#block.push(cells);
    if (this.#block.length >= this.#blockSize) await this.#writeBlock();
  }

  /** Writes the rows still held; the header alone when there were no rows at all. */
  async end(): Promise<void> {
    await this.#writeBlock();
    if (!this.#headerWritten) await this.#out.line(alignRow(this.#header, [], this.#rightAligned));
  }

  async #writeBlock(): Promise<void> {
    if (this.#block.length === 0) return;
    const rows = this.#headerWritten ? this.#block : [this.#header, ...this.#block];
    this.#widths = columnWidths(rows, this.#widths);
    this.#headerWritten = true;
    this.#block = [];
    for (const row of rows) await this.#out.line(alignRow(row, this.#widths, this.#rightAligned));
  }
}
