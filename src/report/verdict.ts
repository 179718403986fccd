/**
 * The verdict of a plain vs hedged run, decided once here; the text, HTML,
 * demo and compare renderers only print it.
 *
 * It is decided from what the run can support:
 * - the requests over --slow, a count with an exact interval
 *   (stats/noise.ts countChange): usually the strongest evidence, since a
 *   1 % stall makes 40 slow requests in 4000 while p99.9 hangs on 4 of them;
 * - the tail percentiles (p99 and beyond) that n can estimate, as compare
 *   judges them (a percentile n cannot bound is left out, not guessed);
 * - the body (p10-p95 and the mean) and the errors, as the price beside the
 *   extra requests.
 * improved (green): the tail got better beyond noise and nothing else got
 * worse beyond noise; trade-off (amber): the tail got better and something
 * else got worse; not improved / errors rose (red). A phase that is mostly
 * errors leads with them, and no latency verdict is made from failures.
 * A hedged phase that sent no hedge says why instead of comparing noise.
 */
import { STATUS_CODES } from 'node:http'
import { comparePhases, type Comparison, type MetricChange, type MetricRow } from './compare.js'
import { countChange, requestsNeeded, type Interval } from '../stats/noise.js'
import { extraLoadPct } from '../results/extra-load.js'
import { formatMs, formatThreshold } from '../core/duration.js'
import type { HedgingStats, PhaseResult, RunResult } from '../results/run-result.js'
import { isOkStatus } from '../core/status.js'
import { statusLabel } from './status-label.js'
import { generatorImpact } from './generator-impact.js'

export type VerdictDecision = 'improved' | 'trade-off' | 'not improved' | 'errors rose' | 'failures' | 'no hedges' | 'too few requests' | 'no verdict'

export interface HedgeVerdict {
  decision: VerdictDecision
  /** good (green): improved; neutral (amber): a trade-off, or nothing to judge; bad (red): the tail did not improve, or errors rose. */
  tone: 'good' | 'bad' | 'neutral'
  /** One sentence a reader can repeat: what hedging bought, for what, and what it cost besides. */
  headline: string
  /** Every further finding, most important first. */
  details: string[]
}

const TONES: Record<VerdictDecision, HedgeVerdict['tone']> = {
  improved: 'good',
  'trade-off': 'neutral',
  'not improved': 'bad',
  'errors rose': 'bad',
  failures: 'bad',
  'no hedges': 'neutral',
  'too few requests': 'neutral',
  'no verdict': 'neutral',
}

/** A phase with at least this share of failed requests leads the verdict with its errors. */
const MOSTLY_ERRORS = 0.5
/** The tail hedging is for: percentiles beyond the usual p95 delay. */
const TAIL = new Set(['p99', 'p99.9', 'p99.99'])
/** The body, what every request pays when hedges add load; the median first, the one a reader knows. */
const BODY = ['p50', 'p10', 'p25', 'p75', 'p90', 'p95', 'mean']

export function hedgeVerdict(plain: PhaseResult, hedged: PhaseResult, run: Pick<RunResult, 'label' | 'partial'> = { label: '', partial: false }): HedgeVerdict {
  const empty = [plain, hedged].filter((p) => p.requests === 0)
  if (empty.length > 0) return make('no verdict', `no verdict: no request finished in the ${empty.map((p) => p.name).join(' and ')} phase`)
  const c = comparePhases(plain, hedged, run)
  const failing = [plain, hedged].filter(mostlyErrors)
  if (failing.length > 0) return make('failures', `${failing.map(failureText).join('; ')}; no latency verdict from failures`, errorChange(c, plain, hedged))
  if (hedged.hedging && hedged.hedging.hedgesSent === 0) return make('no hedges', noHedgeText(hedged, hedged.hedging))
  return latencyVerdict(c, plain, hedged)
}

function make(decision: VerdictDecision, headline: string, details: string[] = []): HedgeVerdict {
  return { decision, tone: TONES[decision], headline, details }
}

