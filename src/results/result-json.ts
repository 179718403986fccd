/**
 * JSON is both an output format (-o json) and the saved-run format, so
 * rendering must be stable (keys in the order the engine built them) and
 * parsing must reject anything that is not a result before a renderer
 * trips over it with a stack trace.
 */
import { UsageError } from '../core/errors.js'
import { printableDeep } from '../core/printable.js'
import { statusFromKey, statusKey } from '../core/status.js'
import { problemWith } from '../core/schema.js'
import { RESULT_SCHEMA, RunResultSchema } from './run-result.js'
import type { Figures, PhaseResult, RunResult } from './run-result.js'
import { READABLE_SCHEMAS, upgradeResult } from './result-upgrade.js'

/**
 * Pretty JSON with a trailing newline; `report -o json` of a saved file
 * reproduces it byte for byte. Status counts are keyed as a user reads them
 * (gRPC codes by name: "UNAVAILABLE", as grpcClient.statusCodes; HTTP
 * statuses by number); the engine counts them by number, and parseResult
 * reads either back.
 */
export function renderJson(result: RunResult): string {
  return `${JSON.stringify(withStatusKeys(result, statusKey), null, 2)}\n`
}

/** The result with every phase's status counts (its own, its replicas', its fan-out calls') keyed by `key`. */
function withStatusKeys(result: RunResult, key: (status: number) => string): RunResult {
  const rekey = <F extends Figures>(f: F): F => {
    const codes: Record<string, number> = {}
    for (const [k, n] of Object.entries(f.statusCodes)) {
      const status = statusFromKey(k)
      codes[Number.isNaN(status) ? k : key(status)] = n
    }
    return { ...f, statusCodes: codes }
  }
  const phases: RunResult['phases'] = {}
  for (const [name, phase] of Object.entries(result.phases) as Array<[keyof RunResult['phases'], PhaseResult]>) {
    phases[name] = { ...rekey(phase), replicas: phase.replicas.map(rekey), ...(phase.calls ? { calls: rekey(phase.calls) } : {}) }
  }
  return { ...result, phases }
}

/**
 * Parses and validates a saved run, upgraded to the current schema;
 * `source` (usually the file path) names it in the one-line error. The
 * version is read first, the upgrade brings an older one to the current
 * shape, and RunResultSchema checks that shape: every renderer then reads
 * what the types say is there.
 */
export function parseResult(text: string, source: string): RunResult {
  return resultFromValue(jsonObject(text, source), source)
}

/** The saved file's text as a JSON object: its nesting bounded before anything recurses, each refusal one line naming `source`. */
export function jsonObject(text: string, source: string): Json {
  const deep = nestingPastLimit(text)
  if (deep !== null) throw new UsageError(`${source}: not a hedgebench result (nested deeper than ${MAX_RESULT_DEPTH} levels at character ${deep})`)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    // The parser's reason says whether the file is cut short (an interrupted copy) or something else entirely.
    throw new UsageError(`${source}: not JSON (${err instanceof Error ? err.message : String(err)})`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${source}: not a hedgebench result (not a JSON object)`)
  return value as Json
}

/** A run read from its JSON value (a saved run's, or a saved sweep's `run`): version, upgrade, schema. */
export function resultFromValue(value: Json, source: string): RunResult {
  const schema = value.schema
  if (!(READABLE_SCHEMAS as readonly unknown[]).includes(schema)) {
    throw new UsageError(`${source}: not a hedgebench result (schema ${JSON.stringify(schema ?? null)}, expected "${RESULT_SCHEMA}")`)
  }
  upgradeResult(value)
  const problem = problemWith(RunResultSchema, value, { quoteTop: true })
  if (problem !== null) throw new UsageError(`${source}: ${invalid(problem)}`)
  // Back to the numbers the engine and every renderer count by (a file saved before names has them already).
  return withStatusKeys(printableDeep(value) as RunResult, String)
}

export type Json = Record<string, unknown>

/**
 * How deep a result's objects and arrays may nest. A result nests about
 * seven levels (generators[].phases.plain, phases.hedged.details[].wait);
 * the rest is room for fields a later version adds. Every step after
 * JSON.parse (the upgrade, the schema, printableDeep) recurses once per
 * level, so a file nested 200,000 deep would end in a stack overflow.
 */
export const MAX_RESULT_DEPTH = 64

/** Where the text first nests past MAX_RESULT_DEPTH (its character offset), or null: brackets counted outside strings, before anything recurses. */
function nestingPastLimit(text: string): number | null {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    if (inString) {
      if (ch === 0x5c)
        i++ // a backslash: the next character is escaped
      else if (ch === 0x22) inString = false
    } else if (ch === 0x22) inString = true
    else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > MAX_RESULT_DEPTH) return i
    } else if (ch === 0x7d || ch === 0x5d) depth--
  }
  return null
}

/** A merged result's generator row reads as `merge` has always refused it, the field named after. */
const invalid = (problem: string): string => (problem.startsWith('generators[') ? `invalid row in "generators" (${problem})` : `invalid result: ${problem}`)
