/** Text checks shared by options, keys and what the CLI prints. */

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
export const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** `text` as a regular expression that matches it literally. */
export const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
