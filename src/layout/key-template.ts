import { uuidv7 } from 'uuidv7';
import { InvalidOptionError } from '../base/invalid-option.js';
import { alert } from '../base/log.js';
import { CONTROL_CHARS, escapeRegExp, LONE_SURROGATE, WELL_FORMED } from '../base/text.js';
import { KEY_EXTENSIONS, MAX_EXTENSION_LENGTH, OUTPUT_EXTENSION } from './formats.js';

/** Which time places an object: when its batch was sealed for upload, or its oldest item. */
export const PARTITION_TIMES = ['upload', 'data'] as const;
export type PartitionTime = (typeof PARTITION_TIMES)[number];
/** The time zone of a key's time tokens. */
export const TIME_ZONES = ['UTC', 'local'] as const;
export type PartitionTimeZone = (typeof TIME_ZONES)[number];

const TIME_TOKENS = ['%Y', '%m', '%d', '%H', '%M', '%S', '%j', '%%'] as const;
const MAX_ATTRIBUTE_VALUE_LENGTH = 100;
/** S3 refuses longer keys (InvalidObjectName): every batch of such a layout would be dropped. */
const MAX_KEY_BYTES = 1024;
/** How long each time token renders (%Y: years up to 9999). */
export const TIME_TOKEN_LENGTH: Readonly<Record<(typeof TIME_TOKENS)[number], number>> = {
  '%Y': 4,
  '%m': 2,
  '%d': 2,
  '%H': 2,
  '%M': 2,
  '%S': 2,
  '%j': 3,
  '%%': 1,
};

type Group =
  | { kind: 'uuid' }
  | { kind: 'attribute'; name: string }
  | { kind: 'time'; token: Exclude<(typeof TIME_TOKENS)[number], '%%'> };

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
  timeZone: PartitionTimeZone;
}

/** What a key rendered by a template says about its object (see KeyTemplate.parse). */
export interface ParsedKey {
  /** The object's UUIDv7. */
  id: string;
  /** The UUIDv7's millisecond timestamp: when the batch was sealed. */
  sealedAt: Date;
  /**
   * The partition the key was filed under, from its time tokens in the template's time zone:
   * its start and its end (exclusive), as precise as the unbroken run of tokens from %Y down
   * (minute in the default layout; the year for `%Y/%H`, whose hour is of any day). Undefined
   * for a template without %Y.
   */
  partition: { start: Date; end: Date } | undefined;
  /** Values of the resource-attribute tokens. */
  attributes: Record<string, string>;
  /**
   * What follows the rendered template: one of the endings this package writes (`.json.zst`,
   * `.binpb`, `.parquet`, `.compacted.parquet`, ...; see KEY_EXTENSIONS).
   */
  extension: string;
}

const UUIDV7 = '[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';

