/**
 * What a sweep says, decided once here (the renderers only print it): one
 * row per setting with its tail and its cost, each figure with its 95 %
 * interval (stats/noise.ts: order-statistic bounds for percentiles,
 * Clopper-Pearson for counts), the settings no other beats on both (the
 * frontier), and the setting to deploy under a cap on extra load. Two lanes
 * are told apart as compare tells two runs apart (the same tests of
 * noise.ts: a percentile's difference, the exact test of the slow count, the
 * Poisson test of extra load), so a frontier agrees with the verdict. Whether a
 * setting improved the tail beyond noise is the verdict's decision
 * (verdict.ts), the same a single run reports.
 */
import { formatMs } from '../core/duration.js'
import { extraLoadPct } from '../results/extra-load.js'
import type { PhaseResult } from '../results/run-result.js'
import { settingRun, type LaneServerCount, type SweepResult, type SweepSetting } from '../results/sweep-result.js'
import { tryDecodeHistogram, type Histogram } from '../stats/histogram.js'
import { clopperPearson, countChange, percentileBounds, percentileDifference, rateDifference, type Interval } from '../stats/noise.js'
import { hedgeVerdict, type VerdictDecision } from './verdict.js'

/** The seeds' rule of thumb: hedging is worth a few percent more requests. */
export const DEFAULT_MAX_EXTRA_PCT = 5

/** Decisions in which the tail improved beyond noise (a trade-off too: something else paid for it). */
const TAIL_IMPROVED: ReadonlySet<VerdictDecision> = new Set(['improved', 'trade-off'])

/** A measured figure and its 95 % interval; null: too few requests to bound it. */
export interface Figure {
  value: number
  interval: Interval | null
}

/** One lane's figures: the hedged lane of a setting, or the plain lane. */
export interface LaneFigures {
  requests: number
  /** Latency, ms. */
  p50: Figure
  p99: Figure
  'p99.9': Figure
  /** Requests over --slow. */
  slow: Figure
  /** Hedges sent per request, %. */
  extraLoadPct: Figure
  /** Failed requests. */
  errors: Figure
  /**
   * Extra work at the server, by the server's own count of the lane: the
   * requests it executed (started; received when it does not report starts)
   * beyond the lane's originals, per original, %. null: the server does not
   * count per lane (or was not read).
   */
  serverWorkPct: Figure | null
}

export interface FrontierRow extends LaneFigures {
  label: string
  delayLabel: string
  percentile: number | null
  delayMs: number
  maxAttempts: number
  budgetPct: number | null
  decision: VerdictDecision
  headline: string
  /** No other setting, nor the plain lane, is distinguishably better on tail (p99, p99.9, p99.99, requests over --slow) or cost without being distinguishably worse on either. */
  onFrontier: boolean
}

export interface Recommendation {
  /** The chosen setting's label; null: no hedging recommended. */
  label: string | null
  /** The settings within --max-extra whose tail is not distinguishable from the chosen one's. */
  indistinguishable: string[]
  sentence: string
}

export interface SweepFrontier {
  /** The plain lane: what no hedging gives, beside the rows. */
  plain: LaneFigures
  rows: FrontierRow[]
  slowThresholdMs: number
  maxExtraPct: number
  recommendation: Recommendation
}

export function sweepFrontier(sweep: SweepResult, maxExtraPct = DEFAULT_MAX_EXTRA_PCT): SweepFrontier {
  const plainPhase = sweep.run.phases.plain
  if (!plainPhase) return stoppedBeforeWindow(sweep, maxExtraPct)
  const plain = laneFigures(plainPhase, 1, sweep.plainServer)
  const rows = sweep.settings.map((s) => rowOf(sweep, s))
  const lanes = new Map<LaneFigures, Measured>([
    [plain, measured(plainPhase)],
    ...sweep.settings.map((s, i): [LaneFigures, Measured] => [rows[i]!, measured(s.hedged)]),
  ])
  const sides = (a: LaneFigures, b: LaneFigures): [Measured, Measured] => [lanes.get(a)!, lanes.get(b)!]
  for (const row of rows) row.onFrontier = ![plain, ...rows].some((other) => other !== row && dominates(...sides(other, row)))
  const tailTie = (a: FrontierRow, b: FrontierRow): boolean => tailOrder(...sides(a, b)) === 0
  return { plain, rows, slowThresholdMs: plainPhase.slow.thresholdMs, maxExtraPct, recommendation: recommend(rows, plain, maxExtraPct, sweep, tailTie) }
}

