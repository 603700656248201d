import { uuidv7 } from 'uuidv7';
import { InvalidOptionError } from '../invalid-option.js';

/** The default layout, compatible with the OTel Collector's awss3exporter / awss3receiver. */
export const DEFAULT_KEY_TEMPLATE =
  'year=%Y/month=%m/day=%d/hour=%H/minute=%M/{filePrefix}metrics_{uuid}';

const TIME_TOKENS = ['%Y', '%m', '%d', '%H', '%M', '%S', '%j', '%%'] as const;
const MAX_ATTRIBUTE_VALUE_LENGTH = 100;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

type Part =
  | { kind: 'text'; text: string }
  | { kind: 'time'; token: (typeof TIME_TOKENS)[number] }
  | { kind: 'uuid' }
  | { kind: 'filePrefix' }
  | { kind: 'attribute'; name: string };

export interface KeyTemplateOptions {
  /** Normalized prefix (no leading or trailing slash), may be empty; put before the template. */
  prefix: string;
  filePrefix: string;
  timeZone: 'UTC' | 'local';
}

export interface KeyContext {
  time: Date;
  /** Sanitized values of the template's resource-attribute tokens (see attributeValues()). */
  attributes: Readonly<Record<string, string>>;
  /** Format + compression suffix, e.g. `.json.zst`. */
  extension: string;
  /** Unique, time-ordered id; a fresh UUIDv7 unless given. */
  id?: string;
}

/**
 * A value from outside (a resource attribute) made safe as a key segment: only
 * `[A-Za-z0-9._-]` survive (everything else, `/`, `\`, control characters and non-ASCII included,
 * becomes `_`), a value of dots only cannot be `.` or `..`, empty becomes `unknown`, long is cut.
 */
export function sanitizeKeySegment(value: unknown): string {
  const text = value === undefined || value === null ? '' : String(value);
  let out = text.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, MAX_ATTRIBUTE_VALUE_LENGTH);
  if (/^\.+$/.test(out)) out = out.replace(/\./g, '_');
  return out === '' ? 'unknown' : out;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * Object keys from a template: strftime tokens (%Y %m %d %H %M %S %j %%), `{uuid}`,
 * `{filePrefix}`, and resource-attribute tokens such as `{service.name}`, `{host.name}`.
 * Validated once at construction; rendering cannot escape the prefix.
 */
export class KeyTemplate {
  readonly #parts: Part[];
  readonly #options: KeyTemplateOptions;
  /** Resource attributes the template uses; exports that differ in them never share a batch. */
  readonly attributeNames: readonly string[];

  constructor(template: string = DEFAULT_KEY_TEMPLATE, options: KeyTemplateOptions) {
    this.#options = options;
    this.#parts = parse(template);
    this.attributeNames = [
      ...new Set(this.#parts.flatMap((p) => (p.kind === 'attribute' ? [p.name] : []))),
    ];
  }

  /** The sanitized values of the template's attribute tokens for a resource. */
  attributeValues(resource: Readonly<Record<string, unknown>>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of this.attributeNames) out[name] = sanitizeKeySegment(resource[name]);
    return out;
  }

  render(context: KeyContext): string {
    const t = context.time;
    const utc = this.#options.timeZone === 'UTC';
    const fields = {
      '%Y': String(utc ? t.getUTCFullYear() : t.getFullYear()),
      '%m': pad((utc ? t.getUTCMonth() : t.getMonth()) + 1),
      '%d': pad(utc ? t.getUTCDate() : t.getDate()),
      '%H': pad(utc ? t.getUTCHours() : t.getHours()),
      '%M': pad(utc ? t.getUTCMinutes() : t.getMinutes()),
      '%S': pad(utc ? t.getUTCSeconds() : t.getSeconds()),
      '%j': pad(dayOfYear(t, utc), 3),
      '%%': '%',
    };
    let key = '';
    for (const part of this.#parts) {
      switch (part.kind) {
        case 'text':
          key += part.text;
          break;
        case 'time':
          key += fields[part.token];
          break;
        case 'uuid':
          key += context.id ?? uuidv7();
          break;
        case 'filePrefix':
          key += this.#options.filePrefix;
          break;
        case 'attribute':
          key += context.attributes[part.name] ?? 'unknown';
          break;
      }
    }
    key += context.extension;
    return this.#options.prefix === '' ? key : `${this.#options.prefix}/${key}`;
  }
}

function dayOfYear(t: Date, utc: boolean): number {
  const start = utc
    ? Date.UTC(t.getUTCFullYear(), 0, 1)
    : new Date(t.getFullYear(), 0, 1).getTime();
  const today = utc
    ? Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate())
    : new Date(t.getFullYear(), t.getMonth(), t.getDate()).getTime();
  return Math.round((today - start) / 86_400_000) + 1;
}

function parse(template: unknown): Part[] {
  const fail = (why: string): never => {
    throw new InvalidOptionError('keyTemplate', template, why);
  };
  if (typeof template !== 'string' || template === '') {
    return fail('a non-empty string such as "{service.name}/%Y/%m/%d/%H/metrics_{uuid}"');
  }
  const parts: Part[] = [];
  let text = '';
  for (let i = 0; i < template.length; ) {
    const rest = template.slice(i);
    const time = TIME_TOKENS.find((token) => rest.startsWith(token));
    if (rest.startsWith('%') && time === undefined) {
      return fail(`known time tokens only (${TIME_TOKENS.join(' ')}), not ${rest.slice(0, 2)}`);
    }
    const brace = /^\{([A-Za-z0-9_.-]+)\}/.exec(rest);
    if (time === undefined && brace === null) {
      if (rest.startsWith('{') || rest.startsWith('}')) {
        return fail(
          'tokens such as {uuid}, {filePrefix} or {service.name} (letters, digits, "_", ".", "-")',
        );
      }
      text += rest[0];
      i++;
      continue;
    }
    if (text !== '') parts.push({ kind: 'text', text });
    text = '';
    if (time !== undefined) {
      parts.push({ kind: 'time', token: time });
      i += time.length;
    } else if (brace !== null) {
      const name = brace[1] as string;
      parts.push(
        name === 'uuid'
          ? { kind: 'uuid' }
          : name === 'filePrefix'
            ? { kind: 'filePrefix' }
            : { kind: 'attribute', name },
      );
      i += brace[0].length;
    }
  }
  if (text !== '') parts.push({ kind: 'text', text });

  // Check the shape with every token replaced by a plain word: the literal text must not be able
  // to make an empty, "." or ".." segment, start or end with "/", or carry control characters.
  const shape = parts.map((p) => (p.kind === 'text' ? p.text : 'x')).join('');
  if (CONTROL_CHARS.test(shape) || shape.includes('\\'))
    return fail('no control characters or backslashes');
  const segments = shape.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    return fail(
      'segments separated by single "/", none empty, "." or ".." (the prefix is added before it)',
    );
  }
  const lastSlash = parts
    .map((p) => (p.kind === 'text' ? p.text : 'x'))
    .join('')
    .lastIndexOf('/');
  let at = 0;
  let uuidInName = false;
  for (const p of parts) {
    const length = p.kind === 'text' ? p.text.length : 1;
    if (p.kind === 'uuid' && at > lastSlash) uuidInName = true;
    at += length;
  }
  if (!uuidInName)
    return fail('{uuid} in the object name (the last segment), so every object is unique');
  return parts;
}
