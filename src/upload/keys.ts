import { DEFAULT_KEY_TEMPLATE, KeyTemplate } from './key-template.js';

export interface KeyParts {
  /** Normalized prefix (no leading or trailing slash), may be empty. */
  prefix: string;
  filePrefix: string;
  /** Partition time, rendered in UTC. */
  time: Date;
  /** Format extension followed by compression extension, e.g. `.json.zst`. */
  extension: string;
  /** Unique, time-ordered id; a fresh UUIDv7 unless given. */
  id?: string;
}

/**
 * A key in the default layout, compatible with the OTel Collector's awss3receiver:
 * `{prefix}/year=%Y/month=%m/day=%d/hour=%H/minute=%M/{filePrefix}metrics_{uuidv7}{extension}`
 * (UTC). The exporter renders its keys through the same KeyTemplate.
 */
export function objectKey(parts: KeyParts): string {
  const template = new KeyTemplate(DEFAULT_KEY_TEMPLATE, {
    prefix: parts.prefix,
    filePrefix: parts.filePrefix,
    timeZone: 'UTC',
  });
  return template.render({
    time: parts.time,
    attributes: {},
    extension: parts.extension,
    ...(parts.id === undefined ? {} : { id: parts.id }),
  });
}

/**
 * Matches keys of the default layout; groups: prefix, year..minute, filePrefix, id, extension.
 * @deprecated A second copy of the layout: use `metricKeyParser()`, which reads keys of any
 * keyTemplate through KeyTemplate.parse() and knows every extension of the formats table.
 */
export const OBJECT_KEY_PATTERN =
  /^(?:(.+)\/)?year=(\d{4})\/month=(\d{2})\/day=(\d{2})\/hour=(\d{2})\/minute=(\d{2})\/([^/]*)metrics_([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})((?:\.json|\.binpb)(?:\.zst|\.gz)?)$/;
