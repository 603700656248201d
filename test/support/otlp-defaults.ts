import type { OtlpObject, OtlpValue } from '../../src/encoding/otlp-proto-decode.js';

/** The official serializers spell out some default values (0, '') that OTLP lets us omit. */
const OMITTABLE_DEFAULTS: Record<string, OtlpValue> = {
  droppedAttributesCount: 0,
  description: '',
  unit: '',
};

/** `value` without the defaults the official serializers write and ours leave out. */
export function withoutDefaults(value: OtlpValue): OtlpValue {
  if (Array.isArray(value)) return value.map(withoutDefaults);
  if (typeof value !== 'object' || value === null) return value;
  const out: OtlpObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (k in OMITTABLE_DEFAULTS && OMITTABLE_DEFAULTS[k] === v) continue;
    out[k] = withoutDefaults(v);
  }
  return out;
}
