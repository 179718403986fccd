/**
 * The verdict of a plain vs hedged run, decided once here; the text, HTML
 * and demo renderers only print it.
 *
 * - A phase that is mostly errors leads ("hedged: all 200 requests failed:
 *   500 Internal Server Error"), and no latency verdict is made from
 *   failures: their latencies are those of refusals and resets.
 * - Otherwise the headline is the tail bought and its price (p99.9 before ->
 *   after, for the extra load), qualified by compare's noise verdict, and
 *   every percentile (and the mean) that got worse beyond noise is named, so
 *   a better p99.9 cannot hide a worse p99.
 * - Errors that changed beyond noise between the phases are part of it.
 */
import { STATUS_CODES } from 'node:http'
import { comparePhases, type Comparison, type MetricRow } from './compare.js'
import { extraLoadPct } from '../results/extra-load.js'
import { formatMs } from '../core/duration.js'
import type { PhaseResult, RunResult } from '../results/run-result.js'
import { isOkStatus } from '../core/status.js'
import { statusLabel } from './status-label.js'

export interface HedgeVerdict {
  /** good: the headline tail improved and nothing got worse; bad: errors lead or something got worse. */
  tone: 'good' | 'bad' | 'neutral'
  /** One line: the figure the user came for, or the failures that make it meaningless. */
  headline: string
  /** Every further finding, most important first. */
  details: string[]
}

/** A phase with at least this share of failed requests leads the verdict with its errors. */
const MOSTLY_ERRORS = 0.5
/** The percentile the headline reports: the tail hedging is for. */
const HEADLINE = 'p99.9'

export function hedgeVerdict(plain: PhaseResult, hedged: PhaseResult, run: Pick<RunResult, 'label' | 'partial'> = { label: '', partial: false }): HedgeVerdict {
  const failing = [plain, hedged].filter(mostlyErrors)
  const empty = [plain, hedged].filter((p) => p.requests === 0)
  if (empty.length > 0) {
    return { tone: 'neutral', headline: `no verdict: no request finished in the ${empty.map((p) => p.name).join(' and ')} phase`, details: [] }
  }
  const c = comparePhases(plain, hedged, run)
  if (failing.length > 0) {
    const headline = `${failing.map(failureText).join('; ')}; no latency verdict from failures`
    return { tone: 'bad', headline, details: errorChange(c, plain, hedged) }
  }
  const worse = worseRows(c)
  const headRow = metric(c, HEADLINE)
  const details = [...(worse.length > 0 ? [`worse beyond noise: ${worse.map((m) => rowChange(m)).join(', ')}`] : []), ...errorChange(c, plain, hedged)]
  const errorsWorse = metric(c, 'error_rate')?.changes[1]?.verdict === 'worse'
  const tone = worse.length > 0 || errorsWorse ? 'bad' : headRow?.changes[1]?.verdict === 'better' ? 'good' : 'neutral'
  return { tone, headline: `${headlineText(plain, hedged)}${qualifier(headRow)}`, details }
}

/** "p99.9 1015.6 ms -> 33.1 ms (-96.7%) for +3.5% requests": the tail bought, and its price. */
export function headlineText(plain: PhaseResult, hedged: PhaseResult): string {
  const before = plain.latencyMs[HEADLINE]
  const after = hedged.latencyMs[HEADLINE]
  const extra = extraLoadPct(hedged)
  return `${HEADLINE} ${before.toFixed(1)} ms -> ${after.toFixed(1)} ms (${change(before, after)}) for ${extra >= 0 ? '+' : ''}${extra.toFixed(1)}% requests`
}

/** Relative change in percent, signed; "n/a" when the baseline is zero. */
export function change(before: number, after: number): string {
  if (before === 0) return after === 0 ? '0.0%' : 'n/a'
  const c = ((after - before) / before) * 100
  return `${c > 0 ? '+' : ''}${c.toFixed(1)}%`
}

/** What compare says of the headline change, when it is not a clear better/worse. */
function qualifier(row: MetricRow | undefined): string {
  const ch = row?.changes[1]
  if (!ch) return ''
  if (ch.verdict === 'within noise') return ' (within noise)'
  if (ch.verdict === 'not enough requests') return ` (not enough requests to judge: ${ch.note ?? ''})`
  return ''
}

function mostlyErrors(p: PhaseResult): boolean {
  return p.requests > 0 && p.errors / p.requests >= MOSTLY_ERRORS
}

/** "hedged: all 200 requests failed: 500 Internal Server Error" or "plain: 150 of 200 requests failed (75.0%): ...". */
function failureText(p: PhaseResult): string {
  const share = p.errors === p.requests ? `all ${p.requests} requests failed` : `${p.errors} of ${p.requests} requests failed (${((100 * p.errors) / p.requests).toFixed(1)}%)`
  return `${p.name}: ${share}: ${causes(p)}`
}

/** The failures by cause, most frequent first: "500 Internal Server Error", or "503 Service Unavailable x120, ECONNRESET x30". */
export function causes(p: PhaseResult): string {
  const failed = [
    // Failed statuses: HTTP 4xx/5xx, and gRPC's non-OK codes (1-16: "12 UNIMPLEMENTED"), which are below 100.
    ...Object.entries(p.statusCodes).filter(([code]) => !isOkStatus(Number(code))).map(([code, n]): [string, number] => [statusText(Number(code)), n]),
    ...Object.entries(p.errorKinds),
  ].sort(([, a], [, b]) => b - a)
  if (failed.length === 1) return failed[0]![0]
  const shown = failed.slice(0, 3).map(([what, n]) => `${what} x${n}`)
  return failed.length > 3 ? `${shown.join(', ')}, ${failed.length - 3} more kinds` : shown.join(', ')
}

function statusText(code: number): string {
  return code < 100 ? statusLabel(code) : `${code} ${STATUS_CODES[code] ?? ''}`.trim()
}

/** Latency rows (percentiles and mean) whose change is worse beyond noise. */
function worseRows(c: Comparison): MetricRow[] {
  return c.metrics.filter((m) => m.unit === 'ms' && m.changes[1]?.verdict === 'worse')
}

function metric(c: Comparison, key: string): MetricRow | undefined {
  return c.metrics.find((m) => m.metric === key)
}

/** "p99 18.6 ms -> 30.0 ms (+61.3%)". */
function rowChange(m: MetricRow): string {
  const [before, after] = [m.values[0] ?? 0, m.values[1] ?? 0]
  return `${m.metric} ${formatMs(before)} -> ${formatMs(after)} (${change(before, after)})`
}

/** "errors 0.0% -> 3.5% of requests, worse beyond noise (503 Service Unavailable x7)", when the error share changed beyond noise. */
function errorChange(c: Comparison, plain: PhaseResult, hedged: PhaseResult): string[] {
  const ch = metric(c, 'error_rate')?.changes[1]
  if (!ch || (ch.verdict !== 'worse' && ch.verdict !== 'better')) return []
  const share = (p: PhaseResult): string => `${((100 * p.errors) / p.requests).toFixed(1)}%`
  const worse = ch.verdict === 'worse'
  return [`errors ${share(plain)} -> ${share(hedged)} of requests, ${ch.verdict} beyond noise${worse ? ` (hedged: ${causes(hedged)})` : ''}`]
}