/** The tail, its price and what else moved, in one sentence. */
function latencyVerdict(c: Comparison, plain: PhaseResult, hedged: PhaseResult): HedgeVerdict {
  const slow = slowFinding(plain, hedged)
  const tail = c.metrics.filter((m) => TAIL.has(m.metric) && judged(m))
  const tailBetter = tail.filter((m) => verdictOf(m) === 'better').pop()
  const tailWorse = tail.filter((m) => verdictOf(m) === 'worse')
  const bodyWorse = BODY.flatMap((key) => c.metrics.filter((m) => m.metric === key && verdictOf(m) === 'worse'))
  const errorsRose = metric(c, 'error_rate')?.changes[1]?.verdict === 'worse'
  const cost = `for ${signed(extraLoadPct(hedged), 1)} requests`
  const prices = [
    ...(bodyWorse.length > 0 ? [bodyText(bodyWorse)] : []),
    ...(errorsRose ? [`errors rose from ${errorShare(plain)} to ${errorShare(hedged)} of requests`] : []),
  ]
  // The headline gives the figures of the tail rows and of the first body row; the details those of every other row that got worse.
  const impact = generatorImpact(plain, hedged)
  const details = [...worseList(c, new Set([...tailWorse, ...bodyWorse.slice(0, 1)])), ...errorChange(c, plain, hedged), ...(impact ? [impact] : [])]
  const sentence = (lead: string, others: string[]): string => `${lead}, ${cost}${others.length > 0 ? `; ${others.join(', ')}` : ''}.`
  const better = [...(slow?.verdict === 'better' ? [slow.text] : []), ...(tailBetter ? [tailClause(tailBetter)] : [])]
  if (better.length > 0) {
    // The tail improved; whatever got worse beside it is the trade-off.
    const others = [...(slow?.verdict === 'worse' ? [slow.text] : []), ...tailWorse.map(tailClause), ...prices]
    return make(errorsRose ? 'errors rose' : others.length > 0 ? 'trade-off' : 'improved', sentence(`Hedging ${better.join(' and ')}`, others), details)
  }
  const lastTail = tail[tail.length - 1]
  const evidence = [...(slow ? [slow.text] : []), ...(tailWorse.length > 0 ? tailWorse : lastTail ? [lastTail] : []).map(tailClause)]
  if (evidence.length === 0) return make(errorsRose ? 'errors rose' : 'too few requests', sentence(tooFewText(plain, hedged), prices), details)
  return make(errorsRose ? 'errors rose' : 'not improved', sentence(`Hedging did not improve the tail: ${evidence.join(', ')}`, prices), details)
}

interface SlowFinding {
  verdict: 'better' | 'worse' | 'within noise'
  text: string
}

/** The requests over --slow, judged by their exact interval; null when neither phase had one. */
function slowFinding(plain: PhaseResult, hedged: PhaseResult): SlowFinding | null {
  const [k1, n1, k2, n2] = [plain.slow.count, plain.requests, hedged.slow.count, hedged.requests]
  const change = countChange({ count: k1, n: n1 }, { count: k2, n: n2 })
  if (!change || k1 + k2 === 0) return null
  const over = `over ${formatThreshold(plain.slow.thresholdMs)}`
  const [low, high] = change.difference
  const verdict = high < 0 ? 'better' : low > 0 ? 'worse' : 'within noise'
  const ci = ratioText(k1, n1, k2, n2, change.ratio)
  if (verdict === 'better') {
    const what = n1 === n2 ? `removed ${k1 - k2} of ${k1} requests ${over}` : `cut requests ${over} from ${k1} of ${n1} to ${k2} of ${n2}`
    return { verdict, text: `${what} (${ci})` }
  }
  if (verdict === 'worse') return { verdict, text: `requests ${over} rose from ${k1} to ${k2}${k1 > 0 ? ` (${ci})` : ''}` }
  return { verdict, text: `requests ${over} ${k1} -> ${k2} (within noise${k1 > 0 ? `: ${ci}` : ''})` }
}

