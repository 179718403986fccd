/**
 * JSON is both an output format (-o json) and the saved-run format, so
 * rendering must be stable (keys in the order the engine built them) and
 * parsing must reject anything that is not a result before a renderer
 * trips over it with a stack trace.
 */
import { UsageError } from '../core/errors.js'
import { statusFromKey, statusKey } from '../core/status.js'
import { PHASE_NAMES, RESULT_SCHEMA } from './run-result.js'
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

/** Parses and validates a saved run, upgraded to the current schema; `source` (usually the file path) names it in the one-line error. */
export function parseResult(text: string, source: string): RunResult {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    // The parser's reason says whether the file is cut short (an interrupted copy) or something else entirely.
    throw new UsageError(`${source}: not JSON (${err instanceof Error ? err.message : String(err)})`)
  }
  const problem = resultProblem(value)
  if (problem !== null) throw new UsageError(`${source}: ${problem}`)
  upgradeResult(value as Json)
  // Back to the numbers the engine and every renderer count by (a file saved before names has them already).
  return withStatusKeys(value as RunResult, String)
}

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

/** What is wrong with `value` as a RunResult, or null when nothing is. */
function resultProblem(value: unknown): string | null {
  if (!isObject(value)) return 'not a hedgebench result (not a JSON object)'
  if (!(READABLE_SCHEMAS as readonly unknown[]).includes(value.schema)) {
    return `not a hedgebench result (schema ${JSON.stringify(value.schema ?? null)}, expected "${RESULT_SCHEMA}")`
  }
  for (const key of ['version', 'label', 'startedAt', 'finishedAt'] as const) {
    if (typeof value[key] !== 'string') return `invalid result: "${key}" must be a string`
  }
  if (typeof value.partial !== 'boolean') return 'invalid result: "partial" must be true or false'
  if (!isObject(value.config)) return 'invalid result: "config" is missing'
  if (!Array.isArray(value.warnings)) return 'invalid result: "warnings" must be an array'
  if (!isObject(value.phases)) return 'invalid result: "phases" is missing'
  return phasesProblem(value.phases)
}

function phasesProblem(phases: Json): string | null {
  for (const [name, phase] of Object.entries(phases)) {
    if (!(PHASE_NAMES as readonly string[]).includes(name)) return `invalid result: unknown phase "${name}"`
    const problem = phaseProblem(phase)
    if (problem !== null) return `invalid result: phases.${name}${problem}`
  }
  return null
}

const PHASE_NUMBERS = ['requests', 'attempts', 'ok', 'errors', 'bytes', 'durationMs', 'rps', 'startOffsetMs'] as const
const LATENCY_KEYS = ['min', 'mean', 'p50', 'p90', 'p95', 'p99', 'p99.9', 'p99.99', 'max'] as const

/** Checks the fields every renderer reads; the suffix names the bad path (".latencyMs.p99 must be a number"). */
function phaseProblem(phase: unknown): string | null {
  if (!isObject(phase)) return ' must be an object'
  for (const key of PHASE_NUMBERS) if (!isNumber(phase[key])) return `.${key} must be a number`
  if (!isObject(phase.statusCodes)) return '.statusCodes must be an object'
  if (!isObject(phase.errorKinds)) return '.errorKinds must be an object'
  if (typeof phase.histogram !== 'string') return '.histogram must be a string'
  if (!isObject(phase.slow) || !isNumber(phase.slow.count) || !isNumber(phase.slow.thresholdMs)) return '.slow must be {thresholdMs, count}'
  if (!isObject(phase.latencyMs)) return '.latencyMs must be an object'
  for (const key of LATENCY_KEYS) if (!isNumber(phase.latencyMs[key])) return `.latencyMs.${key} must be a number`
  if (!Array.isArray(phase.replicas)) return '.replicas must be an array'
  if (phase.hedging !== undefined && !isObject(phase.hedging)) return '.hedging must be an object'
  return null
}