/** Interrupted in the warm-up: no lane ran, nothing to weigh. */
function stoppedBeforeWindow(sweep: SweepResult, maxExtraPct: number): SweepFrontier {
  const none: Figure = { value: 0, interval: null }
  const plain: LaneFigures = { requests: 0, p50: none, p99: none, 'p99.9': none, slow: none, extraLoadPct: none, errors: none, serverWorkPct: null }
  const sentence = 'Nothing to recommend: the sweep was stopped in its warm-up, before any setting ran.'
  return { plain, rows: [], slowThresholdMs: sweep.run.config.slowMs, maxExtraPct, recommendation: { label: null, indistinguishable: [], sentence } }
}

/** What two lanes are told apart by. */
interface Measured {
  phase: PhaseResult
  histogram: Histogram | null
}

function measured(phase: PhaseResult): Measured {
  return { phase, histogram: tryDecodeHistogram(phase.histogram) }
}

/**
 * `maxAttempts`: the hedges a request may send are maxAttempts - 1, the
 * trials the extra load's count is out of. `server`: the servers' count of
 * the lane, when they count lanes apart.
 */
export function laneFigures(phase: PhaseResult, maxAttempts: number, server?: LaneServerCount): LaneFigures {
  const histogram = tryDecodeHistogram(phase.histogram)
  const percentile = (p: number, value: number): Figure => ({ value, interval: histogram ? percentileBounds(histogram, p) : null })
  const n = phase.requests
  const slots = Math.max(1, maxAttempts - 1)
  const extra = extraLoadPct(phase)
  const calls = phase.calls?.requests ?? n
  return {
    requests: n,
    p50: percentile(50, phase.latencyMs.p50),
    p99: percentile(99, phase.latencyMs.p99),
    'p99.9': percentile(99.9, phase.latencyMs['p99.9']),
    slow: countFigure(phase.slow.count, n),
    extraLoadPct: { value: extra, interval: scaled(countInterval(phase.hedging?.hedgesSent ?? 0, calls * slots), 100 / Math.max(1, calls)) },
    errors: countFigure(phase.errors, n),
    serverWorkPct: server ? serverWork(phase, server, slots) : null,
  }
}

/**
 * The copies the server executed beyond one per original that reached it,
 * per original, % (with the count's interval as extra load's): an original
 * is the client's attempt that is no hedge, so requests an interruption cut
 * off still count on both sides. Below 0 (the server ran fewer than it
 * received: turned away, or cancelled while queued) it has no interval.
 */
function serverWork(phase: PhaseResult, server: LaneServerCount, slots: number): Figure {
  const originals = phase.attempts - (phase.hedging?.hedgesSent ?? 0)
  const extra = (server.started ?? server.received) - originals
  if (originals <= 0) return { value: 0, interval: null }
  const value = round((extra / originals) * 100)
  return { value, interval: extra < 0 ? null : scaled(countInterval(extra, originals * slots), 100 / originals) }
}

/** k events of n trials, with the Clopper-Pearson interval of their count. */
function countFigure(k: number, n: number): Figure {
  return { value: k, interval: scaled(countInterval(k, n), 1) }
}

/** The 95 % interval of a count k of n trials, in events. */
function countInterval(k: number, n: number): Interval | null {
  if (n <= 0) return null
  const [low, high] = clopperPearson(Math.min(k, n), n)
  return [low * n, high * n]
}

function scaled(interval: Interval | null, by: number): Interval | null {
  return interval && [round(interval[0] * by), round(interval[1] * by)]
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000
}

function rowOf(sweep: SweepResult, setting: SweepSetting): FrontierRow {
  const run = settingRun(sweep, setting)
  const verdict = hedgeVerdict(run.phases.plain!, setting.hedged, run)
  return {
    label: setting.label,
    delayLabel: setting.delayLabel,
    percentile: setting.percentile,
    delayMs: setting.delayMs,
    maxAttempts: setting.maxAttempts,
    budgetPct: setting.budgetPct,
    ...laneFigures(setting.hedged, setting.maxAttempts, setting.server),
    decision: verdict.decision,
    headline: verdict.headline,
    onFrontier: false,
  }
}

/** The sign of a difference's 95 % interval: -1 wholly below 0, 1 wholly above, 0 not distinguishable from 0 (or not bounded). */
function sign(interval: Interval | null | undefined): -1 | 0 | 1 {
  if (!interval) return 0
  return interval[1] < 0 ? -1 : interval[0] > 0 ? 1 : 0
}

/** The tail figures the verdict reads (verdict.ts): these percentiles, and the requests over --slow. */
const TAIL_PERCENTILES = [99, 99.9, 99.99]

/**
 * -1: a's tail is distinguishably better (some tail figure better, none
 * worse), 1: worse, 0: not told apart, or better on one figure and worse on
 * another: as the verdict reads a tail, so that a setting it calls improved
 * is never beaten by the plain lane on the tail.
 */