/** "-83 %, 95 % CI -94 % to -63 %": the change per request and its exact interval. */
function ratioText(k1: number, n1: number, k2: number, n2: number, ratio: Interval): string {
  const point = (k2 / n2 / (k1 / n1) - 1) * 100
  const [low, high] = ratio.map((r) => (r - 1) * 100) as [number, number]
  // Finite: a ratio is given only when plain had slow requests (k1 > 0), so the hedged share's upper bound is below 1.
  return `${signed(point)}, 95 % CI ${signed(low)} to ${signed(high)}`
}

/** "cut p99 from 1.00 s to 36.3 ms", "p99.9 rose from …", "p99 1.00 s -> 1.00 s (within noise)". */
function tailClause(m: MetricRow): string {
  const [a, b] = [formatMs(m.values[0] ?? 0), formatMs(m.values[1] ?? 0)]
  const v = verdictOf(m)
  if (v === 'better') return `cut ${m.metric} from ${a} to ${b}`
  if (v === 'worse') return `${m.metric} rose from ${a} to ${b}`
  return `${m.metric} ${a} -> ${b} (within noise)`
}

/** "the median rose 900 µs (+6 %), as did p90, p95 and the mean": the first by its figures, the rest by name (the details give theirs). */
function bodyText([first, ...rest]: MetricRow[]): string {
  const ch = first!.changes[1]!
  const named = `${bodyName(first!)} rose ${formatMs(ch.abs)}${ch.pct === null ? '' : ` (${signed(ch.pct)})`}`
  if (rest.length === 0) return named
  const names = rest.map(bodyName)
  return `${named}, as did ${names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}` : names[0]}`
}

function bodyName(m: MetricRow): string {
  return m.metric === 'p50' ? 'the median' : m.metric === 'mean' ? 'the mean' : m.metric
}

/** Nothing to judge the tail by: no slow request, and too few requests for p99 to be bounded. */
function tooFewText(plain: PhaseResult, hedged: PhaseResult): string {
  const n = Math.min(plain.requests, hedged.requests)
  return `Too few requests to judge the tail: none was over ${formatThreshold(plain.slow.thresholdMs)}, and p99 needs ${requestsNeeded(99)} requests a phase (this run has ${n})`
}

/** Why a hedged phase sent nothing: usually a delay above every answer (a warm-up p95 taken during a stall). */
function noHedgeText(hedged: PhaseResult, h: HedgingStats): string {
  const delay = h.adaptive ? h.delayUsedMs.min : h.delayMs
  if (delay >= hedged.latencyMs.max)
    return `no hedge was sent: the delay ${formatMs(delay)} was above every answer (the slowest took ${formatMs(hedged.latencyMs.max)})`
  const refused = [
    ...(h.budgetDenied > 0 ? [`the budget refused ${h.budgetDenied}`] : []),
    ...(h.deadlineSuppressed > 0 ? [`the deadline left no time for ${h.deadlineSuppressed}`] : []),
    ...(h.suppressed && h.suppressed.overload + h.suppressed.errorRate + h.suppressed.targetBusy > 0 ? ['the saturation gate held them back'] : []),
    ...(h.unsent > 0 ? [`${h.unsent} never reached the wire`] : []),
  ]
  return `no hedge was sent (delay ${formatMs(delay)})${refused.length > 0 ? `: ${refused.join(', ')}` : ''}`
}

function judged(m: MetricRow): boolean {
  const v = verdictOf(m)
  return v !== undefined && v !== 'not enough requests'
}

function verdictOf(m: MetricRow): MetricChange['verdict'] | undefined {
  return m.changes[1]?.verdict
}

/** -83 -> "-83 %", 6.2 -> "+6 %", 0.4 -> "+0.4 %"; `digits` fixes the decimals (the extra load keeps one). */
function signed(pct: number, digits?: number): string {
  const d = digits ?? (Math.abs(pct) < 1 ? 1 : 0)
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(d)} %`
}

