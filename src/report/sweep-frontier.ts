/**
 * What a sweep says, decided once here (the renderers only print it): one
 * row per setting with its tail and its cost, the settings no other beats on
 * both (the frontier), and the setting to deploy under a cap on extra load.
 * Whether a setting improved the tail beyond noise is the verdict's decision
 * (verdict.ts), the same a single run reports.
 */
import { formatMs } from '../core/duration.js'
import { extraLoadPct } from '../results/extra-load.js'
import type { SweepResult, SweepSetting } from '../results/sweep-result.js'
import { hedgeVerdict, type VerdictDecision } from './verdict.js'

/** The seeds' rule of thumb: hedging is worth a few percent more requests. */
export const DEFAULT_MAX_EXTRA_PCT = 5

/** Decisions in which the tail improved beyond noise (a trade-off too: something else paid for it). */
const TAIL_IMPROVED: ReadonlySet<VerdictDecision> = new Set(['improved', 'trade-off'])

export interface FrontierRow {
  label: string
  percentile: number | null
  delayMs: number
  /** The hedged phase's latency, ms. */
  p50: number
  p99: number
  'p99.9': number
  /** Requests over --slow, hedged and plain. */
  slow: { hedged: number; plain: number; thresholdMs: number }
  /** Hedges sent per request, %. */
  extraLoadPct: number
  errors: { hedged: number; plain: number }
  decision: VerdictDecision
  headline: string
  /** No other setting has a tail (p99, then requests over --slow) and an extra load both at least as good, one of them better. */
  onFrontier: boolean
}

export interface Recommendation {
  /** The chosen setting's label; null: no hedging recommended. */
  label: string | null
  sentence: string
}

export interface SweepFrontier {
  rows: FrontierRow[]
  maxExtraPct: number
  recommendation: Recommendation
}

export function sweepFrontier(sweep: SweepResult, maxExtraPct = DEFAULT_MAX_EXTRA_PCT): SweepFrontier {
  const rows = sweep.settings.map(rowOf)
  for (const row of rows) row.onFrontier = !rows.some((other) => other !== row && dominates(other, row))
  return { rows, maxExtraPct, recommendation: recommend(rows, maxExtraPct, sweep.partial) }
}

function rowOf(setting: SweepSetting): FrontierRow {
  const { plain, hedged } = setting.result.phases
  if (!plain || !hedged) throw new Error(`sweep setting ${setting.label} has no plain and hedged phase`)
  const verdict = hedgeVerdict(plain, hedged, setting.result)
  return {
    label: setting.label,
    percentile: setting.percentile,
    delayMs: setting.delayMs,
    p50: hedged.latencyMs.p50,
    p99: hedged.latencyMs.p99,
    'p99.9': hedged.latencyMs['p99.9'],
    slow: { hedged: hedged.slow.count, plain: plain.slow.count, thresholdMs: hedged.slow.thresholdMs },
    extraLoadPct: extraLoadPct(hedged),
    errors: { hedged: hedged.errors, plain: plain.errors },
    decision: verdict.decision,
    headline: verdict.headline,
    onFrontier: false,
  }
}

/** -1: a's tail is better; compared on p99, then on the requests over --slow. */
function tailOrder(a: FrontierRow, b: FrontierRow): number {
  return a.p99 - b.p99 || a.slow.hedged - b.slow.hedged
}

function dominates(a: FrontierRow, b: FrontierRow): boolean {
  const tail = tailOrder(a, b)
  const cost = a.extraLoadPct - b.extraLoadPct
  return tail <= 0 && cost <= 0 && (tail < 0 || cost < 0)
}

function recommend(rows: FrontierRow[], maxExtraPct: number, partial: boolean): Recommendation {
  const improved = rows.filter((r) => TAIL_IMPROVED.has(r.decision))
  const within = improved.filter((r) => r.extraLoadPct <= maxExtraPct).sort((a, b) => tailOrder(a, b) || a.extraLoadPct - b.extraLoadPct)
  const of = partial ? ` (of the ${rows.length} settings finished)` : ''
  const best = within[0]
  if (best) return { label: best.label, sentence: `Recommended${of}: --hedge-delay ${best.label}${delayText(best)}, within --max-extra ${maxExtraPct} %: ${best.headline}` }
  if (improved.length > 0) {
    const cheapest = [...improved].sort((a, b) => a.extraLoadPct - b.extraLoadPct)[0]!
    return { label: null, sentence: `No hedging recommended within --max-extra ${maxExtraPct} %${of}: the tail improved only at a higher cost (the cheapest, ${cheapest.label}, sent ${cheapest.extraLoadPct} % extra requests).` }
  }
  return { label: null, sentence: `No hedging recommended${of}: no delay improved the tail beyond noise (as when the slowness is shared by every replica, so a hedge meets it too).` }
}

function delayText(row: FrontierRow): string {
  return row.percentile === null ? '' : ` (${formatMs(row.delayMs)}, the warm-up's p${row.percentile})`
}
