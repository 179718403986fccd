/** The sweep as CSV (-o csv and the saved `.csv`): one row per setting, the frontier's columns (decided in sweep-frontier.ts). */
import { stringify } from 'csv-stringify/sync'
import type { SweepFrontier } from './sweep-frontier.js'
import type { SweepResult } from '../results/sweep-result.js'

export const SWEEP_CSV_COLUMNS = [
  'setting',
  'delay_ms',
  'percentile',
  'p50_ms',
  'p99_ms',
  'p99_9_ms',
  'slow_threshold_ms',
  'slow_hedged',
  'slow_plain',
  'extra_load_pct',
  'errors_hedged',
  'errors_plain',
  'verdict',
  'on_frontier',
  'recommended',
  'partial',
] as const

export function renderSweepCsv(sweep: SweepResult, frontier: SweepFrontier): string {
  const rows = frontier.rows.map((r) => [
    r.label,
    r.delayMs,
    r.percentile ?? '',
    r.p50,
    r.p99,
    r['p99.9'],
    r.slow.thresholdMs,
    r.slow.hedged,
    r.slow.plain,
    r.extraLoadPct,
    r.errors.hedged,
    r.errors.plain,
    r.decision,
    r.onFrontier,
    r.label === frontier.recommendation.label,
    sweep.partial,
  ])
  return stringify([[...SWEEP_CSV_COLUMNS], ...rows], { cast: { boolean: (b) => String(b) } })
}
