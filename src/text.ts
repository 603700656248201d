/** Text checks shared by options, keys and what the CLI prints. */

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
export const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
