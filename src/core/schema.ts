/**
 * What hedgebench reads from outside its own code (a saved result, a
 * profile, a program's options) is declared once, as a valibot schema, and
 * its TypeScript type is inferred from that schema. These are the building
 * blocks, each with the wording the CLI prints: a message is a phrase about
 * one field ("must be a number"), and `firstProblem` puts the field's path
 * in front of it, so every refusal is one line naming the field.
 */
import * as v from 'valibot'

export { v }

/** The type a schema declares. */
export type Infer<S extends v.GenericSchema> = v.InferOutput<S>

/**
 * Begins a message that is a whole sentence, the field's path not put in
 * front of it; `%path%` in it stands for the path ("unknown option
 * hedge.delya").
 */
export const WHOLE = '%whole%'
export const PATH = '%path%'

/** Stands in a message for the path of the object holding the field ("must be >= %parent%.min"): a message is made before its field knows where it sits. */
export const PARENT = '%parent%'

/** A path for an issue a check raises on a field below it (a rawCheck's addIssue), which its own schema could not see. */
export function pathTo(...keys: Array<string | number>): [v.IssuePathItem, ...v.IssuePathItem[]] {
  const items = keys.map((key): v.IssuePathItem => ({ type: 'unknown', origin: 'value', input: null, key, value: null }))
  return items as [v.IssuePathItem, ...v.IssuePathItem[]]
}

/** How a path is written: `top` names the value itself ("(top level)"), `quoteTop` quotes a field of the top level ('"version" must be a string'). */
export interface PathStyle {
  top?: string
  quoteTop?: boolean
}

/**
 * `value` as `schema` declares it (a copy: objects are rebuilt field by
 * field), or the first thing wrong with it as "<path> <message>"
 * ("model.base.max must be >= model.base.min (5)").
 */
export function check<S extends v.GenericSchema>(schema: S, value: unknown, style: PathStyle = {}): { value: Infer<S> } | { problem: string } {
  // abortEarly: the first issue is the one reported, so nothing after it is checked.
  const result = v.safeParse(schema, value, { abortEarly: true })
  return result.success ? { value: result.output } : { problem: describe(result.issues[0], style) }
}

/** The first thing wrong with `value`, or null when it is what `schema` declares (`value` itself is then the one to keep: unknown fields and key order are its own). */
export function problemWith(schema: v.GenericSchema, value: unknown, style: PathStyle = {}): string | null {
  const result = v.safeParse(schema, value, { abortEarly: true })
  return result.success ? null : describe(result.issues[0], style)
}

function describe(issue: v.BaseIssue<unknown>, style: PathStyle): string {
  const keys = (issue.path ?? []).map((item) => item.key as string | number)
  const path = keys.length === 0 ? (style.top ?? '') : formatPath(keys, style.quoteTop === true)
  if (issue.message.startsWith(WHOLE)) return issue.message.slice(WHOLE.length).replaceAll(PATH, formatPath(keys, false))
  const message = issue.message.replaceAll(PARENT, formatPath(keys.slice(0, -1), false))
  return path === '' ? message : `${path} ${message}`
}

function formatPath(keys: ReadonlyArray<string | number>, quoteTop: boolean): string {
  if (keys.length === 1 && quoteTop) return JSON.stringify(keys[0])
  return keys.map((k, i) => (typeof k === 'number' ? `[${k}]` : i === 0 ? k : `.${k}`)).join('')
}

/** The message `schema` gives a field that is absent: a missing field reads as the field's own problem ("replicas must be an integer ..."). */
function messageWhenAbsent(schema: v.GenericSchema): string {
  const result = v.safeParse(schema, undefined, { abortEarly: true })
  return result.success ? 'is missing' : result.issues[0].message
}

type ObjectMessage = (issue: v.BaseIssue<unknown>) => string

/** What a value that is not an object is told: fixed words, or words about the value ("got the string ..."). */
export type NotObject = string | ((input: unknown) => string)

const notObjectMessage = (notObject: NotObject) => (issue: v.BaseIssue<unknown>) => (typeof notObject === 'string' ? notObject : notObject(issue.input))

/** An object's messages: not an object, an unknown key (for strict objects), a required field absent. */
function objectMessage(entries: v.ObjectEntries, notObject: NotObject): ObjectMessage {
  return (issue) => {
    const key = issue.path?.[0]?.key
    if (typeof key !== 'string') return notObjectMessage(notObject)(issue)
    if (issue.expected === 'never') return unknownFieldMessage(entries)
    const entry = entries[key]
    return entry === undefined ? notObjectMessage(notObject)(issue) : messageWhenAbsent(entry)
  }
}

/**
 * Keys no object read from outside may have: JSON.parse makes `__proto__`
 * an own key, which an assignment elsewhere (`out[key] = n`) would turn into
 * the object's prototype; valibot's records skip all three unchecked.
 */
const FORBIDDEN_KEYS = ['__proto__', 'constructor', 'prototype'] as const

