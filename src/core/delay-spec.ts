/**
 * The hedge delay as a user gives it, read in one place for the three ways
 * in: the --hedge-delay flag, a profile's run.hedgeDelay and the library's
 * RunOptions.hedge.delay.
 *
 *   'auto'        the warm-up's p95
 *   'p90', 'p99'  a warm-up percentile, above 0 and below 100
 *   15            a fixed delay in ms (the flag takes a duration: 15ms, 1.5s)
 */
import { parseDuration } from '../core/duration.js'
import { UsageError } from '../core/errors.js'

export type HedgeDelay = 'auto' | `p${number}` | number

/** The delay as the engine uses it. */
export type ResolvedHedgeDelay = 'auto' | { percentile: number } | { fixedMs: number }

const PERCENTILE_RE = /^p(\d+(?:\.\d+)?)$/

/** The percentile a measured delay follows (auto: the p95); null for a fixed delay. */
export function delayPercentileOf(delay: ResolvedHedgeDelay): number | null {
  return delay === 'auto' ? 95 : 'percentile' in delay ? delay.percentile : null
}

/** The delay `spec` stands for, or null when it is none of the forms above. */
export function readHedgeDelay(spec: unknown): ResolvedHedgeDelay | null {
  if (spec === 'auto') return 'auto'
  if (typeof spec === 'number') return spec >= 0 && Number.isFinite(spec) ? { fixedMs: spec } : null
  const match = typeof spec === 'string' ? PERCENTILE_RE.exec(spec) : null
  const percentile = match ? Number(match[1]) : NaN
  return percentile > 0 && percentile < 100 ? { percentile } : null
}

/** readHedgeDelay, with a one-line UsageError naming --hedge-delay when the delay is invalid. */
export function resolveHedgeDelay(spec: HedgeDelay): ResolvedHedgeDelay {
  const resolved = readHedgeDelay(spec)
  if (resolved) return resolved
  if (typeof spec === 'number') throw new UsageError(`invalid --hedge-delay ${spec} (use auto, pNN or a duration)`)
  throw new UsageError(`invalid --hedge-delay "${spec}" (use auto, a percentile like p90 or p99, or a duration like 15ms)`)
}

/** --hedge-delay as typed: auto, pNN, or a duration (a bare number is ms). */
export function parseHedgeDelayFlag(text: string): HedgeDelay {
  if (text !== 'auto' && !/^p\d/.test(text)) return parseDuration(text, '--hedge-delay')
  resolveHedgeDelay(text as HedgeDelay)
  return text as HedgeDelay
}
