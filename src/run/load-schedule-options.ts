/**
 * --load-schedule and --concurrency-schedule with their flags (ghz's)
 * checked into the schedules the load generator runs (engine/load-schedule.ts),
 * or refused with one line: a flag that the kind does not take, a step that
 * never reaches its end, a step down that would reach 0.
 */
import { UsageError } from '../core/errors.js'
import { formatThreshold } from '../core/duration.js'
import type { LoadSchedule } from '../results/run-result.js'
import type { LoadScheduleOptions, RunOptions } from './run-options.js'

/** What differs between the two schedules: their flags' names, the flag of their constant value, what they count. */
interface Kind {
  /** --load, --concurrency */
  prefix: string
  /** The flag a const schedule is: -q, -c. */
  base: string
  /** "requests/s", "requests in flight". */
  what: string
  /** Counts of requests in flight are whole numbers. */
  whole: boolean
  /** ghz's default --concurrency-step is 1; a rate's step has none. */
  stepDefault?: number
}

const LOAD: Kind = { prefix: '--load', base: '-q', what: 'requests/s', whole: false }
const CONCURRENCY: Kind = { prefix: '--concurrency', base: '-c', what: 'requests in flight', whole: true, stepDefault: 1 }

/** Each flag by its option name, to name the ones a kind does not take. */
const SUFFIXES: Record<Exclude<keyof LoadScheduleOptions, 'kind'>, string> = {
  start: '-start',
  step: '-step',
  end: '-end',
  stepDurationMs: '-step-duration',
  maxDurationMs: '-max-duration',
}

type Options = Pick<RunOptions, 'loadSchedule' | 'concurrencySchedule' | 'rate' | 'concurrency'>

/** The rate schedule, or null without --load-schedule; a step or line schedule's start is the run's -q (the warm-up's rate, and what makes the run open-loop). */
export function resolveLoadSchedule(o: Options): LoadSchedule | null {
  return resolveSchedule(LOAD, o.loadSchedule, o.rate)
}

/**
 * The concurrency schedule, or null without --concurrency-schedule: a
 * closed loop's (the rate of an open loop is --load-schedule's); its most
 * requests in flight are the run's -c (the slots the window has).
 */
export function resolveConcurrencySchedule(o: Options, defaultConcurrency: number): LoadSchedule | null {
  const s = resolveSchedule(CONCURRENCY, o.concurrencySchedule, o.concurrency, defaultConcurrency)
  if (s && (o.rate !== undefined || o.loadSchedule !== undefined))
    throw new UsageError(
      `--concurrency-schedule is for a closed loop: ${o.loadSchedule ? '--load-schedule' : '-q'} makes the run open-loop (its rate is scheduled by --load-schedule)`,
    )
  return s
}

/** `constDefault`: a const schedule's value when its base flag is not given (-c has a default, -q none). */
function resolveSchedule(k: Kind, s: LoadScheduleOptions | undefined, base: number | undefined, constDefault?: number): LoadSchedule | null {
  if (s === undefined) return null
  const flag = (key: keyof typeof SUFFIXES): string => `${k.prefix}${SUFFIXES[key]}`
  const given = (Object.keys(SUFFIXES) as Array<keyof typeof SUFFIXES>).filter((key) => s[key] !== undefined)
  const schedule = `${k.prefix}-schedule`
  if (s.kind === undefined) throw new UsageError(`${given.map(flag).join(', ')}: only with ${schedule} step or line`)
  if (!['const', 'step', 'line'].includes(s.kind)) throw new UsageError(`invalid ${schedule} "${s.kind}" (choose one of: const, step, line)`)
  if (s.kind === 'const') {
    if (given.length > 0)
      throw new UsageError(
        `${schedule} const is ${k.base}'s constant value: ${given.map(flag).join(', ')} ${given.length > 1 ? 'are' : 'is'} only for step and line`,
      )
    const value = base ?? constDefault
    if (value === undefined) throw new UsageError(`${schedule} const needs ${k.base} (its ${k.what})`)
    return { kind: 'const', start: above0(k, value, k.base), step: 0, end: null, stepMs: 1000, maxMs: null }
  }
  return stairs(k, s.kind, s, base)
}

