/**
 * A mix's rows (--targets): each target's measured phases with the figures
 * a per-endpoint setting is chosen by (p50, p99, slow, errors, extra load,
 * its delay), decided once for the text and HTML reports of a run and of a
 * sweep (sweep-targets.ts); the CSV writes every figure of each (csv.ts).
 */
import { formatMs } from '../core/duration.js'
import { extraLoadPct } from '../results/extra-load.js'
import type { PhaseName, PhaseResult, RunResult } from '../results/run-result.js'
import { formatTable } from './table.js'

export interface TargetRow {
  target: string
  weight: number
  /** The phase; in a sweep's rows (sweep-targets.ts), the lane: `none` (plain) or a setting's label. */
  phase: string
  requests: number
  p50: number
  p99: number
  slow: number
  errors: number
  /** Hedged phases only. */
  extraLoadPct: number | null
  delayMs: number | null
  /** A write sent once (never hedged): its hedged phase ran no hedge, so it has no delay to show. */
  sentOnce: boolean
}

/** What the delay cell says of a write the run sent once: its hedged lane timed nothing. */
export const NOT_HEDGED = 'not hedged (write)'

const MEASURED: readonly PhaseName[] = ['plain', 'hedged']

/** Every measured phase of every target, target by target (the file's order). */
export function targetPhases(result: RunResult): Array<{ target: string; weight: number; sentOnce: boolean; phase: PhaseResult }> {
  return (result.targets ?? []).flatMap((t) =>
    MEASURED.flatMap((name) => {
      const phase = t.phases[name]
      return phase ? [{ target: t.name, weight: t.weight, sentOnce: t.sentOnce === true, phase }] : []
    }),
  )
}

export function targetRows(result: RunResult): TargetRow[] {
  return targetPhases(result).map(({ target, weight, sentOnce, phase }) => targetRow(target, weight, phase.name, phase, sentOnce))
}

/**
 * A target's hedge delay as every format shows it (text, HTML, CSV): null
 * for a plain phase, and for a write sent once, whose hedged lane carries
 * the run's delay but never used it.
 */
export function targetDelayMs(phase: PhaseResult, sentOnce: boolean): number | null {
  return sentOnce ? null : (phase.hedging?.delayMs ?? null)
}

/** One target's phase (or a sweep's lane, named `lane`) as a row. */
export function targetRow(target: string, weight: number, lane: string, phase: PhaseResult, sentOnce = false): TargetRow {
  return {
    target,
    weight,
    phase: lane,
    requests: phase.requests,
    p50: phase.latencyMs.p50,
    p99: phase.latencyMs.p99,
    slow: phase.slow.count,
    errors: phase.errors,
    extraLoadPct: phase.hedging ? extraLoadPct(phase) : null,
    delayMs: targetDelayMs(phase, sentOnce),
    sentOnce,
  }
}

export const TARGET_HEADER = ['target', 'weight', 'phase', 'requests', 'p50', 'p99', 'slow', 'errors', 'extra load', 'delay']

/** A row's cells as the reports show them. */
export function targetCells(r: TargetRow): string[] {
  return [
    r.target,
    String(r.weight),
    r.phase,
    String(r.requests),
    formatMs(r.p50),
    formatMs(r.p99),
    String(r.slow),
    String(r.errors),
    r.extraLoadPct === null ? '-' : `+${r.extraLoadPct.toFixed(1)}%`,
    r.delayMs !== null ? formatMs(r.delayMs) : r.sentOnce && r.extraLoadPct !== null ? NOT_HEDGED : '-',
  ]
}

/** The text report's block: empty for a run of one request shape. */
export function targetsText(result: RunResult): string[] {
  const rows = targetRows(result)
  if (rows.length === 0) return []
  const table = formatTable([TARGET_HEADER, ...rows.map(targetCells)], ['left', 'right', 'left']).map((l) => `  ${l}`)
  return ['Targets:', ...table, ...serverLines(result)]
}

/** The server's count of each target's path beside its attempts (--server-stats on a target that counts per path): one line when all agree, else each that does not. */
function serverLines(result: RunResult): string[] {
  const counts = (result.targets ?? []).flatMap((t) => (t.server ?? []).map((s) => ({ target: t.name, ...s })))
  if (counts.length === 0) return []
  const off = counts.filter((c) => !c.match)
  if (off.length === 0) return [`  server count per path: every target's attempts received (${counts.length} target windows)`]
  return off.map(
    (c) => `  ! server count per path: ${c.target} (${c.phases.join(' + ')}): the server received ${c.received}, the client sent ${c.clientAttempts}`,
  )
}
