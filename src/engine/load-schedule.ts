/**
 * A load schedule's send times (--load-schedule, ghz's pacer): the rate of a
 * window is a staircase (const: one stair; step: a stair every stepMs; line:
 * one every second), and the k-th send of the window is due when the
 * schedule's running count of sends reaches k. Pure: the open-loop pacer
 * (load-generator.ts) asks it for each send's time, and the run asks it how
 * many sends it placed in each second, so the asked series of a result is
 * the pacer's own count, not a second computation of it.
 *
 * A part of the schedule (--workers, --shard): part i of n sends the global
 * sends i, i+n, i+2n, ... (as -q's threads and shards interleave), so that
 * the parts' sends in any second add up to the schedule's; its asked rate is
 * the schedule's over n. A concurrency schedule's part i of n holds
 * shareOf(stair, n) of each stair's requests in flight (the first parts one
 * more while the stair does not divide), adding up to each stair.
 */
import type { LoadSchedule, ScheduleSecond } from '../results/run-result.js'
import { round3 } from '../core/round.js'
import { shareOf, type Shard } from '../results/shard-share.js'

/** The whole schedule: one generator, one thread. */
const WHOLE: Shard = { index: 0, count: 1 }

/** Stairs at most, the last one held: a day of one-second steps (a step up with no --load-end and no --load-max-duration stops climbing there). */
export const MAX_STAIRS = 86_400

/** Running counts are doubles: a count this close above a whole number is that number (250.0000000001 sends are 250). */
const EPSILON = 1e-9

export class SendTimes {
  /** Each stair's rate, requests/s; the last one is held to the window's end. */
  readonly #rates: number[]
  /** Sends due before each stair starts (fractional). */
  readonly #before: number[]
  readonly #stepMs: number
  /** The stair the last question fell on: sends are asked for in order, so the search starts there. */
  #at = 0

  constructor(
    schedule: LoadSchedule,
    readonly part: Shard = WHOLE,
  ) {
    this.#stepMs = schedule.stepMs
    this.#rates = stairRates(schedule)
    this.#before = [0]
    for (let i = 1; i < this.#rates.length; i++) this.#before.push(this.#before[i - 1]! + (this.#rates[i - 1]! * this.#stepMs) / 1000)
  }

  /** This part's k-th send's time (0-based), ms after the schedule's start: the schedule's send k·n + i. */
  at(k: number): number {
    const global = k * this.part.count + this.part.index
    const i = this.#stairOf(global)
    return i * this.#stepMs + ((global - this.#before[i]!) * 1000) / this.#rates[i]!
  }

  /** This part's asked rate at `ms` after the start, requests/s. */
  rateAt(ms: number): number {
    return stairAt(this.#rates, this.#stepMs, ms) / this.part.count
  }

  /** This part's sends due before `ms` after the start: the k with at(k) < ms. */
  dueBefore(ms: number): number {
    if (ms <= 0) return 0
    const i = Math.min(this.#rates.length - 1, Math.floor(ms / this.#stepMs))
    const running = this.#before[i]! + ((ms - i * this.#stepMs) * this.#rates[i]!) / 1000
    const global = Math.max(0, Math.ceil(running - EPSILON))
    return Math.max(0, Math.ceil((global - this.part.index) / this.part.count))
  }

  #stairOf(k: number): number {
    let i = this.#at
    const last = this.#rates.length - 1
    while (i < last && this.#before[i + 1]! <= k + EPSILON) i++
    while (i > 0 && this.#before[i]! > k + EPSILON) i--
    this.#at = i
    return i
  }
}

/** The stair in effect `ms` after the start (the last one held). */
function stairAt(values: readonly number[], stepMs: number, ms: number): number {
  return values[Math.min(values.length - 1, Math.floor(ms / stepMs))]!
}

/**
 * --concurrency-schedule: when each of the window's slots takes part, ms
 * from its start: slot i while the stair's count of requests in flight is
 * above i. The stairs only climb or only descend, so that is one span: a
 * step up adds slots at its stairs' starts and keeps them, a step down
 * retires them (Infinity: never started, or never retired).
 */
export function slotSpans(s: LoadSchedule, slots: number, part: Shard = WHOLE): Array<{ fromMs: number; untilMs: number }> {
  const counts = stairShares(s, part)
  return Array.from({ length: slots }, (_, i) => {
    const from = counts.findIndex((n) => n > i)
    if (from < 0) return { fromMs: Infinity, untilMs: Infinity }
    const until = counts.findIndex((n, j) => j > from && n <= i)
    return { fromMs: from * s.stepMs, untilMs: until < 0 ? Infinity : until * s.stepMs }
  })
}

/** This part's share of each stair's requests in flight (shareOf: the first parts take the remainder, one each). */
function stairShares(s: LoadSchedule, part: Shard): number[] {
  return stairRates(s).map((count) => shareOf(count, part))
}

/** A window's concurrency schedule (this part's share) beside what it sent, per second. */
export function concurrencySeconds(s: LoadSchedule, sent: readonly number[], part: Shard = WHOLE): ScheduleSecond[] {
  const counts = stairShares(s, part)
  return sent.map((count, t) => ({ t, concurrency: stairAt(counts, s.stepMs, t * 1000), sent: count }))
}

/**
 * The stairs' rates: start, then a step more at each stair, until the rate
 * reaches `end` (held there) or a stair would start at or after `maxMs`
 * (the last one before it held); const is one stair.
 */
export function stairRates(s: LoadSchedule): number[] {
  // (Or counts of requests in flight: a concurrency schedule's stairs are the same.)
  if (s.kind === 'const' || s.step === 0) return [s.start]
  const byEnd = s.end === null ? Infinity : Math.ceil((s.end - s.start) / s.step - EPSILON)
  const byMax = s.maxMs === null ? Infinity : Math.max(0, Math.ceil(s.maxMs / s.stepMs - EPSILON) - 1)
  const last = Math.min(byEnd, byMax, MAX_STAIRS)
  const rates: number[] = []
  for (let i = 0; i <= last; i++) {
    const rate = s.start + i * s.step
    rates.push(s.end === null ? rate : s.step > 0 ? Math.min(rate, s.end) : Math.max(rate, s.end))
  }
  return rates
}

/**
 * A window's schedule beside what it sent, per second: `sent` the sends
 * that left in each second, `issued` how many the window sent in all (the
 * sends the schedule placed past the last one were never due).
 */
export function scheduleSeconds(times: SendTimes, sent: readonly number[], issued: number): ScheduleSecond[] {
  return sent.map((count, t) => ({
    t,
    rate: round3(times.rateAt(t * 1000)),
    asked: Math.min(issued, times.dueBefore((t + 1) * 1000)) - Math.min(issued, times.dueBefore(t * 1000)),
    sent: count,
  }))
}
