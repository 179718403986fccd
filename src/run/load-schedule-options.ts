/**
 * --load-schedule and its --load-* flags (ghz's) checked into the schedule
 * the pacer runs (engine/load-schedule.ts), or refused with one line: a
 * flag that the kind does not take, a step that never reaches its end, a
 * step down that would reach 0 requests/s.
 */
import { UsageError } from '../core/errors.js'
import { formatThreshold } from '../core/duration.js'
import type { LoadSchedule } from '../results/run-result.js'
import type { LoadScheduleOptions, RunOptions } from './run-options.js'

/** Each flag by its option name, to name the ones a kind does not take. */
const FLAGS: Record<Exclude<keyof LoadScheduleOptions, 'kind'>, string> = {
  start: '--load-start',
  step: '--load-step',
  end: '--load-end',
  stepDurationMs: '--load-step-duration',
  maxDurationMs: '--load-max-duration',
}

/** The schedule, or null without --load-schedule; `rate` is the schedule's start (the warm-up's rate, and what makes the run open-loop). */
export function resolveLoadSchedule(o: Pick<RunOptions, 'loadSchedule' | 'rate' | 'workers' | 'shard'>): LoadSchedule | null {
  const s = o.loadSchedule
  if (s === undefined) return null
  const given = (Object.keys(FLAGS) as Array<keyof typeof FLAGS>).filter((k) => s[k] !== undefined)
  if (s.kind === undefined) throw new UsageError(`${given.map((k) => FLAGS[k]).join(', ')}: only with --load-schedule step or line`)
  if (!['const', 'step', 'line'].includes(s.kind)) throw new UsageError(`invalid --load-schedule "${s.kind}" (choose one of: const, step, line)`)
  if ((o.workers ?? 1) > 1 || (o.shard && o.shard.count > 1))
    throw new UsageError(`--load-schedule with ${o.shard && o.shard.count > 1 ? '--shard' : '--workers'}: not supported yet (one thread paces the schedule)`)
  if (s.kind === 'const') {
    if (given.length > 0) throw new UsageError(`--load-schedule const is -q's constant rate: ${given.map((k) => FLAGS[k]).join(', ')} are for step and line`)
    if (o.rate === undefined) throw new UsageError('--load-schedule const needs -q (its rate, requests/s)')
    return { kind: 'const', start: o.rate, step: 0, end: null, stepMs: 1000, maxMs: null }
  }
  return stairs(s.kind, s, o.rate)
}

function stairs(kind: 'step' | 'line', s: LoadScheduleOptions, rate: number | undefined): LoadSchedule {
  const flag = `--load-schedule ${kind}`
  if (rate !== undefined) throw new UsageError(`-q with ${flag}: its rate starts at --load-start (-q is the const schedule's rate)`)
  if (s.start === undefined) throw new UsageError(`${flag} needs --load-start (requests/s at the start)`)
  if (s.step === undefined) throw new UsageError(`${flag} needs --load-step (requests/s added at each step; negative to step down)`)
  const start = above0(s.start, '--load-start')
  const step = s.step
  if (!Number.isFinite(step) || step === 0) throw new UsageError(`invalid --load-step ${step} (requests/s added at each step: not 0; negative to step down)`)
  if (kind === 'line' && s.stepDurationMs !== undefined) throw new UsageError('--load-step-duration is for --load-schedule step (line steps every second)')
  if (kind === 'step' && s.stepDurationMs === undefined) throw new UsageError(`${flag} needs --load-step-duration (how long each step lasts, e.g. 5s)`)
  const stepMs = kind === 'line' ? 1000 : above0(s.stepDurationMs!, '--load-step-duration')
  const end = s.end === undefined ? null : above0(s.end, '--load-end')
  const maxMs = s.maxDurationMs === undefined ? null : above0(s.maxDurationMs, '--load-max-duration')
  if (end !== null && step > 0 && end < start)
    throw new UsageError(`--load-end ${end} is below --load-start ${start}: a step up (--load-step ${step}) never reaches it (a negative --load-step steps down)`)
  if (end !== null && step < 0 && end > start)
    throw new UsageError(`--load-end ${end} is above --load-start ${start}: a step down (--load-step ${step}) never reaches it (a positive --load-step steps up)`)
  if (step < 0 && end === null) {
    if (maxMs === null) throw new UsageError(`a step down (--load-step ${step}) needs --load-end or --load-max-duration: it would reach 0 requests/s`)
    const last = start + step * Math.max(0, Math.ceil(maxMs / stepMs) - 1)
    if (last <= 0)
      throw new UsageError(
        `a step down from ${start}/s by ${-step}/s every ${formatThreshold(stepMs)} reaches ${last}/s before --load-max-duration ${formatThreshold(maxMs)}: give --load-end above 0`,
      )
  }
  return { kind, start, step, end, stepMs, maxMs }
}

function above0(value: number, flag: string): number {
  if (!(Number.isFinite(value) && value > 0)) throw new UsageError(`invalid ${flag} ${value} (must be above 0)`)
  return value
}
