// @ts-check
// The schema elements this package's Parquet tables are built of (the metrics' table and the flat
// tables of spans and log records): STRING columns, and the outer groups of MAP and LIST columns
// in the spec's three levels.

/** Written into every file's key-value metadata: the table's schema version. */
export const SCHEMA_VERSION_KEY = 'otel_s3.schema_version';

/** @typedef {import('hyparquet').SchemaElement} SchemaElement */

/** A STRING (UTF-8 BYTE_ARRAY) column. @param {string} name @param {'REQUIRED' | 'OPTIONAL'} [repetition] @returns {SchemaElement} */
export const stringElement = (name, repetition = 'REQUIRED') => ({
  name,
  type: 'BYTE_ARRAY',
  repetition_type: repetition,
  converted_type: 'UTF8',
  logical_type: { type: 'STRING' },
});

/** The outer group of a MAP or LIST: required, one repeated child, annotated both ways. @param {string} name @param {'MAP' | 'LIST'} annotation @returns {SchemaElement} */
const annotatedGroup = (name, annotation) => ({
  name,
  repetition_type: 'REQUIRED',
  num_children: 1,
  converted_type: annotation,
  logical_type: { type: annotation },
});

/** MAP<STRING, STRING> in the spec's three levels: group MAP / repeated key_value / key, value. @param {string} name @returns {SchemaElement[]} */
export const mapElements = (name) => [
  annotatedGroup(name, 'MAP'),
  { name: 'key_value', repetition_type: 'REPEATED', num_children: 2 },
  stringElement('key'),
  stringElement('value', 'OPTIONAL'),
];

/** The two outer levels of a LIST (group LIST / repeated list); its element follows them. @param {string} name @returns {SchemaElement[]} */
export const listGroup = (name) => [
  annotatedGroup(name, 'LIST'),
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
];
