/**
 * Text that reaches a terminal must not drive it: C0 and C1 controls, DEL
 * and the bidirectional overrides, from a saved file edited by hand or from
 * what a target said (a grpc-message, a stats endpoint's replica names), are
 * shown as U+FFFD. No string of a result spans lines, so nothing
 * legitimate is lost.
 */
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

export function printable(text: string): string {
  return text.replace(CONTROL_RE, '\ufffd')
}

/** Every string of a JSON-shaped value, object keys included, made printable (a new value; the input is left as it is). */
export function printableDeep(value: unknown): unknown {
  if (typeof value === 'string') return printable(value)
  if (Array.isArray(value)) return value.map(printableDeep)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [printable(k), printableDeep(v)]))
}

/** What `printable` replaces that may stand raw in a JSON string: C0 controls cannot (JSON.parse refuses them), and outside a string are its whitespace. */
const RAW_IN_JSON_RE = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/** JSON text (one JSON.parse took) printed as it is, but for those characters written as escapes (\u009b): the same JSON value, the same bytes when it has none. */
export function printableJson(text: string): string {
  return text.replace(RAW_IN_JSON_RE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
