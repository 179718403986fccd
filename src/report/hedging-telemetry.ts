/**
 * The 'Controlled Duplication' article's telemetry as words, for the text and HTML reports alike:
 * hedges held back during saturation, how long losers ran on, and the
 * attempts a logical request took. Each returns null when the result has
 * nothing to say (older saved runs lack the fields).
 */
import { formatMs } from '../core/duration.js'
import type { HedgingStats, PhaseResult, RunResult, ServerCrossCheck } from '../results/run-result.js'

/** "overload 12, error rate 0, target busy 30" (and "pushback N" when a replica pushed back), or null when nothing was held back. */
export function suppressedText(h: HedgingStats): string | null {
  const s = h.suppressed
  if (suppressedTotal(h) === 0) return null
  return `overload ${s.overload}, error rate ${s.errorRate}, target busy ${s.targetBusy}${s.pushback ? `, pushback ${s.pushback}` : ''}`
}

/** Hedges the saturation gate held back, every reason together. */
export function suppressedTotal(h: HedgingStats): number {
  const s = h.suppressed
  return s.overload + s.errorRate + s.targetBusy + s.pushback
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

/**
 * The 'Controlled Duplication' article: "a high trigger rate with a low win rate often signals a
 * threshold that is too aggressive or replicas whose delays are strongly
 * correlated". High: more than 10 % of requests fired a hedge (a p95 delay
 * fires ~5 %); low: fewer than a quarter of the hedges sent won.
 */
/** Hedges winning less often than this (% of those sent) mostly add load. */
export const LOSING_WIN_PCT = 25

export function triggerWinWarning(h: HedgingStats): string | null {
  // No race was won by anyone (nothing was answered): not a sign of the delay, the verdict says every request failed.
  if (h.hedgesSent === 0 || h.triggerRate <= 10 || h.hedgeWins + h.originalWins === 0) return null
  const winRate = (h.hedgeWins / h.hedgesSent) * 100
  if (winRate >= LOSING_WIN_PCT) return null
  return (
    `${h.triggerRate.toFixed(1)}% of requests fired a hedge but only ${winRate.toFixed(1)}% of hedges won: ` +
    'the delay is too aggressive (try a later percentile), or the replicas are slow together (correlated delays) and a copy cannot escape it'
  )
}

/** "4012 copies began executing for 4000 requests: +0.3% extra work (vs +98.8% extra requests sent)". */
export function workText(s: ServerCrossCheck, covered: readonly PhaseResult[]): string | null {
  const first = covered[0]
  if (s.started === undefined || !first) return null
  // With fan-out every call is a request to the servers: the work is per call, as the extra load is.
  const unit = first.calls ? 'calls' : 'requests'
  const needed = covered.reduce((n, p) => n + (p.calls ? p.calls.requests : p.requests), 0)
  if (needed === 0) return null
  const together = covered.length > 1 ? ` of ${covered.map((p) => p.name).join(' and ')} together` : ''
  const dropped = s.tiedDropped ? `; ${s.tiedDropped} tied copies dropped before starting` : ''
  if (s.started < needed) {
    // Fewer copies than requests: some never began (refused connections, requests that failed before a server took
    // them). That is no saving, as refused hedges are none: the extra work is 0, and the shortfall is named.
    return `${s.started} copies began executing for ${needed} ${unit}${together}: +0.0% extra work; ${needed - s.started} ${unit} never began executing (refused, or failed before a server took them)${dropped}`
  }
  const extraWork = ((s.started - needed) / needed) * 100
  const sentPct =
    covered.length === 1 ? first.hedging?.extraLoadPct : unit === 'requests' ? Math.max(0, ((s.clientAttempts - needed) / needed) * 100) : undefined
  const sent = sentPct === undefined ? '' : ` (vs +${sentPct.toFixed(1)}% extra ${unit} sent)`
  return `${s.started} copies began executing for ${needed} ${unit}${together}: +${extraWork.toFixed(1)}% extra work${sent}${dropped}`
}

/** The phases one server count covers: this phase, or every phase of its interleaved window (ServerCrossCheck.phases). */
export function coveredPhases(s: ServerCrossCheck, phase: PhaseResult, phases: RunResult['phases']): PhaseResult[] {
  if (!s.phases) return [phase]
  return s.phases.flatMap((name) => (phases[name] ? [phases[name]] : []))
}

/** "(plain and hedged together: one interleaved window, which the server cannot split)", or nothing for one phase. */
export function coveredText(s: ServerCrossCheck): string {
  return s.phases && s.phases.length > 1 ? ` (${s.phases.join(' and ')} together: one interleaved window, which the server cannot split)` : ''
}

/** "server stopped 36 of 38 cancelled losers before answering (94.7%)": the cancels the target confirms. */
export function cancellationSuccessText(s: ServerCrossCheck, h: HedgingStats | undefined): string | null {
  if (!h || h.cancelled === 0) return null
  const confirmed = Math.min(s.cancelled, h.cancelled)
  return `server stopped ${confirmed} of ${h.cancelled} cancelled losers before answering (${((confirmed / h.cancelled) * 100).toFixed(1)}%)`
}

/** "127.0.0.1:4001 3.9, 127.0.0.1:4002 4.0": mean requests executing at each replica. */
export function utilisationText(s: ServerCrossCheck): string | null {
  if (!s.utilisation || s.utilisation.length === 0) return null
  return s.utilisation.map((u) => `${u.url.replace(/^https?:\/\//, '').replace(/\/$/, '')} ${u.busy.toFixed(2)}`).join(', ')
}

/** What the cancels cost the connections: an HTTP/2 cancel resets a stream, an HTTP/1.1 cancel closes the connection (the next attempt opens another). */
export function cancelCostText(p: PhaseResult): string | null {
  if (p.connectionsClosedByCancel === undefined || p.streamsResetByCancel === undefined) return null // saved before it was measured
  return `${p.streamsResetByCancel} streams reset, ${p.connectionsClosedByCancel} connections closed (${p.connectionsOpened} opened in the phase)${timeWaitText(p)}`
}

/** Linux keeps a socket this side closed in TIME_WAIT for 60 s, holding its local port. */
const TIME_WAIT_S = 60

/**
 * "; ~12,000 sockets in TIME_WAIT at this rate ...": every connection an
 * HTTP/1.1 cancel closes holds a local port for 60 s, so the closes per
 * second × 60 is what a longer run would hold. Said from a quarter of the
 * machine's port range, where another client's share or a longer run
 * would exhaust it; empty below that, or when the range is unknown.
 */
export function timeWaitText(p: PhaseResult): string {
  const ports = p.generator.ephemeralPorts
  const closed = p.connectionsClosedByCancel ?? 0
  if (!ports || closed === 0 || p.durationMs <= 0) return ''
  const perSecond = closed / (p.durationMs / 1000)
  const held = Math.round(perSecond * TIME_WAIT_S)
  if (held < ports / 4) return ''
  const rate = `${Math.round(perSecond)} closes/s × ${TIME_WAIT_S} s`
  const outcome =
    held >= ports
      ? `a run past ~${Math.round(ports / perSecond)} s at this rate runs out of local ports (EADDRNOTAVAIL)`
      : `${Math.round((held / ports) * 100)}% of them: a longer run beside other clients, or more cancels, would run out (EADDRNOTAVAIL)`
  return `; ~${held} sockets in TIME_WAIT at this rate (${rate}) against ${ports} local ports: ${outcome}; --http2 cancels by resetting a stream, --cancel ignore lets the loser finish on its connection`
}
