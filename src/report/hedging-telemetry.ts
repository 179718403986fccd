/**
 * Seed 004's telemetry as words, for the text and HTML reports alike:
 * hedges held back during saturation, how long losers ran on, and the
 * attempts a logical request took. Each returns null when the result has
 * nothing to say (older saved runs lack the fields).
 */
import { formatMs } from '../core/duration.js'
import type { HedgingStats } from '../results/run-result.js'

/** "overload 12, error rate 0, target busy 30", or null when nothing was held back. */
export function suppressedText(h: HedgingStats): string | null {
  const s = h.suppressed
  if (!s || s.overload + s.errorRate + s.targetBusy === 0) return null
  return `overload ${s.overload}, error rate ${s.errorRate}, target busy ${s.targetBusy}`
}

/** "38 losers: p50 0.1 ms / p99 0.3 ms / max 0.4 ms after the decision". */
export function loserRuntimeText(h: HedgingStats): string | null {
  const l = h.loserRuntimeMs
  if (!l || l.count === 0) return null
  return `${l.count} losers ran on p50 ${formatMs(l.p50)} / p99 ${formatMs(l.p99)} / max ${formatMs(l.max)} after the decision`
}

/** "1: 3900 (97.5%), 2: 100 (2.5%)". */
export function attemptsPerRequestText(h: HedgingStats): string | null {
  const counts = h.attemptsPerRequest
  if (!counts) return null
  const total = Object.values(counts).reduce((a, b) => a + b, 0)
  if (total === 0) return null
  return Object.entries(counts)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([n, c]) => `${n}: ${c} (${((c / total) * 100).toFixed(1)}%)`)
    .join(', ')
}