function tailOrder(a: Measured, b: Measured): -1 | 0 | 1 {
  const percentiles = TAIL_PERCENTILES.map((p) => (a.histogram && b.histogram ? percentileDifference(b.histogram, a.histogram, p) : null))
  const slow = countChange({ count: b.phase.slow.count, n: b.phase.requests }, { count: a.phase.slow.count, n: a.phase.requests })
  const signs = [...percentiles, slow?.difference].map(sign)
  const better = signs.includes(-1)
  const worse = signs.includes(1)
  return better === worse ? 0 : better ? -1 : 1
}

/** -1: a costs distinguishably less: hedges per call, as Poisson counts. */
function costOrder(a: Measured, b: Measured): -1 | 0 | 1 {
  const rate = (m: Measured): { count: number; exposure: number } => ({
    count: m.phase.hedging?.hedgesSent ?? 0,
    exposure: m.phase.calls?.requests ?? m.phase.requests,
  })
  return sign(rateDifference(rate(b), rate(a)))
}

/** a beats b: distinguishably better on tail or cost, and distinguishably worse on neither. */
function dominates(a: Measured, b: Measured): boolean {
  const tail = tailOrder(a, b)
  const cost = costOrder(a, b)
  return tail <= 0 && cost <= 0 && (tail < 0 || cost < 0)
}

/** By the measured tail: p99, then requests over --slow, then extra load. */
function byTail(a: FrontierRow, b: FrontierRow): number {
  return a.p99.value - b.p99.value || a.slow.value - b.slow.value || a.extraLoadPct.value - b.extraLoadPct.value
}

function recommend(
  rows: FrontierRow[],
  plain: LaneFigures,
  maxExtraPct: number,
  sweep: SweepResult,
  tailTie: (a: FrontierRow, b: FrontierRow) => boolean,
): Recommendation {
  const improved = rows.filter((r) => TAIL_IMPROVED.has(r.decision))
  const within = improved.filter((r) => r.extraLoadPct.value <= maxExtraPct).sort(byTail)
  const of = sweep.partial ? ' (interrupted: on what was measured)' : ''
  const best = within[0]
  if (best) {
    const close = within.slice(1).filter((r) => tailTie(r, best))
    const others =
      close.length === 0
        ? ''
        : ` Not distinguishable from it: ${close.map((r) => `${r.label} (p99 ${formatMs(r.p99.value)}, ${pct(r.extraLoadPct.value)} extra)`).join(', ')}.`
    const sentence =
      `Recommended${of}: ${settingFlags(best)}${delayText(best)}: p99 ${formatMs(best.p99.value)}${ms(best.p99.interval)} against ${formatMs(plain.p99.value)}${ms(plain.p99.interval)} without hedging, ` +
      `for ${pct(best.extraLoadPct.value)}${pcts(best.extraLoadPct.interval)} extra load (within --max-extra ${maxExtraPct} %).${others}`
    return { label: best.label, indistinguishable: close.map((r) => r.label), sentence }
  }
  if (improved.length > 0) {
    const cheapest = [...improved].sort((a, b) => a.extraLoadPct.value - b.extraLoadPct.value)[0]!
    return {
      label: null,
      indistinguishable: [],
      sentence: `No hedging recommended within --max-extra ${maxExtraPct} %${of}: the tail improved only at a higher cost (the cheapest, ${cheapest.label}, sent ${pct(cheapest.extraLoadPct.value)} extra requests).`,
    }
  }
  return {
    label: null,
    indistinguishable: [],
    sentence: `No hedging recommended${of}: no setting improved the tail beyond noise (as when the slowness is shared by every replica, so a hedge meets it too).`,
  }
}

/** The flags that give a setting to a run: what to deploy, in hedgebench's words. */
export function settingFlags(s: Pick<SweepSetting, 'delayLabel' | 'maxAttempts' | 'budgetPct'>): string {
  return `--hedge-delay ${s.delayLabel} --max-attempts ${s.maxAttempts} --hedge-budget ${s.budgetPct === null ? 'off' : `${s.budgetPct}%`}`
}

function delayText(row: FrontierRow): string {
  return row.percentile === null ? '' : ` (${formatMs(row.delayMs)}, the warm-up's p${row.percentile})`
}

const pct = (v: number): string => `${v.toFixed(1)} %`
const ms = (i: Interval | null): string => (i ? ` [${formatMs(i[0])}, ${formatMs(i[1])}]` : '')
const pcts = (i: Interval | null): string => (i ? ` [${i[0].toFixed(1)}, ${i[1].toFixed(1)}]` : '')