/** Relative change in percent, signed; "n/a" when the baseline is zero. */
export function change(before: number, after: number): string {
  if (before === 0) return after === 0 ? '0.0%' : 'n/a'
  const c = ((after - before) / before) * 100
  return `${c > 0 ? '+' : ''}${c.toFixed(1)}%`
}

/** Of a phase with requests (an empty one gets no verdict before this is asked). */
function mostlyErrors(p: PhaseResult): boolean {
  return p.errors / p.requests >= MOSTLY_ERRORS
}

/** "hedged: all 200 requests failed: 500 Internal Server Error" or "plain: 150 of 200 requests failed (75.0%): ...". */
function failureText(p: PhaseResult): string {
  const share =
    p.errors === p.requests
      ? `all ${p.requests} requests failed`
      : `${p.errors} of ${p.requests} requests failed (${((100 * p.errors) / p.requests).toFixed(1)}%)`
  return `${p.name}: ${share}: ${causes(p)}`
}

/** The failures by cause, most frequent first: "500 Internal Server Error", or "503 Service Unavailable x120, ECONNRESET x30". */
export function causes(p: PhaseResult): string {
  const failed = [
    // Failed statuses: HTTP 4xx/5xx, and gRPC's non-OK codes (1-16: "12 UNIMPLEMENTED"), which are below 100.
    ...Object.entries(p.statusCodes)
      .filter(([code]) => !isOkStatus(Number(code)))
      .map(([code, n]): [string, number] => [statusText(Number(code)), n]),
    ...Object.entries(p.errorKinds),
  ].sort(([, a], [, b]) => b - a)
  if (failed.length === 1) return failed[0]![0]
  const shown = failed.slice(0, 3).map(([what, n]) => `${what} x${n}`)
  return failed.length > 3 ? `${shown.join(', ')}, ${failed.length - 3} more kinds` : shown.join(', ')
}

function statusText(code: number): string {
  return code < 100 ? statusLabel(code) : `${code} ${STATUS_CODES[code] ?? ''}`.trim()
}

/** "worse beyond noise: p90 10.1 ms -> 10.7 ms (+6.0%), …": the figures of the rows the headline names without them. */
function worseList(c: Comparison, inHeadline: Set<MetricRow>): string[] {
  const worse = c.metrics.filter((m) => m.unit === 'ms' && verdictOf(m) === 'worse' && !inHeadline.has(m))
  return worse.length > 0 ? [`worse beyond noise: ${worse.map(rowChange).join(', ')}`] : []
}

function metric(c: Comparison, key: string): MetricRow | undefined {
  return c.metrics.find((m) => m.metric === key)
}

/** "p99 18.6 ms -> 30.0 ms (+61.3%)". */
function rowChange(m: MetricRow): string {
  const [before, after] = [m.values[0] ?? 0, m.values[1] ?? 0]
  return `${m.metric} ${formatMs(before)} -> ${formatMs(after)} (${change(before, after)})`
}

const errorShare = (p: PhaseResult): string => `${((100 * p.errors) / p.requests).toFixed(1)}%`

/** "errors 0.0% -> 3.5% of requests, worse beyond noise (503 Service Unavailable x7)", when the error share changed beyond noise. */
function errorChange(c: Comparison, plain: PhaseResult, hedged: PhaseResult): string[] {
  const ch = metric(c, 'error_rate')?.changes[1]
  if (!ch || (ch.verdict !== 'worse' && ch.verdict !== 'better')) return []
  const worse = ch.verdict === 'worse'
  return [`errors ${errorShare(plain)} -> ${errorShare(hedged)} of requests, ${ch.verdict} beyond noise${worse ? ` (hedged: ${causes(hedged)})` : ''}`]
}
