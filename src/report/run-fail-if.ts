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
import type { Mode, PhaseName, RunResult } from '../results/run-result.js'
import { compareWithin, phaseMetric } from './compare.js'
import { holdsAt, showValue, uncheckedWhy, type FailCondition } from './fail-if.js'

export interface RunFailCheck {
  condition: FailCondition
  holds: boolean
  /** What was checked, for the message: "hedged p99 = 63.2 ms", or why nothing could be. */
  observed: string
  /** Why the condition could not be checked (a change against plain from too few requests), or absent. */
  unchecked?: string
  /**
   * The phase the condition needs was never measured, or not as asked (the
   * run was interrupted before or in it, or the generator could not send
   * some of its requests): the gate fails closed, as a stopped CI job must
   * never read as a passed one.
   */
  unmeasured?: string
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
  const name = condition.phase ?? answerPhase(result.config.mode)
  const phase = result.phases[name]
  if (!phase) return unmeasured(condition, [name])
  const why = cutShort(result, name)
  if (why !== null) return { condition, holds: false, observed: why, unmeasured: why }
  const value = phaseMetric(result, phase, condition.metric)
  return { condition, holds: holdsAt(condition, value, null), observed: `${phase.name} ${condition.metric} = ${showValue(condition.metric, value)}` }
}

function relative(condition: FailCondition, result: RunResult): RunFailCheck {
  const missing = (['plain', 'hedged'] as const).filter((name) => !result.phases[name])
  if (missing.length > 0) return unmeasured(condition, missing)
  const short = (['plain', 'hedged'] as const).map((name) => cutShort(result, name)).filter((why) => why !== null)
  if (short.length > 0) return { condition, holds: false, observed: short.join('; '), unmeasured: short.join('; ') }
  const row = compareWithin(result).metrics.find((m) => m.metric === condition.metric)
  const change = row?.changes[1] ?? null
  const pct = change?.pct
  const observed = change
    ? `hedged ${condition.metric} changed ${pct === null || pct === undefined ? `by ${change.abs}` : `${pct > 0 ? '+' : ''}${pct.toFixed(1)}%`} against plain, ${change.verdict === 'within noise' ? 'within noise' : `${change.verdict} beyond noise`}`
    : `no ${condition.metric} to compare`
  const why = uncheckedWhy(condition, change)
  return { condition, holds: holdsAt(condition, null, change), observed, ...(why ? { unchecked: why } : {}) }
}

function unmeasured(condition: FailCondition, phases: readonly PhaseName[]): RunFailCheck {
  const why = `no ${phases.join(' or ')} phase was measured (the run was interrupted)`
  return { condition, holds: false, observed: why, unmeasured: why }
}

/**
 * Why a phase that was measured still cannot answer a gate, or null: the run
 * was stopped in it (SIGTERM mid-phase: the figures cover part of -n or -z),
 * or some of its requests failed on this machine before reaching the target
 * (EMFILE: the load asked for was never sent). Either way a gate that passed
 * would pass on another run than the one asked for, so it fails closed.
 */
function cutShort(result: RunResult, name: Exclude<PhaseName, 'warmup'>): string | null {
  const phase = result.phases[name]
  if (!phase) return null
  // Interleaved phases share one window: a stop cuts both short.
  if (result.partial && (result.stoppedIn === name || result.config.schedule === 'interleaved'))
    return `the ${name} phase was interrupted (${phase.requests} requests measured, fewer than asked for)`
  const failures = Object.entries(phase.generatorFailures ?? {})
  const failed = failures.reduce((sum, [, n]) => sum + n, 0)
  if (failed > 0)
    return `${failed} of the ${name} phase's requests failed on this machine before reaching the target (${failures.map(([kind, n]) => `${kind} ${n}`).join(', ')})`
  return null
}

/**
 * Why the run's gates cannot be answered either way: a measured phase whose
 * load generator was saturated measured its own delay (fail-if.ts
 * inconclusiveWhy says the same for compare).
 */
export function saturatedWhy(result: RunResult): string[] {
  return runPhases(result.config.mode).flatMap((name) =>
    result.phases[name]?.generator.saturated ? [`the load generator was saturated in the ${name} phase; its latencies include its own delay`] : [],
  )
}

/** The phase a condition naming none is checked on: the hedged one, the answer a run gives, or plain when only plain ran. */
function answerPhase(mode: Mode): Exclude<PhaseName, 'warmup'> {
  return mode === 'plain' ? 'plain' : 'hedged'
}

/** The measured phases a run of this mode has. */
function runPhases(mode: Mode): Array<Exclude<PhaseName, 'warmup'>> {
  return mode === 'both' ? ['plain', 'hedged'] : [mode]
}

export interface ErrorLimitCheck {
  /** Each phase over the limit, said as --fail-if says what held (a CI gate that fails names why). */
  breaches: string[]
  /** Each phase of the run's mode that was never measured, or not as asked: the gate fails closed. */
  unmeasured: string[]
}

/** --fail-on-errors LIMIT (a percentage) on every phase the run's mode has. */
export function checkErrorLimit(limit: number, result: RunResult): ErrorLimitCheck {
  const check: ErrorLimitCheck = { breaches: [], unmeasured: [] }
  for (const name of runPhases(result.config.mode)) {
    const phase = result.phases[name]
    if (!phase) {
      check.unmeasured.push(`--fail-on-errors ${limit}% not checked: no ${name} phase was measured (the run was interrupted)`)
      continue
    }
    const why = cutShort(result, name)
    if (why !== null) {
      check.unmeasured.push(`--fail-on-errors ${limit}% not checked: ${why}`)
      continue
    }
    const pct = phase.requests > 0 ? (phase.errors / phase.requests) * 100 : 0
    if (pct > limit)
      check.breaches.push(`--fail-on-errors ${limit}%: ${name} error rate ${Math.round(pct * 100) / 100}% (${phase.errors} of ${phase.requests}) is over it`)
  }
  return check
}
