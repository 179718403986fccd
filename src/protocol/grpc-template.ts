/**
 * Per-call data: `-d`/`-D` JSON (or a --targets message) holding ghz-style template actions, for
 * values that must differ from call to call (so that caches and idempotency
 * stores see distinct requests):
 *
 *   {{.RequestNumber}}     the call's number in the run (0, 1, 2, ...)
 *   {{.UUID}}              a version 4 UUID
 *   {{randomInt MIN MAX}}  an integer from MIN up to MAX-1 (ghz's range)
 *   {{randomString N}}     N letters and digits
 *
 * The text is split once; each logical call renders it once, then encodes
 * it as the constant message is encoded (grpc-message.ts): every attempt of
 * that call, its hedges included, sends those same bytes. The randomness is
 * the run's seeded one (core/random.ts), so a seeded run sends the same
 * messages again. Without an action, nothing here runs per call.
 */
import { UsageError } from '../core/errors.js'
import type { GrpcSchemaSource } from './grpc-method.js'

/** A message with template actions as a thread needs it to render its calls' messages: the text, and the schema to load the request type from again. */
export interface GrpcTemplate {
  text: string
  /** What a fault in it names (`-d`, `its message`). */
  flag: string
  call: string
  schema: GrpcSchemaSource
}

/** What one call's rendering draws on. */
export interface TemplateInput {
  requestNumber: number
  /** [0, 1), seeded. */
  random: () => number
}

type Part = string | ((input: TemplateInput) => string)

const ACTION = /\{\{-?\s*(.*?)\s*-?\}\}/g
const KNOWN = '{{.RequestNumber}}, {{.UUID}}, {{randomInt MIN MAX}}, {{randomString N}}'

/** True when the text holds a template action. */
export function isTemplate(text: string): boolean {
  return text.includes('{{')
}

/** The text as a function of one call's input; an unknown action or bad argument is one line naming `flag`. */
export function compileTemplate(text: string, flag: string): (input: TemplateInput) => string {
  const parts: Part[] = []
  let at = 0
  for (const m of text.matchAll(ACTION)) {
    parts.push(text.slice(at, m.index))
    parts.push(action(m[1]!, flag))
    at = m.index + m[0].length
  }
  const rest = text.slice(at)
  if (rest.includes('{{')) throw new UsageError(`${flag}: a template action "{{" is not closed with "}}"`)
  parts.push(rest)
  return (input) => {
    let out = ''
    for (const p of parts) out += typeof p === 'string' ? p : p(input)
    return out
  }
}

/**
 * Metadata (-m, -H) is sent as given, the same on every call: an action in
 * it would go out literally, so it is refused before anything is sent,
 * naming the actions -d/-D render. Only the action is quoted (a value may be a credential).
 */
export function refuseMetadataActions(metadata: ReadonlyArray<readonly [string, string]>): void {
  for (const [name, value] of metadata) {
    const found = firstAction(value)
    if (found !== null)
      throw new UsageError(`metadata "${name}": template action ${found} is not rendered in metadata, which is sent as given (-d/-D render ${KNOWN})`)
  }
}

/** The first template action in the text (`{{.UUID}}`), or null: what a refusal of text sent as given quotes. */
export function firstAction(text: string): string | null {
  return /\{\{.*?\}\}/.exec(text)?.[0] ?? null
}

function action(source: string, flag: string): (input: TemplateInput) => string {
  const [name, ...args] = source.split(/\s+/)
  if (name === '.RequestNumber' && args.length === 0) return (i) => String(i.requestNumber)
  if (name === '.UUID' && args.length === 0) return (i) => uuid(i.random)
  if (name === 'randomInt' && args.length === 2) {
    const [min, max] = args.map((a) => integerArg(a, source, flag)) as [number, number]
    if (max <= min) throw new UsageError(`${flag}: {{${source}}} needs MIN below MAX`)
    return (i) => String(min + Math.floor(i.random() * (max - min)))
  }
  if (name === 'randomString' && args.length === 1) {
    const n = integerArg(args[0]!, source, flag)
    if (n <= 0 || n > 65_536) throw new UsageError(`${flag}: {{${source}}} needs a length from 1 to 65536`)
    return (i) => randomString(n, i.random)
  }
  throw new UsageError(`${flag}: unknown template action {{${source}}} (known: ${KNOWN})`)
}

function integerArg(text: string, source: string, flag: string): number {
  const n = Number(text)
  if (!Number.isSafeInteger(n)) throw new UsageError(`${flag}: {{${source}}}: "${text}" is not a whole number`)
  return n
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

function randomString(n: number, random: () => number): string {
  let out = ''
  for (let k = 0; k < n; k++) out += ALPHANUMERIC[Math.floor(random() * ALPHANUMERIC.length)]
  return out
}

/** RFC 9562 version 4 layout, from the seeded source (crypto.randomUUID cannot be replayed). */
function uuid(random: () => number): string {
  // At most 8 hex digits per draw: a draw has 32 bits.
  const hex = (n: number) =>
    Math.floor(random() * 16 ** n)
      .toString(16)
      .padStart(n, '0')
  const variant = (8 + Math.floor(random() * 4)).toString(16)
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(6)}${hex(6)}`
}
