/**
 * The CSV summary (-o csv and the saved `.csv`): one row per phase and one
 * per phase x replica, every figure a column, so a spreadsheet can chart
 * runs side by side. csv-stringify does the RFC 4180 quoting
 * and escapes formulas (core/csv-safety.ts).
 *
 * Every row carries the run's identity (label, start time, target, and
 * whether it was interrupted), so rows pasted together from several runs
 * stay apart. Every share is a percentage, named `_pct` in its header.
 */
import { stringify } from 'csv-stringify/sync'
import { CSV_SAFETY } from '../core/csv-safety.js'
import { redactUrl } from '../core/redact.js'
import { extraLoadPct, extraLoadPctOf } from '../results/extra-load.js'
import { PERCENTILE_KEYS, PHASE_NAMES } from '../results/run-result.js'
import type { Figures, GcPauses, GrpcClientResult, HedgingStats, LatencySummary, PhaseResult, ReplicaFigures, RunResult } from '../results/run-result.js'
import { labelledStatuses } from './status-label.js'
import { askedRate } from './asked-rate.js'
import { protocolIds, replicaProtocol } from '../results/wire-protocol.js'
import { NOT_HEDGED, targetDelayMs, targetPhases } from './target-rows.js'

const LATENCY_KEYS: ReadonlyArray<keyof LatencySummary> = ['min', 'mean', 'stddev', ...PERCENTILE_KEYS, 'max']

const HEDGING_COLUMNS = [
  'hedges_sent',
  'unsent',
  'unsent_originals',
  'extra_load_pct',
  'trigger_rate_pct',
  'hedge_wins',
  'original_wins',
  'cancelled',
  'late_discarded',
  'budget_denied',
  'deadline_suppressed',
  'delay_ms',
  'suppressed_overload',
  'suppressed_error_rate',
  'suppressed_target_busy',
  'suppressed_pushback',
  'loser_runtime_p99_ms',
] as const

/** Identity of the run, the same on every row. */
const RUN_COLUMNS = ['run_label', 'started_at', 'target', 'partial'] as const
/** The generator's GC pauses, per phase (empty on replica rows and in runs saved before they were measured). */
const GC_COLUMNS = ['gc_count', 'gc_young', 'gc_total_ms', 'gc_max_ms'] as const

export const CSV_SUMMARY_COLUMNS: readonly string[] = [
  ...RUN_COLUMNS,
  'scope',
  'phase',
  'replica',
  'requests',
  'attempts',
  'ok',
  'errors',
  'error_rate_pct',
  'interrupted',
  'rps',
  'bytes',
  'duration_ms',
  ...LATENCY_KEYS.map((k) => `${k}_ms`),
  'slow_threshold_ms',
  'slow_count',
  'status_codes',
  'error_kinds',
  'error_messages',
  'connections_opened',
  'wins',
  ...HEDGING_COLUMNS,
  'ejections',
  ...GC_COLUMNS,
  // What the phase's cancels cost the connections (phase rows; empty in replica rows and in runs saved before).
  'connections_closed_by_cancel',
  'streams_reset_by_cancel',
  // HTTP/2 streams a GOAWAY or REFUSED_STREAM left unprocessed, sent again (phase rows).
  'streams_resent_after_goaway',
  // Open loop (-q), phase rows: the rate asked for, sends that left after their intended start, and the
  // uncorrected service time beside the corrected latency above (empty in a closed loop).
  'rate_asked',
  'late_sends',
  'service_p50_ms',
  'service_p99_ms',
  // What the connections spoke (http/1.1, h2, h2c; "unknown" in runs saved before it was recorded): the replica's on
  // its rows, the run's distinct ones on phase rows.
  'protocol',
  // A mix (--targets): the target a "target" row is of (GET /a); empty on the others.
  'request',
  // --skip-first: the requests a phase sent first and left out of every figure; empty without it and on replica rows.
  'skipped',
]

type Cell = string | number

export function renderCsvSummary(result: RunResult): string {
  const rows: Cell[][] = [[...CSV_SUMMARY_COLUMNS]]
  const run = runCells(result)
  for (const name of PHASE_NAMES) {
    const phase = result.phases[name]
    if (!phase) continue
    rows.push([...run, ...phaseRow(phase), ...openLoopCells(phase, askedRate(result)), protocolIds(result), '', phase.skipped ?? ''])
    for (const replica of phase.replicas)
      rows.push([...run, ...replicaRow(replica, phase), ...openLoopCells(null, null), replicaProtocol(result, replica.url), '', ''])
  }
  for (const { target, sentOnce, phase } of targetPhases(result))
    rows.push([...run, ...phaseRow(phase, 'target', sentOnce), ...openLoopCells(phase, askedRate(result)), protocolIds(result), target, phase.skipped ?? ''])
  if (result.grpcClient) for (const row of grpcClientRows(result.grpcClient)) rows.push([...run, ...row])
  return stringify(rows, CSV_SAFETY)
}

/**
 * The calls of --hedge-by grpc-js as a phase named "grpc-js" and its
 * replicas (attempts from channelz): the figures the client gives, the
 * columns it has no figure for left empty.
 */
