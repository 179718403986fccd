/**
 * A saved result of an older schema version, brought to the current one
 * once, when it is read (result-json.ts parseResult), so that every renderer
 * reads one shape. Each step takes one version to the next.
 */
import { RESULT_SCHEMA } from './run-result.js'

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The schema versions parseResult reads, oldest first; the last is RESULT_SCHEMA. */
export const READABLE_SCHEMAS = ['hedgebench/result@1', RESULT_SCHEMA] as const

/**
 * @1 -> @2: a merged phase's `rps` was the sum of its shards' rates, beside
 * the union window's rate (`window.rpsUnion`); it is now the union window's,
 * as every phase's rate is its requests over its duration. And what a
 * result saved before a feature existed could only have had as "off" or 0
 * is said so, so that no renderer guesses it.
 */
function fromV1(result: Json): void {
  if (isObject(result.config)) {
    result.config.eject ??= null
    result.config.saturation ??= null
    if (isObject(result.config.hedge)) result.config.hedge.tied ??= false
  }
  if (!isObject(result.phases)) return
  for (const phase of Object.values(result.phases)) {
    if (!isObject(phase)) continue
    if (isObject(phase.window)) {
      const { rpsUnion, ...window } = phase.window
      if (typeof rpsUnion === 'number') phase.rps = rpsUnion
      phase.window = window
    }
    if (isObject(phase.generator)) phase.generator.cpuJudged ??= true
    if (isObject(phase.hedging)) {
      phase.hedging.tied ??= false
      phase.hedging.suppressed = {
        overload: 0,
        errorRate: 0,
        targetBusy: 0,
        pushback: 0,
        ...(isObject(phase.hedging.suppressed) ? phase.hedging.suppressed : {}),
      }
    }
  }
}

const STEPS: Record<string, (result: Json) => void> = { 'hedgebench/result@1': fromV1 }

/** Upgrades `result` in place, step by step, to RESULT_SCHEMA; a result of the current version is left as it is. */
export function upgradeResult(result: Json): void {
  for (let i = READABLE_SCHEMAS.indexOf(result.schema as (typeof READABLE_SCHEMAS)[number]); i >= 0 && i < READABLE_SCHEMAS.length - 1; i++) {
    STEPS[READABLE_SCHEMAS[i]!]!(result)
    result.schema = READABLE_SCHEMAS[i + 1]
  }
}