function stairs(k: Kind, kind: 'step' | 'line', s: LoadScheduleOptions, base: number | undefined): LoadSchedule {
  const name = `${k.prefix}-schedule ${kind}`
  if (base !== undefined) throw new UsageError(`${k.base} with ${name}: it starts at ${k.prefix}-start (${k.base} is the const schedule's ${k.what})`)
  if (s.start === undefined) throw new UsageError(`${name} needs ${k.prefix}-start (${k.what} at the start)`)
  const stepGiven = s.step ?? k.stepDefault
  if (stepGiven === undefined) throw new UsageError(`${name} needs ${k.prefix}-step (${k.what} added at each step; negative to step down)`)
  const start = above0(k, s.start, `${k.prefix}-start`)
  const step = stepGiven
  if (!Number.isFinite(step) || step === 0 || (k.whole && !Number.isInteger(step)))
    throw new UsageError(`invalid ${k.prefix}-step ${step} (${k.what} added at each step: ${k.whole ? 'a whole number, ' : ''}not 0; negative to step down)`)
  if (kind === 'line' && s.stepDurationMs !== undefined)
    throw new UsageError(`${k.prefix}-step-duration is for ${k.prefix}-schedule step (line steps every second)`)
  if (kind === 'step' && s.stepDurationMs === undefined) throw new UsageError(`${name} needs ${k.prefix}-step-duration (how long each step lasts, e.g. 5s)`)
  const stepMs = kind === 'line' ? 1000 : above0(k, s.stepDurationMs!, `${k.prefix}-step-duration`, false)
  const end = s.end === undefined ? null : above0(k, s.end, `${k.prefix}-end`)
  const maxMs = s.maxDurationMs === undefined ? null : above0(k, s.maxDurationMs, `${k.prefix}-max-duration`, false)
  const stepFlag = `${k.prefix}-step ${step}`
  if (end !== null && step > 0 && end < start)
    throw new UsageError(
      `${k.prefix}-end ${end} is below ${k.prefix}-start ${start}: a step up (${stepFlag}) never reaches it (a negative ${k.prefix}-step steps down)`,
    )
  if (end !== null && step < 0 && end > start)
    throw new UsageError(
      `${k.prefix}-end ${end} is above ${k.prefix}-start ${start}: a step down (${stepFlag}) never reaches it (a positive ${k.prefix}-step steps up)`,
    )
  // The window has a slot for each request it may hold in flight: their most must be known.
  if (k.whole && step > 0 && end === null && maxMs === null)
    throw new UsageError(`${name} needs ${k.prefix}-end or ${k.prefix}-max-duration (the most ${k.what}: the window's slots)`)
  if (step < 0 && end === null) {
    if (maxMs === null) throw new UsageError(`a step down (${stepFlag}) needs ${k.prefix}-end or ${k.prefix}-max-duration: it would reach 0 ${k.what}`)
    const last = start + step * Math.max(0, Math.ceil(maxMs / stepMs) - 1)
    if (last <= 0)
      throw new UsageError(
        `a step down from ${start} by ${-step} every ${formatThreshold(stepMs)} reaches ${last} ${k.what} before ${k.prefix}-max-duration ${formatThreshold(maxMs)}: give ${k.prefix}-end above 0`,
      )
  }
  return { kind, start, step, end, stepMs, maxMs }
}

/** Above 0; a count of requests in flight also whole (`count` false: a duration). */
function above0(k: Kind, value: number, flag: string, count = true): number {
  const whole = count && k.whole
  if (!(Number.isFinite(value) && value > 0) || (whole && !Number.isInteger(value)))
    throw new UsageError(`invalid ${flag} ${value} (must be ${whole ? 'a whole number ' : ''}above 0)`)
  return value
}
