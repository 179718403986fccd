/**
 * JSON is both an output format (-o json) and the saved-run format, so
 * rendering must be stable (keys in the order the engine built them) and
 * parsing must reject anything that is not a result before a renderer
 * trips over it with a stack trace.
 */
import { UsageError } from '../core/errors.js'
import { printableDeep } from '../core/printable.js'
import { statusFromKey, statusKey } from '../core/status.js'
import { PERCENTILE_KEYS, PHASE_NAMES, RESULT_SCHEMA, WIRE_PROTOCOLS } from './run-result.js'
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
  return withStatusKeys(printableDeep(value) as RunResult, String)
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
  const config = configProblem(value.config)
  if (config !== null) return `invalid result: config${config}`
  if (!isStrings(value.warnings)) return 'invalid result: "warnings" must be an array of strings'
  if (!isObject(value.phases)) return 'invalid result: "phases" is missing'
  return protocolsProblem(value.protocols) ?? phasesProblem(value.phases)
}

/** Absent in results saved before it was recorded; else one {url, protocol} per replica. */
function protocolsProblem(protocols: unknown): string | null {
  if (protocols === undefined) return null
  if (!Array.isArray(protocols)) return 'invalid result: "protocols" must be an array'
  const bad = protocols.findIndex((p) => !isObject(p) || typeof p.url !== 'string' || !(WIRE_PROTOCOLS as readonly unknown[]).includes(p.protocol))
  return bad < 0 ? null : `invalid result: protocols[${bad}] must be {url, protocol} with protocol one of ${WIRE_PROTOCOLS.join(', ')}`
}

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string')
const MODES: readonly unknown[] = ['plain', 'hedged', 'both']

/** The config fields every renderer reads without a fallback (a hand-edited file must fail here, by name, not in a renderer). */
function configProblem(config: Json): string | null {
  if (!isStrings(config.urls) || config.urls.length === 0) return '.urls must be a non-empty array of URLs'
  if (typeof config.method !== 'string') return '.method must be a string'
  if (!MODES.includes(config.mode)) return '.mode must be "plain", "hedged" or "both"'
  if (!isNumber(config.concurrency)) return '.concurrency must be a number'
  if (config.headers !== undefined && !isObject(config.headers)) return '.headers must be an object'
  if (!isObject(config.hedge)) return '.hedge must be an object'
  return null
}

function phasesProblem(phases: Json): string | null {
  for (const [name, phase] of Object.entries(phases)) {
    if (!(PHASE_NAMES as readonly string[]).includes(name)) return `invalid result: unknown phase "${name}"`
    const problem = phaseProblem(phase)
    if (problem !== null) return `invalid result: phases.${name}${problem}`
  }
  return null
}

const FIGURE_NUMBERS = ['requests', 'attempts', 'ok', 'errors', 'bytes'] as const
const PHASE_NUMBERS = ['durationMs', 'rps', 'startOffsetMs'] as const
const LATENCY_KEYS = ['min', 'mean', 'stddev', ...PERCENTILE_KEYS, 'max'] as const
const TIMELINE_NUMBERS = ['t', 'requests', 'errors', 'p50Ms', 'p99Ms', 'hedges'] as const
const HEDGING_NUMBERS = [
  'delayMs',
  'maxAttempts',
  'hedgesSent',
  'unsent',
  'extraLoadPct',
  'triggerRate',
  'hedgeWins',
  'originalWins',
  'cancelled',
  'lateDiscarded',
  'budgetDenied',
  'deadlineSuppressed',
  'nonFatalTriggered',
] as const

/** Checks the fields every renderer reads; the suffix names the bad path (".latencyMs.p99 must be a number"). */
function phaseProblem(phase: unknown): string | null {
  if (!isObject(phase)) return ' must be an object'
  const figures = figuresProblem(phase)
  if (figures !== null) return figures
  for (const key of PHASE_NUMBERS) if (!isNumber(phase[key])) return `.${key} must be a number`
  if (!Array.isArray(phase.replicas)) return '.replicas must be an array'
  for (const [i, replica] of phase.replicas.entries()) {
    const problem = isObject(replica) ? (typeof replica.url !== 'string' ? '.url must be a string' : figuresProblem(replica)) : ' must be an object'
    if (problem !== null) return `.replicas[${i}]${problem}`
  }
  if (!Array.isArray(phase.timeline) || !phase.timeline.every((p) => isObject(p) && TIMELINE_NUMBERS.every((k) => isNumber(p[k])))) {
    return `.timeline must be an array of {${TIMELINE_NUMBERS.join(', ')}}`
  }
  const generator = generatorProblem(phase.generator)
  if (generator !== null) return `.generator${generator}`
  if (phase.hedging !== undefined) {
    const problem = hedgingProblem(phase.hedging)
    if (problem !== null) return `.hedging${problem}`
  }
  return null
}

/** A phase's or a replica's figures (Figures in run-result.ts). */
function figuresProblem(f: Json): string | null {
  for (const key of FIGURE_NUMBERS) if (!isNumber(f[key])) return `.${key} must be a number`
  if (!isObject(f.statusCodes)) return '.statusCodes must be an object'
  if (!isObject(f.errorKinds)) return '.errorKinds must be an object'
  if (typeof f.histogram !== 'string') return '.histogram must be a string'
  if (!isObject(f.slow) || !isNumber(f.slow.count) || !isNumber(f.slow.thresholdMs)) return '.slow must be {thresholdMs, count}'
  if (!isObject(f.latencyMs)) return '.latencyMs must be an object'
  for (const key of LATENCY_KEYS) if (!isNumber(f.latencyMs[key])) return `.latencyMs.${key} must be a number`
  return null
}

function generatorProblem(g: unknown): string | null {
  if (!isObject(g)) return ' must be an object'
  if (!isNumber(g.cpuPct) || !isNumber(g.cores)) return '.cpuPct and .cores must be numbers'
  if (typeof g.saturated !== 'boolean') return '.saturated must be true or false'
  if (!isStrings(g.warnings)) return '.warnings must be an array of strings'
  const loop = g.eventLoopDelayMs
  if (!isObject(loop) || !['p50', 'p99', 'max'].every((k) => isNumber(loop[k]))) return '.eventLoopDelayMs must be {p50, p99, max}'
  if (g.gc !== undefined && !isObject(g.gc)) return '.gc must be an object'
  return null
}

function hedgingProblem(h: unknown): string | null {
  if (!isObject(h)) return ' must be an object'
  for (const key of HEDGING_NUMBERS) if (!isNumber(h[key])) return `.${key} must be a number`
  if (typeof h.delaySource !== 'string') return '.delaySource must be a string'
  for (const key of ['delayUsedMs', 'timerLatenessMs'] as const) {
    const v = h[key]
    if (!isObject(v) || !['p50', 'max'].every((k) => isNumber(v[k]))) return `.${key} must be an object of numbers`
  }
  if (!Array.isArray(h.perAttempt) || !h.perAttempt.every((a) => isObject(a) && isNumber(a.attempt) && isNumber(a.count) && isObject(a.latencyMs))) {
    return '.perAttempt must be an array of {attempt, count, latencyMs}'
  }
  return null
}
