/** Text checks shared by options, keys and what the CLI prints. */

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
export const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** A lone UTF-16 surrogate: it has no UTF-8 form, so no object key (or S3 request) can carry it. */
export const LONE_SURROGATE =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What an option that becomes part of a key is told when it holds a lone surrogate. */
export const WELL_FORMED = 'well-formed Unicode (a lone UTF-16 surrogate has no UTF-8 form)';

/** `text` as a regular expression that matches it literally. */
export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