/** A schema that refuses its value with `issue` (a message, and a path below the value if the fault is there). */
function refused<S extends v.GenericSchema>(issue: { message: string; path?: [v.IssuePathItem, ...v.IssuePathItem[]] }): S {
  return v.pipe(
    v.unknown(),
    v.rawCheck(({ addIssue }) => addIssue(issue)),
  ) as unknown as S
}

/** `schema`, refusing an array as `notObject` (valibot's objects take an array for an object with keys "0", "1", ...) and an object with a key of FORBIDDEN_KEYS. */
export function notArray<S extends v.GenericSchema>(schema: S, notObject: NotObject = 'must be an object') {
  const array = v.never(notObjectMessage(notObject))
  return v.lazy((input) => {
    if (Array.isArray(input)) return array
    const forbidden = typeof input === 'object' && input !== null ? FORBIDDEN_KEYS.find((k) => Object.hasOwn(input, k)) : undefined
    return forbidden === undefined ? schema : refused<S>({ message: 'is not allowed as a key', path: pathTo(forbidden) })
  })
}

/** An object whose fields are exactly these, as a variant's option: an unknown one is refused (a typo must not silently change a scenario). */
export function fields<const E extends v.ObjectEntries>(entries: E, notObject: NotObject = 'must be an object') {
  return v.strictObject(entries, objectMessage(entries, notObject))
}

/**
 * An object whose fields are exactly these. An unknown field is the first
 * problem reported, before the fields' values: a misspelt required field
 * reads as the typo it is, not as the field missing. `onUnknown` words it
 * about the object instead ('"phases" has an unknown phase "turbo"').
 */
export function exact<const E extends v.ObjectEntries>(entries: E, notObject: NotObject = 'must be an object', onUnknown?: (key: string) => string) {
  const array = v.never(notObjectMessage(notObject))
  const schema = fields(entries, notObject)
  const message = unknownFieldMessage(entries)
  return v.lazy((input) => {
    if (Array.isArray(input)) return array
    const unknown = typeof input === 'object' && input !== null ? Object.keys(input).find((k) => !Object.hasOwn(entries, k)) : undefined
    if (unknown === undefined) return schema
    return refused<typeof schema>(onUnknown ? { message: onUnknown(unknown) } : { message, path: pathTo(unknown) })
  })
}

/** `schema`, with one message for whatever is wrong inside the value ("protocols[0] must be {url, protocol} ..."): for a small value read as one thing. */
export function whole<S extends v.GenericSchema>(schema: S, message: string) {
  const wrong = v.never(message)
  return v.lazy((input) => (v.is(schema, input) ? schema : (wrong as unknown as S)))
}

/** A list; 'must be an array'. */
export function list<S extends v.GenericSchema>(item: S, message = 'must be an array') {
  return v.array(item, message)
}

/** An object of any keys with values of one kind (counts by status); 'must be an object'. */
export function record<S extends v.GenericSchema>(value: S, message = 'must be an object') {
  return notArray(v.record(v.string(), value, message), message)
}

const unknownFieldMessage = (entries: v.ObjectEntries): string => `is not a known field (expected one of: ${Object.keys(entries).join(', ')})`

/**
 * An object with at least these fields; others are not checked (a field a
 * later version added). The output drops them, so a caller that must keep
 * them keeps the value it checked (result-json.ts does), and the type has
 * no index signature: every field is one the schema names.
 */
export function loose<const E extends v.ObjectEntries>(entries: E, notObject = 'must be an object') {
  return notArray(v.object(entries, objectMessage(entries, notObject)), notObject)
}

const bounds = (what: string, min: number, max: number): string => {
  if (max === Infinity) return min === -Infinity ? what : min === Number.MIN_VALUE ? `${what} > 0` : `${what} >= ${min}`
  return `${what} between ${min} and ${max}`
}

/** A finite number in [min, max]; "must be a number between 0 and 1" (min Number.MIN_VALUE reads "> 0"). */
export function num(min = -Infinity, max = Infinity, message = `must be ${bounds('a number', min, max)}`) {
  return v.pipe(v.number(message), v.finite(message), v.minValue(min, message), v.maxValue(max, message))
}

/** An integer in [min, max]; "must be an integer between 1 and 64". */
export function int(min: number, max: number, message = `must be ${bounds('an integer', min, max)}`) {
  return v.pipe(v.number(message), v.integer(message), v.minValue(min, message), v.maxValue(max, message))
}

/** A count: a whole number from 0 to 2^53 - 1, where every integer is exact ("must be a whole number from 0 to 9007199254740991"). */
export function count(message = `must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}`) {
  return int(0, Number.MAX_SAFE_INTEGER, message)
}

export function str(message = 'must be a string') {
  return v.string(message)
}

export function nonEmpty(message = 'must be a non-empty string') {
  return v.pipe(
    v.string(message),
    v.check((s) => s.trim() !== '', message),
  )
}

export function bool(message = 'must be true or false') {
  return v.boolean(message)
}

/** One of these strings; 'must be one of "plain", "hedged", "both"'. */
export function oneOf<const T extends readonly [string, ...string[]]>(choices: T, message = `must be one of ${choices.map((c) => `"${c}"`).join(', ')}`) {
  return v.picklist(choices, message)
}
