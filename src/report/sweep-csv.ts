/**
 * The sweep as CSV (-o csv and the saved `.csv`): one row per setting, the
 * frontier's columns with each figure's 95 % interval (decided in
 * sweep-frontier.ts), and the servers' own count of the setting's lane
 * (empty where they do not count per lane). A mix (--targets) then has one
 * row per target and setting, the same columns from the target's own
 * frontier (sweep-targets.ts), named in `target` (empty on the targets
 * merged): one table a spreadsheet filters by target.
 */
import { stringify } from 'csv-stringify/sync'
import { CSV_SAFETY } from '../core/csv-safety.js'
import type { Figure, SweepFrontier } from './sweep-frontier.js'
import type { LaneServerCount, SweepResult, SweepSetting } from '../results/sweep-result.js'
import { targetFrontiers } from './sweep-targets.js'

/** The figures with an interval: each gives a value column and its `_low` and `_high`. */
const FIGURES = [
  ['p50_ms', 'p50'],
  ['p99_ms', 'p99'],
  ['p99_9_ms', 'p99.9'],
  ['slow', 'slow'],
  ['extra_load_pct', 'extraLoadPct'],
  ['errors', 'errors'],
] as const

/** The servers' count of the lane, beside the figure derived from it. */
const SERVER = ['server_received', 'server_started', 'server_busy_ms', 'server_matches_client'] as const

export const SWEEP_CSV_COLUMNS = [
  'setting',
  'delay_ms',
  'percentile',
  'max_attempts',
  'budget_pct',
  'requests',
  ...FIGURES.flatMap(([column]) => [column, `${column}_low`, `${column}_high`] as const),
  'server_work_pct',
  'server_work_pct_low',
  'server_work_pct_high',
  ...SERVER,
  'slow_threshold_ms',
  'slow_plain',
  'errors_plain',
  'verdict',
  'on_frontier',
  'recommended',
  'partial',
  'target',
] as const

export function renderSweepCsv(sweep: SweepResult, frontier: SweepFrontier): string {
  const rows = [
    ...laneRows(sweep, sweep.settings, frontier, ''),
    ...targetFrontiers(sweep, frontier.maxExtraPct).flatMap((t, i) => laneRows(sweep, sweep.targets![i]!.settings, t.frontier, t.name, t.sentOnce)),
  ]
  return stringify([[...SWEEP_CSV_COLUMNS], ...rows], { cast: { boolean: (b) => String(b) }, ...CSV_SAFETY })
}

/** One row per setting of a frontier: the targets merged (`target` empty), or one target's lanes; a write sent once has no recommended setting. */
function laneRows(sweep: SweepResult, settings: readonly SweepSetting[], frontier: SweepFrontier, target: string, sentOnce = false): Cell[][] {
  const cells = (f: Figure): Cell[] => [f.value, f.interval?.[0] ?? '', f.interval?.[1] ?? '']
  return frontier.rows.map((r, i) => [
    r.label,
    r.delayMs,
    r.percentile ?? '',
    r.maxAttempts,
    r.budgetPct ?? '',
    r.requests,
    ...FIGURES.flatMap(([, key]) => cells(r[key])),
    ...(r.serverWorkPct ? cells(r.serverWorkPct) : ['', '', '']),
    ...serverCells(settings[i]?.server),
    frontier.slowThresholdMs,
    frontier.plain.slow.value,
    frontier.plain.errors.value,
    r.decision,
    r.onFrontier,
    !sentOnce && r.label === frontier.recommendation.label,
    sweep.partial,
    target,
  ])
}

type Cell = number | string | boolean

function serverCells(server: LaneServerCount | undefined): Cell[] {
  if (!server) return SERVER.map(() => '')
  return [server.received, server.started ?? '', server.busyMs ?? '', server.match]
}