/** Unix milliseconds in the first 48 bits of a UUIDv7. */
export function uuidv7Millis(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
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

/** The characters a sanitized attribute value is made of (a regular expression class's body). */
const VALUE_CHARS = 'A-Za-z0-9._-';
/** A character no sanitized attribute value holds: it ends the value before it. */
const SEPARATOR = new RegExp(`[^${VALUE_CHARS}]`);
const UNSAFE = new RegExp(`[^${VALUE_CHARS}]`, 'g');

/**
 * A value from outside (a resource attribute) made safe as a key segment: only
 * `[A-Za-z0-9._-]` survive (everything else, `/`, `\`, control characters and non-ASCII included,
 * becomes `_`), a value of dots only cannot be `.` or `..`, empty becomes `unknown`, long is cut.
 */
export function sanitizeKeySegment(value: unknown): string {
  const text = value === undefined || value === null ? '' : String(value);
  let out = text.replace(UNSAFE, '_').slice(0, MAX_ATTRIBUTE_VALUE_LENGTH);
  if (/^\.+$/.test(out)) out = out.replace(/\./g, '_');
  return out === '' ? 'unknown' : out;
}

/**
 * See KeyTemplate.ambiguousTokens; `between`: the text between the two tokens when nothing else
 * (a time token, `{uuid}`, a repeated token) stands there.
 */
function ambiguousTokens(
  parts: readonly Part[],
  filePrefix: string,
): { pair: readonly [string, string]; between: string | undefined } | undefined {
  const seen = new Set<string>();
  // The attribute token whose value nothing has ended yet, and what follows it.
  let open: string | undefined;
  let between: string | undefined = '';
  for (const part of parts) {
    const text =
      part.kind === 'text'
        ? part.text
        : part.kind === 'filePrefix'
          ? filePrefix
          : part.kind === 'time' && part.token === '%%'
            ? '%'
            : '';
    if (SEPARATOR.test(text)) open = undefined;
    // A repeated token renders its first value again: its length is known, as a time token's.
    if (part.kind === 'attribute' && !seen.has(part.name)) {
      seen.add(part.name);
      if (open !== undefined) return { pair: [open, part.name], between };
      open = part.name;
      between = '';
    } else if (part.kind === 'text' || part.kind === 'filePrefix') {
      if (between !== undefined) between += text;
    } else {
      between = undefined;
    }
  }
  return undefined;
}

const warnedAmbiguous = new Set<string>();

/**
 * Warns once per process (OTEL_S3_INVALID_ENV) about a template whose attribute values do not
 * parse back (see KeyTemplate.ambiguousTokens). Its keys stay unique, so it is not refused:
 * configurations that have it keep working.
 */
export function warnAmbiguousTokens(template: KeyTemplate): void {
  const pair = template.ambiguousTokens;
  if (pair === undefined) return;
  const [a, b] = pair;
  // The first value takes as much as the second leaves it: `t` of the second goes to the first.
  const t = template.ambiguousBetween;
  const example =
    t === undefined
      ? 'with a time token or {uuid} between them a key may not read back at all'
      : `${a}=x with ${b}=y${t}z reads back as ${a}=x${t}y with ${b}=z`;
  const message =
    `keyTemplate ${JSON.stringify(template.text)}: nothing but characters a value may hold ` +
    `(A-Z a-z 0-9 . _ -, time tokens, {uuid}) separates {${a}} from {${b}}, so a reader cannot ` +
    `tell where one value ends (${example}); keys stay unique. Put "/" or "=" (or another character outside A-Z a-z 0-9 . _ -) between them`;
  if (warnedAmbiguous.has(message)) return;
  warnedAmbiguous.add(message);
  alert('warn', 'OTEL_S3_INVALID_ENV', message);
}

const warnedMissing = new Set<string>();

/**
 * A keyTemplate token no attribute of an exported resource answers (`{service}` for
 * `{service.name}`, an attribute set on some hosts only): its objects go under `unknown`, which
 * nothing else says. Once per process, template and token; names the attributes the resource has
 * and the one the token probably means (its `.name`, else the shortest that starts or ends with
 * it).
 */
function warnMissingAttribute(
  template: string,
  name: string,
  resource: Readonly<Record<string, unknown>>,
): void {
  const key = `${template}\u0000${name}`;
  if (warnedMissing.has(key)) return;
  warnedMissing.add(key);
  const names = Object.keys(resource).sort();
  // `{service}`: service.name, not service.instance.id, which sorts first; else the shortest.
  const like = names.filter((n) => n.startsWith(`${name}.`) || n.endsWith(`.${name}`));
  const meant = like.includes(`${name}.name`)
    ? `${name}.name`
    : like.reduce<string | undefined>(
        (a, n) => (a === undefined || n.length < a.length ? n : a),
        undefined,
      );
  const shown = names.length > 8 ? [...names.slice(0, 8), '...'] : names;
  alert(
    'warn',
    'OTEL_S3_INVALID_ENV',
    `keyTemplate ${JSON.stringify(template)}: the resource has no attribute ${JSON.stringify(name)} ` +
      `(it has ${shown.length === 0 ? 'none' : shown.join(', ')}), so its objects go under "unknown" ` +
      `for {${name}}${meant === undefined ? '' : `; did you mean {${meant}}?`}`,
  );
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
  /** The key pattern parse() matches, made on first use. */
  #pattern: { regex: RegExp; groups: Group[] } | undefined;
  /** Resource attributes the template uses; exports that differ in them never share a batch. */
  readonly attributeNames: readonly string[];
  /** The template as given. */
  readonly text: string;
  /**
   * The first two attribute tokens that nothing but characters of values (`[A-Za-z0-9._-]`, time
   * tokens, `{uuid}`) separate: where one value ends is not in the key, so parse() may split
   * them wrongly. Undefined when every pair is separated.
   */
  readonly ambiguousTokens: readonly [string, string] | undefined;
  /** The text between ambiguousTokens, if only text stands there (for the warning's example). */
  readonly ambiguousBetween: string | undefined;

  constructor(template: string, options: KeyTemplateOptions) {
    this.text = template;
    this.#options = options;
    this.#parts = parse(template, options.filePrefix);
    const longest = maxKeyBytes(this.#parts, options);
    if (longest > MAX_KEY_BYTES) {
      throw new InvalidOptionError(
        'keyTemplate',
        template,
        `keys of at most ${MAX_KEY_BYTES} bytes, S3's limit: with prefix "${options.prefix}" and filePrefix "${options.filePrefix}" its keys reach ${longest} bytes (a {uuid} is 36, an attribute value up to ${MAX_ATTRIBUTE_VALUE_LENGTH}, the extension up to ${MAX_EXTENSION_LENGTH})`,
      );
    }
    this.attributeNames = [
      ...new Set(this.#parts.flatMap((p) => (p.kind === 'attribute' ? [p.name] : []))),
    ];
    const ambiguous = ambiguousTokens(this.#parts, options.filePrefix);
    this.ambiguousTokens = ambiguous?.pair;
    this.ambiguousBetween = ambiguous?.between;
  }

  /**
   * The sanitized values of the template's attribute tokens for a resource. A token the resource
   * has no attribute for is `unknown`, and said once per process and token (warnMissingAttribute).
   */
  attributeValues(resource: Readonly<Record<string, unknown>>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of this.attributeNames) {
      const value = resource[name];
      if (value === undefined) warnMissingAttribute(this.text, name, resource);
      out[name] = sanitizeKeySegment(value);
    }
    return out;
  }

  /**
   * Reads a key this template could have rendered (with this prefix and filePrefix, ending in
   * one of KEY_EXTENSIONS); undefined for any other key: time fields out of their range or of no
   * date (month 13, April 31), a repeated token whose values differ. The inverse of render(), so that
   * readers and the spool can check and place keys of any configured layout.
   */
  parse(key: string): ParsedKey | undefined {
    this.#pattern ??= this.#compile();
    const m = this.#pattern.regex.exec(key);
    if (m === null) return undefined;
    const fields: Partial<Record<(typeof TIME_TOKENS)[number], number>> = {};
    const attributes: Record<string, string> = {};
    let id = '';
    this.#pattern.groups.forEach((group, i) => {
      const value = m[i + 1] as string;
      if (group.kind === 'uuid') id = value;
      else if (group.kind === 'attribute') attributes[group.name] = value;
      else fields[group.token] = Number(value);
    });
    if (!renderable(fields)) return undefined;
    const extension = m[this.#pattern.groups.length + 1] ?? '';
    return {
      id,
      sealedAt: new Date(uuidv7Millis(id)),
      partition: this.#partition(fields),
      attributes,
      extension,
    };
  }

  #compile(): { regex: RegExp; groups: Group[] } {
    const groups: Group[] = [];
    // A token that repeats must render the same text again: a backreference to its first group.
    const first = new Map<string, number>();
    const again = (name: string): string | undefined => {
      const n = first.get(name);
      if (n !== undefined) return `(?:\\${n})`;
      first.set(name, groups.length + 1);
      return undefined;
    };
    let source = this.#options.prefix === '' ? '^' : `^${escapeRegExp(this.#options.prefix)}/`;
    for (const part of this.#parts) {
      const repeat =
        part.kind === 'attribute'
          ? again(`{${part.name}}`)
          : part.kind === 'time' && part.token !== '%%'
            ? again(part.token)
            : undefined;
      if (repeat !== undefined) {
        source += repeat;
        continue;
      }
      switch (part.kind) {
        case 'text':
          source += escapeRegExp(part.text);
          break;
        case 'filePrefix':
          source += escapeRegExp(this.#options.filePrefix);
          break;
        case 'uuid':
          source += `(${UUIDV7})`;
          groups.push({ kind: 'uuid' });
          break;
        case 'attribute':
          source += `([${VALUE_CHARS}]{1,${MAX_ATTRIBUTE_VALUE_LENGTH}})`;
          groups.push({ kind: 'attribute', name: part.name });
          break;
        case 'time':
          if (part.token === '%%') {
            source += '%';
            break;
          }
          source +=
            part.token === '%Y' ? '(\\d{4})' : part.token === '%j' ? '(\\d{3})' : '(\\d{2})';
          groups.push({ kind: 'time', token: part.token });
          break;
      }
    }
    // One of the known endings, not any `.word`s: an attribute value right before it may end in
    // `.word`s of its own (`{uuid}_{host.name}` with `ip-10-0-0-1.ec2.internal`), and a match
    // that gave the ending to the value would name no format.
    return {
      regex: new RegExp(`${source}(${KEY_EXTENSIONS.map(escapeRegExp).join('|')})$`),
      groups,
    };
  }

  /**
   * The partition that time fields name, or undefined without a year. It is as precise as the
   * unbroken run of units from the year down: `%Y/%H` names an hour of any day, so its partition
   * is the year; `%Y/%m/%d/%M` the day.
   */
  #partition(
    f: Partial<Record<(typeof TIME_TOKENS)[number], number>>,
  ): { start: Date; end: Date } | undefined {
    const year = f['%Y'];
    if (year === undefined) return undefined;
    const utc = this.#options.timeZone === 'UTC';
    const make = (y: number, mo: number, d: number, h: number, mi: number, s: number) =>
      utc ? new Date(Date.UTC(y, mo, d, h, mi, s)) : new Date(y, mo, d, h, mi, s);
    // Month and day from %m and %d, or from %j (day of the year: month 0, day %j).
    const byDayOfYear = f['%j'] !== undefined;
    const hasMonth = byDayOfYear || f['%m'] !== undefined;
    const hasDay = byDayOfYear || (f['%m'] !== undefined && f['%d'] !== undefined);
    const month = byDayOfYear ? 0 : (f['%m'] ?? 1) - 1;
    const day = byDayOfYear ? (f['%j'] as number) : (f['%d'] ?? 1);
    const depth = !hasMonth
      ? 0
      : !hasDay
        ? 1
        : f['%H'] === undefined
          ? 2
          : f['%M'] === undefined
            ? 3
            : f['%S'] === undefined
              ? 4
              : 5;
    const at = (step: 0 | 1) => {
      const units = [
        year,
        depth >= 1 ? month : 0,
        depth >= 2 ? day : 1,
        depth >= 3 ? (f['%H'] as number) : 0,
        depth >= 4 ? (f['%M'] as number) : 0,
        depth >= 5 ? (f['%S'] as number) : 0,
      ] as [number, number, number, number, number, number];
      units[depth] += step;
      return make(...units);
    };
    return { start: at(0), end: at(1) };
  }

  /**
   * True when `time` renders as the layout parses it: a valid date whose year, in the template's
   * time zone, has four digits (%Y). A data time outside (a timestamp in the wrong unit, a clock
   * far off) would file its object under `year=NaN/` or `year=11476/`, where no reader finds it.
   */
  fileable(time: Date): boolean {
    const year = this.#options.timeZone === 'UTC' ? time.getUTCFullYear() : time.getFullYear();
    return year >= 1000 && year <= 9999;
  }

  /**
   * The key of an object. A key of another extension never ends as a compaction output's
   * (`….compacted.parquet`), which the reader takes for one: when the values make it (`{uuid}{a}`
   * with `.compacted`, `{uuid}.{a}` with `compacted`), the last attribute value's last character
   * becomes `_`.
   */
  render(context: KeyContext): string {
    const id = context.id ?? uuidv7();
    const key = this.#render({ ...context, id });
    if (context.extension === OUTPUT_EXTENSION || !key.endsWith(OUTPUT_EXTENSION)) return key;
    const last = this.#parts.findLast((p) => p.kind === 'attribute');
    if (last?.kind !== 'attribute') return key;
    const value = context.attributes[last.name] ?? 'unknown';
    const attributes = { ...context.attributes, [last.name]: `${value.slice(0, -1)}_` };
    const changed = this.#render({ ...context, id, attributes });
    // The template's own text makes the ending: no value can change it.
    return changed.endsWith(OUTPUT_EXTENSION) ? key : changed;
  }

  #render(context: KeyContext): string {
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

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

/**
 * True when some time renders these fields: each in its range (a year of four digits, as
 * fileable() allows), a day its month has, and %j the day that %m and %d name. A year left out of the
 * template allows February 29 and day 366.
 */
function renderable(f: Partial<Record<(typeof TIME_TOKENS)[number], number>>): boolean {
  const { '%Y': y, '%m': mo, '%d': d, '%H': h, '%M': mi, '%S': s, '%j': j } = f;
  const within = (v: number | undefined, min: number, max: number) =>
    v === undefined || (v >= min && v <= max);
  const leap = y === undefined || isLeap(y);
  const monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (!within(y, 1000, 9999) || !within(mo, 1, 12) || !within(h, 0, 23)) return false;
  if (!within(mi, 0, 59) || !within(s, 0, 59) || !within(j, 1, leap ? 366 : 365)) return false;
  if (!within(d, 1, mo === undefined ? 31 : (monthDays[mo - 1] as number))) return false;
  if (j !== undefined && y !== undefined && (mo !== undefined || d !== undefined)) {
    const date = new Date(Date.UTC(y, 0, j));
    if (mo !== undefined && date.getUTCMonth() + 1 !== mo) return false;
    if (d !== undefined && date.getUTCDate() !== d) return false;
  }
  return true;
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

/** The longest key `parts` can render under `options`, in UTF-8 bytes, extension included. */
function maxKeyBytes(parts: readonly Part[], options: KeyTemplateOptions): number {
  const bytes = (text: string) => Buffer.byteLength(text);
  let total = (options.prefix === '' ? 0 : bytes(options.prefix) + 1) + MAX_EXTENSION_LENGTH;
  for (const p of parts) {
    total +=
      p.kind === 'text'
        ? bytes(p.text)
        : p.kind === 'time'
          ? TIME_TOKEN_LENGTH[p.token]
          : p.kind === 'uuid'
            ? 36
            : p.kind === 'filePrefix'
              ? bytes(options.filePrefix)
              : MAX_ATTRIBUTE_VALUE_LENGTH;
  }
  return total;
}

function parse(template: unknown, filePrefix: string): Part[] {
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

  // Check the shape with every token replaced by a plain word (and {filePrefix} by the filePrefix,
  // which may be empty): the literal text must not be able to make an empty, "." or ".."
  // segment, start or end with "/", or carry control characters.
  const word = (p: Part) =>
    p.kind === 'text' ? p.text : p.kind === 'filePrefix' ? filePrefix : 'x';
  const shape = parts.map(word).join('');
  if (CONTROL_CHARS.test(shape) || shape.includes('\\'))
    return fail('no control characters or backslashes');
  if (LONE_SURROGATE.test(shape)) return fail(WELL_FORMED);
  const segments = shape.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    return fail(
      `segments separated by single "/", none empty, "." or ".." (the prefix is added before it; {filePrefix} is "${filePrefix}")`,
    );
  }
  const lastSlash = shape.lastIndexOf('/');
  let at = 0;
  let uuidInName = false;
  for (const p of parts) {
    const length = word(p).length;
    if (p.kind === 'uuid' && at > lastSlash) uuidInName = true;
    at += length;
  }
  if (!uuidInName)
    return fail('{uuid} in the object name (the last segment), so every object is unique');
  return parts;
}
