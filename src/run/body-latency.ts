/**
 * A hedged phase whose latency is in the response body: hedging commits to
 * the first attempt whose response headers arrive, so a replica that sends
 * its headers at once and its body late is never hedged, however slow.
 * Said once, from the phase's Details (stats/timing-breakdown.ts): the
 * originals' wait for the headers beside the phase's latency.
 */
import { formatMs } from '../core/duration.js'
import type { PhaseResult } from '../results/run-result.js'
import { decodeHistogram, percentileMs } from '../stats/histogram.js'

/** The tail compared: at p95, at least 5 % of requests took longer than the delay. */
const PERCENTILE = 95
/** Hedges per request below a fifth of that 5 %: most requests over the delay were not hedged. */
const FEW_HEDGES = (100 - PERCENTILE) / 100 / 5

/** One warning when a hedged phase's p95 latency is above its delay while its originals' p95 wait for headers is below it, and few hedges went out. */
export function bodyLatencyWarnings(phases: readonly PhaseResult[]): string[] {
  const warned = phases.flatMap((phase) => {
    const h = phase.hedging
    const originals = phase.details?.find((d) => d.attempt === 0)
    // A delay of 0 (--parallel, --tied) sends every copy at once: nothing waits on the headers.
    if (!h || h.parallel || h.tied || h.delayMs <= 0 || !originals || originals.wait.count === 0 || phase.requests === 0) return []
    const headers = percentileMs(decodeHistogram(originals.wait.histogram), PERCENTILE)
    const latency = phase.latencyMs.p95
    if (!(headers < h.delayMs && latency > h.delayMs && h.hedgesSent < FEW_HEDGES * phase.requests)) return []
    return [
      `${phase.name}: the latency is in the response body: p${PERCENTILE} ${formatMs(latency)} is above the hedge delay (${formatMs(h.delayMs)}) while the originals' p${PERCENTILE} wait for the response headers is ${formatMs(headers)}, and ${h.hedgesSent} hedges were sent for ${phase.requests} requests; hedging commits at the response headers, so it cannot cut a slow body`,
    ]
  })
  return warned.slice(0, 1)
}