function grpcClientRows(g: GrpcClientResult): Cell[][] {
  const row = (cells: Record<string, Cell>): Cell[] => CSV_SUMMARY_COLUMNS.slice(RUN_COLUMNS.length).map((column) => cells[column] ?? '')
  const gc = g.generator?.gc
  const phase = row({
    scope: 'phase',
    phase: 'grpc-js',
    requests: g.requests,
    attempts: g.attempts,
    ok: g.ok,
    errors: g.errors,
    error_rate_pct: g.requests > 0 ? round((100 * g.errors) / g.requests, 4) : 0,
    rps: round(g.rps, 3),
    duration_ms: round(g.durationMs, 3),
    ...Object.fromEntries(LATENCY_KEYS.map((k) => [`${k}_ms`, g.latencyMs[k].toFixed(3)])),
    slow_threshold_ms: round(g.slow.thresholdMs, 3),
    slow_count: g.slow.count,
    status_codes: counts(labelledStatuses(g.statusCodes)),
    hedges_sent: g.hedgesSent,
    extra_load_pct: round(extraLoadPctOf(g.hedgesSent, g.requests), 3),
    ...(g.asked.maxAttempts > 1 ? { delay_ms: g.asked.hedgingDelayMs.toFixed(3) } : {}),
    ...(gc ? Object.fromEntries(GC_COLUMNS.map((c, i) => [c, gcCells(gc)[i]!])) : {}),
  })
  return [phase, ...g.perReplica.map((r) => row({ scope: 'replica', phase: 'grpc-js', replica: r.address, attempts: r.attempts }))]
}

/** Label, start, the target URLs (redacted, space-separated) and "true" for an interrupted run. */
function runCells(result: RunResult): Cell[] {
  return [result.label, result.startedAt, result.config.urls.map((url) => redactUrl(url, result.config.showSecrets)).join(' '), String(result.partial)]
}

/** A phase's row; `scope` 'target': one target's phase of a mix (a write sent once: no delay, as target-rows.ts decides). */
function phaseRow(phase: PhaseResult, scope: 'phase' | 'target' = 'phase', sentOnce = false): Cell[] {
  const hedging = phase.hedging ? hedgingCells(phase.hedging, phase) : emptyHedging()
  if (phase.hedging && targetDelayMs(phase, sentOnce) === null) hedging[HEDGING_COLUMNS.indexOf('delay_ms')] = NOT_HEDGED
  return [
    scope,
    phase.name,
    '',
    ...figureCells(phase, phase),
    phase.connectionsOpened,
    '',
    ...hedging,
    phase.ejections?.length ?? '',
    ...gcCells(phase.generator.gc),
    phase.connectionsClosedByCancel ?? '',
    phase.streamsResetByCancel ?? '',
    phase.streamsResentAfterGoaway ?? '',
  ]
}

function openLoopCells(phase: PhaseResult | null, rate: number | null): Cell[] {
  const s = phase?.serviceTime
  if (!s) return ['', '', '', '']
  return [rate ?? '', s.lateSends, s.latencyMs.p50.toFixed(3), s.latencyMs.p99.toFixed(3)]
}

/** A replica's own `cancelled` goes in the hedging column of that name; its other hedging cells stay empty. */
function replicaRow(r: ReplicaFigures, phase: PhaseResult): Cell[] {
  const hedging = emptyHedging()
  if (phase.hedging) hedging[HEDGING_COLUMNS.indexOf('cancelled')] = r.cancelled
  return ['replica', phase.name, redactUrl(r.url), ...figureCells(r, phase), '', r.wins, ...hedging, r.ejections ?? '', ...gcCells(undefined), '', '', '']
}

/** The common figures; duration and rps are the phase's (a replica has no wall time of its own). */
function figureCells(f: Figures, phase: PhaseResult): Cell[] {
  const rps = f === phase ? phase.rps : phase.durationMs > 0 ? f.requests / (phase.durationMs / 1000) : 0
  return [
    f.requests,
    f.attempts,
    f.ok,
    f.errors,
    f.requests > 0 ? round((100 * f.errors) / f.requests, 4) : 0,
    f.interrupted ?? 0,
    round(rps, 3),
    f.bytes,
    round(phase.durationMs, 3),
    ...LATENCY_KEYS.map((k) => f.latencyMs[k].toFixed(3)),
    round(f.slow.thresholdMs, 3),
    f.slow.count,
    counts(labelledStatuses(f.statusCodes)),
    counts(f.errorKinds),
    Object.entries(f.errorMessages ?? {})
      .map(([text, n]) => `[${n}] ${text}`)
      .join('; '),
  ]
}

function hedgingCells(h: HedgingStats, phase: PhaseResult): Cell[] {
  return [
    h.hedgesSent,
    h.unsent,
    h.unsentOriginals ?? '',
    round(extraLoadPct(phase), 3),
    round(h.triggerRate, 3),
    h.hedgeWins,
    h.originalWins,
    h.cancelled,
    h.lateDiscarded,
    h.budgetDenied,
    h.deadlineSuppressed,
    h.delayMs.toFixed(3),
    h.suppressed.overload,
    h.suppressed.errorRate,
    h.suppressed.targetBusy,
    h.suppressed.pushback,
    h.loserRuntimeMs ? h.loserRuntimeMs.p99.toFixed(3) : '',
  ]
}

const emptyHedging = (): Cell[] => HEDGING_COLUMNS.map(() => '')

function gcCells(gc: GcPauses | undefined): Cell[] {
  return gc ? [gc.count, gc.young, round(gc.totalMs, 3), round(gc.maxMs, 3)] : GC_COLUMNS.map(() => '')
}

/** `200:3990 503:10`: one cell, so the column count never depends on the run. */
function counts(map: Record<string, number>): string {
  return Object.entries(map)
    .map(([key, n]) => `${key}:${n}`)
    .join(' ')
}

const round = (n: number, digits: number): number => Math.round(n * 10 ** digits) / 10 ** digits
