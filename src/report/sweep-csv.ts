/** The sweep as CSV (-o csv and the saved `.csv`): one row per setting, the frontier's columns with each figure's 95 % interval (decided in sweep-frontier.ts). */
import { stringify } from 'csv-stringify/sync'
import type { Figure, SweepFrontier } from './sweep-frontier.js'
import type { SweepResult } from '../results/sweep-result.js'

/** The figures with an interval: each gives a value column and its `_low` and `_high`. */
const FIGURES = [
  ['p50_ms', 'p50'],
  ['p99_ms', 'p99'],
  ['p99_9_ms', 'p99.9'],
  ['slow', 'slow'],
  ['extra_load_pct', 'extraLoadPct'],
  ['errors', 'errors'],
] as const

export const SWEEP_CSV_COLUMNS = [
  'setting',
  'delay_ms',
  'percentile',
  'max_attempts',
  'budget_pct',
  'requests',
  ...FIGURES.flatMap(([column]) => [column, `${column}_low`, `${column}_high`] as const),
  'slow_threshold_ms',
  'slow_plain',
  'errors_plain',
  'verdict',
  'on_frontier',
  'recommended',
  'partial',
] as const

export function renderSweepCsv(sweep: SweepResult, frontier: SweepFrontier): string {
  const cells = (f: Figure): Array<number | string> => [f.value, f.interval?.[0] ?? '', f.interval?.[1] ?? '']
  const rows = frontier.rows.map((r) => [
    r.label,
    r.delayMs,
    r.percentile ?? '',
    r.maxAttempts,
    r.budgetPct ?? '',
    r.requests,
    ...FIGURES.flatMap(([, key]) => cells(r[key])),
    frontier.slowThresholdMs,
    frontier.plain.slow.value,
    frontier.plain.errors.value,
    r.decision,
    r.onFrontier,
    r.label === frontier.recommendation.label,
    sweep.partial,
  ])
  return stringify([[...SWEEP_CSV_COLUMNS], ...rows], { cast: { boolean: (b) => String(b) } })
}
