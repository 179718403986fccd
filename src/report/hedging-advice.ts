/**
 * What went wrong with hedging itself, and what to try (the hedging articles' feedback
 * lesson): a trigger rate far above what the delay's percentile implies, a
 * budget that refused hedges (and how many slow requests went unhedged for
 * it), and small runs whose extra load passes the budget because of the
 * bucket's initial burst. Decided here; the text and HTML reports print it.
 */
import { DEFAULT_BUDGET_BURST } from '../hedging/policy.js'
import { formatThreshold } from '../core/duration.js'
import { grpcCodeName } from '../protocol/grpc-status.js'
import { extraLoadPct } from '../results/extra-load.js'
import { LOSING_WIN_PCT, suppressedText, suppressedTotal } from './hedging-telemetry.js'
import type { PhaseResult, RunConfig } from '../results/run-result.js'

/** A trigger rate this many times what the percentile implies is "far above" it. */
const FAR_ABOVE = 2
/** Below this many triggered requests a rate says too little to explain. */
const MIN_TRIGGERS = 10

export function hedgingAdvice(phase: PhaseResult, config: RunConfig): string[] {
  const h = phase.hedging
  // Nothing answered (every request failed or timed out): the verdict says so; a rate of hedges says nothing about the delay then.
  if (!h || h.parallel || phase.ok === 0) return []
  const calls = phase.calls?.requests ?? phase.requests
  const lines: string[] = []
  const percentile = delayPercentile(config.hedge.delay)
  const implied = percentile === null ? null : 100 - percentile
  const triggers = Math.round((h.triggerRate * calls) / 100)
  // A hedge fired at once by a failed attempt (a refused connection, a 502/503/504) says nothing about the delay:
  // only those the delay fired are held against what its percentile implies.
  const failovers = Math.min(h.nonFatalTriggered, triggers)
  const atDelay = triggers - failovers
  const atDelayRate = calls > 0 ? (100 * atDelay) / calls : 0
  const feedback = implied !== null && implied > 0 && atDelayRate >= FAR_ABOVE * implied && atDelay >= MIN_TRIGGERS
  if (feedback) {
    const besides = failovers > 0 ? ` when the delay passed (besides ${failovers} fired at once by a failed attempt)` : ''
    lines.push(
      `${atDelayRate.toFixed(1)}% of requests fired a hedge${besides}, far above the ~${round1(implied!)}% a p${percentile} delay implies: ` +
        'requests were slower while hedging than when the delay was measured (hedges add load, load slows requests, slow requests fire hedges)',
    )
  }
  if (failovers >= MIN_TRIGGERS && failovers * 2 >= triggers) lines.push(failoverLine(failovers, triggers, config))
  const held = suppressedTotal(h)
  if (held > 0 && held >= h.hedgesSent) {
    lines.push(
      `the saturation gate held back ${held} hedges (${suppressedText(h)}), ${h.hedgesSent === 0 ? 'and none was sent' : `more than the ${h.hedgesSent} sent`}: ` +
        'hedging stood down while the replicas showed saturation, so this phase shows little of what hedging buys (--no-suppress hedges regardless)',
    )
  }
  if (h.budgetDenied > 0) {
    const slow = h.slowBudgetDenied ?? 0
    const slowPart =
      slow > 0 ? `; ${slow} of the ${phase.slow.count} requests over ${formatThreshold(phase.slow.thresholdMs)} wanted a hedge and were refused one` : ''
    lines.push(`the ${h.budgetPct}% budget refused ${h.budgetDenied} hedges${slowPart}`)
  }
  if (feedback || h.budgetDenied > 0) {
    const fewer = Math.max(1, Math.floor(config.concurrency / 2))
    const later = `--hedge-delay p${laterPercentile(percentile)}`
    // Hedges that mostly lose would not be helped by more of them (shared slowness, or a delay far too early).
    const winPct = h.hedgesSent > 0 ? (100 * h.hedgeWins) / h.hedgesSent : null
    if (winPct !== null && winPct < LOSING_WIN_PCT) {
      lines.push(
        `try a later percentile (${later}) or fewer in flight (-c ${fewer}), not a larger budget: only ${round1(winPct)}% of the ${h.hedgesSent} hedges sent won, ` +
          'so more copies would mostly lose (or the replicas are slow together, which no copy escapes)',
      )
    } else lines.push(`try a later percentile (${later}), a larger budget (--hedge-budget ${2 * (h.budgetPct ?? 10)}) or fewer in flight (-c ${fewer})`)
  }
  const extra = extraLoadPct(phase)
  if (h.budgetPct !== null && extra > h.budgetPct && calls > 0) {
    const most = DEFAULT_BUDGET_BURST + (h.budgetPct / 100) * calls
    lines.push(
      `extra load ${extra.toFixed(1)}% is over the ${h.budgetPct}% budget because the budget starts with a burst of ${DEFAULT_BUDGET_BURST} hedges: ` +
        `${calls} requests allow up to ${DEFAULT_BUDGET_BURST} + ${h.budgetPct}% x ${calls} = ${round1(most)} hedges (${round1((100 * most) / calls)}%); ` +
        `from -n ${100 * DEFAULT_BUDGET_BURST} the burst adds at most 1 point`,
    )
  }
  return lines
}

/** Most hedges were failovers: the cause is a failing replica, which a later delay cannot help and ejection can. */
function failoverLine(failovers: number, triggers: number, config: RunConfig): string {
  const statuses = config.hedge.nonFatalStatus.length > 0 ? ` or a non-fatal status: ${config.hedge.nonFatalStatus.map(statusName).join('/')}` : ''
  const eject = config.eject === null && config.urls.length > 1 ? '; outlier ejection (drop --no-eject) keeps requests off a replica that keeps failing' : ''
  return `${failovers} of the ${triggers} requests that fired a hedge fired it at once because an attempt failed (a connection error${statuses}), not because the delay passed: a failing replica, not the delay${eject}`
}

/** An HTTP status as its number, a gRPC code by its name ("UNAVAILABLE"). */
const statusName = (code: number): string => (code < 100 ? grpcCodeName(code) : String(code))

/** The percentile a delay spec derives from ("auto" = p95), or null for a fixed delay. */
function delayPercentile(spec: string): number | null {
  if (spec === 'auto') return 95
  const m = /^p(\d+(?:\.\d+)?)$/.exec(spec)
  return m ? Number(m[1]) : null
}

function laterPercentile(p: number | null): string {
  if (p === null || p < 99) return '99'
  return p < 99.9 ? '99.9' : String(p)
}

const round1 = (x: number): number => Math.round(x * 10) / 10
