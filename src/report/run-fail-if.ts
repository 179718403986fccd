/**
 * `--fail-if` on a run itself, so one command gates a CI step:
 *
 *   hedgebench URL --fail-if "hedged.p99>50ms" --fail-if "extra_load>8%"
 *
 * The conditions are compare's (fail-if.ts). A condition naming a phase is
 * checked on that phase; one naming none on the hedged phase, the answer a
 * run gives (plain when only plain ran). A relative one (`p99>+10%`) is the
 * hedged phase's change against the plain phase, as `compare` of the run's
 * own file reads it.
 */
import { UsageError } from '../core/errors.js'
import type { Mode, PhaseResult, RunResult } from '../results/run-result.js'
import { compareWithin, phaseMetric } from './compare.js'
import { holdsAt, showValue, uncheckedWhy, type FailCondition } from './fail-if.js'

export interface RunFailCheck {
  condition: FailCondition
  holds: boolean
  /** What was checked, for the message: "hedged p99 = 63.2 ms", or why nothing could be. */
  observed: string
  /** Why the condition could not be checked (a change against plain from too few requests), or absent. */
  unchecked?: string
}

/** Before the run: a condition the run's phases cannot answer is bad input, not a pass. */
export function assertCheckable(conditions: FailCondition[], mode: Mode): void {
  for (const c of conditions) {
    const why = uncheckable(c, mode)
    if (why) throw new UsageError(`--fail-if ${JSON.stringify(c.text)}: ${why}`)
  }
}

function uncheckable(c: FailCondition, mode: Mode): string | null {
  if (c.kind === 'relative') {
    if (c.phase) return 'a change (+N% or -N%) is the hedged phase against the plain one: drop the phase name'
    if (mode !== 'both') return 'a change (+N% or -N%) compares the hedged phase with the plain one: it needs --mode both'
  }
  if (c.phase && mode !== 'both' && c.phase !== mode) return `this run has no ${c.phase} phase (--mode ${mode})`
  return null
}

export function checkRunFailIf(conditions: FailCondition[], result: RunResult): RunFailCheck[] {
  return conditions.map((condition) => (condition.kind === 'relative' ? relative(condition, result) : absolute(condition, result)))
}

function absolute(condition: FailCondition, result: RunResult): RunFailCheck {
  const phase = phaseOf(condition, result)
  if (!phase) return { condition, holds: false, observed: `no ${condition.phase ?? 'measured'} phase (interrupted run)` }
  const value = phaseMetric(result, phase, condition.metric)
  return { condition, holds: holdsAt(condition, value, null), observed: `${phase.name} ${condition.metric} = ${showValue(condition.metric, value)}` }
}

function relative(condition: FailCondition, result: RunResult): RunFailCheck {
  if (!result.phases.plain || !result.phases.hedged) return { condition, holds: false, observed: 'no plain and hedged phase to compare (interrupted run)' }
  const row = compareWithin(result).metrics.find((m) => m.metric === condition.metric)
  const change = row?.changes[1] ?? null
  const pct = change?.pct
  const observed = change ? `hedged ${condition.metric} changed ${pct === null || pct === undefined ? `by ${change.abs}` : `${pct > 0 ? '+' : ''}${pct.toFixed(1)}%`} against plain` : `no ${condition.metric} to compare`
  const why = uncheckedWhy(condition, change)
  return { condition, holds: holdsAt(condition, null, change), observed, ...(why ? { unchecked: why } : {}) }
}

function phaseOf(condition: FailCondition, result: RunResult): PhaseResult | undefined {
  if (condition.phase) return result.phases[condition.phase]
  return result.phases.hedged ?? result.phases.plain
}

