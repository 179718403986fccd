/**
 * Change detection without a mark (`watch`): a two-sided CUSUM (Page, 1954)
 * on one per-second series of a lane: its p99, its slow count, its error
 * rate.
 *
 * Each sample is first put on a scale where a steady target's samples are
 * close to normal: the log of the p99; the square root (Anscombe's
 * sqrt(x + 3/8)) of a count, summed over blocks of seconds long enough to
 * expect BLOCK_COUNT of it (one second at 1,000 requests/s with 1 % slow, a
 * minute when errors are rare), the errors scaled to the requests a block
 * expects so that they read as a rate. The CUSUM is self-starting (Hawkins,
 * 1987): each sample is standardised by the mean and spread of the samples
 * before it since the last restart, clipped to ±Z_CLIP so that one wild
 * second cannot raise an alarm alone.
 *
 * The alarm threshold h is derived from a stated false-alarm rate, one per
 * FALSE_ALARM_EVERY_S (24 hours) of a steady series: the in-control average
 * run length of a two-sided CUSUM with reference k, by Siegmund's
 * approximation ARL0 = (e^(2kb) - 2kb - 1) / (2k²) / 2 with b = h + 1.166,
 * solved for h (k = 0.5, one-second samples: h = 10.2; longer blocks need
 * fewer samples a day, so a lower h).
 *
 * A change is reported at the first second after its CUSUM was last at zero
 * (the classic estimate of where the shift began), with a 95 % interval from
 * the profile likelihood of one mean shift over the samples since the
 * series was first watched (those whose log-likelihood is within 1.92 of the
 * best). After a change, or a mark, the series learns its level anew.
 */

import { formatMs } from '../core/duration.js'
import type { ChangeMetric, ChangePoint } from '../results/watch-result.js'

export type { ChangeMetric, ChangePoint } from '../results/watch-result.js'

/** Page's reference value, in standard deviations: half the smallest shift worth finding fast (one sd). */
export const CUSUM_K = 0.5
/** The stated false-alarm rate: one per this many seconds of a steady series (24 hours). */
export const FALSE_ALARM_EVERY_S = 86_400
/** A standardised second is clipped to this many sd. */
export const Z_CLIP = 4
/** Seconds of baseline before a series is watched. */
export const BASELINE_S = 30
/** Seconds kept for locating a change: bounds memory however long a series runs. */
const HISTORY_S = 600

/** h such that a two-sided CUSUM with reference k raises a false alarm once per `arl0` samples on average (Siegmund's approximation). */
export function cusumThreshold(arl0: number, k = CUSUM_K): number {
  const oneSided = (h: number): number => {
    const b = h + 1.166
    return (Math.exp(2 * k * b) - 2 * k * b - 1) / (2 * k * k)
  }
  let lo = 0
  let hi = 100
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2
    if (oneSided(mid) / 2 < arl0) lo = mid
    else hi = mid
  }
  return hi
}

/** Counts (slow, errors) are summed over blocks that expect at least this many, so that a block's square root is close to normal. */
const BLOCK_COUNT = 10
/** A block lasts at most this long (a series with next to no errors). */
const MAX_BLOCK_S = 60
/** Samples (seconds, or blocks) the self-starting estimate needs before a series is watched. */
const MIN_SAMPLES = 8

const isCount = (metric: ChangeMetric): boolean => metric !== 'p99'

/** A sample on the series' stabilised scale. */
function transformed(metric: ChangeMetric, value: number): number {
  return metric === 'p99' ? Math.log(Math.max(value, 0.001)) : Math.sqrt(value + 3 / 8)
}

function inverse(metric: ChangeMetric, y: number): number {
  return metric === 'p99' ? Math.exp(y) : Math.max(0, y * y - 3 / 8)
}

/** The least spread a sample can have: a Poisson count's square root has 0.5; a p99 from a 3-digit HDR histogram, its resolution and a little more. */
const spreadFloor = (metric: ChangeMetric): number => (isCount(metric) ? 0.5 : 0.01)

export interface CusumOptions {
  k?: number
  /** Seconds of the first baseline, in which a count's block length is set. */
  baselineS?: number
}

/**
 * One series watched: push a second at a time; a change comes out when the
 * CUSUM crosses h. Self-starting (Hawkins, 1987): each sample is
 * standardised by the mean and spread of the samples before it since the
 * last restart (Welford's running sums: memory is flat), so a short
 * baseline's error in its level does not pose as a shift.
 */
export class ChangeDetector {
  readonly #k: number
  readonly #baselineS: number
  #h = Infinity
  /** Seconds per sample: 1 for the p99; for a count, set from the first baseline. */
  #blockS = 0
  #baseline: Array<{ x: number; requests: number }> = []
  #block = { x: 0, requests: 0, seconds: 0 }
  /** Requests a block expects (the error count is scaled to it, so it reads as a rate). */
  #blockRequests = 0
  #n = 0
  #mean = 0
  #m2 = 0
  #up = 0
  #down = 0
  #upZeroAt = 0
  #downZeroAt = 0
  /** Standardised samples since the series was first watched after its last restart (bounded). */
  #history: Array<{ t: number; z: number }> = []

  constructor(
    readonly metric: ChangeMetric,
    opts: CusumOptions = {},
  ) {
    this.#k = opts.k ?? CUSUM_K
    this.#baselineS = opts.baselineS ?? BASELINE_S
    if (!isCount(metric)) this.#setBlock(1)
  }

  /** Forget the level: a new one is learnt from the next seconds (a mark: the change there is known). */
  restart(): void {
    this.#n = this.#mean = this.#m2 = 0
    this.#history = []
    this.#up = this.#down = 0
    this.#block = { x: 0, requests: 0, seconds: 0 }
  }

  /** One second: `value` in the metric's unit (ms for the p99, a count for slow and errors), over `requests` requests. */
  push(t: number, value: number, requests: number): ChangePoint | null {
    if (requests === 0) return null
    if (this.#blockS === 0) return this.#learnBlock(value, requests)
    const block = this.#block
    block.x += value
    block.requests += requests
    if (++block.seconds < this.#blockS) return null
    // Errors scaled to the requests a block expects, so that a slower second is not fewer errors.
    const x = this.metric === 'error_rate' ? (block.x * this.#blockRequests) / block.requests : block.x
    this.#block = { x: 0, requests: 0, seconds: 0 }
    return this.#sample(t, transformed(this.metric, x))
  }

  /** A count's first seconds: how long a block must be to expect BLOCK_COUNT. */
  #learnBlock(value: number, requests: number): null {
    this.#baseline.push({ x: value, requests })
    if (this.#baseline.length < this.#baselineS) return null
    const perSecond = this.#baseline.reduce((a, b) => a + b.x, 0) / this.#baseline.length
    const blockS = perSecond > 0 ? Math.min(MAX_BLOCK_S, Math.ceil(BLOCK_COUNT / perSecond)) : MAX_BLOCK_S
    this.#blockRequests = (blockS * this.#baseline.reduce((a, b) => a + b.requests, 0)) / this.#baseline.length
    this.#baseline = []
    this.#setBlock(blockS)
    return null
  }

  #setBlock(seconds: number): void {
    this.#blockS = seconds
    this.#h = cusumThreshold(FALSE_ALARM_EVERY_S / seconds, this.#k)
  }

  #sample(t: number, y: number): ChangePoint | null {
    const n = this.#n
    const spread = Math.max(spreadFloor(this.metric), n > 1 ? Math.sqrt(this.#m2 / (n - 1)) : 0)
    const z = n >= MIN_SAMPLES ? Math.max(-Z_CLIP, Math.min(Z_CLIP, (y - this.#mean) / (spread * Math.sqrt(1 + 1 / n)))) : null
    const level = this.#mean
    // Welford: the running mean and sum of squares, after the sample was judged against the ones before it.
    this.#n++
    const d = y - this.#mean
    this.#mean += d / this.#n
    this.#m2 += d * (y - this.#mean)
    if (z === null) {
      this.#upZeroAt = this.#downZeroAt = t
      return null
    }
    this.#history.push({ t, z })
    if (this.#history.length > HISTORY_S) this.#history.shift()
    this.#up = Math.max(0, this.#up + z - this.#k)
    this.#down = Math.max(0, this.#down - z - this.#k)
    if (this.#up === 0) this.#upZeroAt = t
    if (this.#down === 0) this.#downZeroAt = t
    if (this.#up <= this.#h && this.#down <= this.#h) return null
    const direction = this.#up > this.#h ? 'up' : 'down'
    const change = this.#located(direction, t, level, spread)
    this.restart()
    return change
  }

  /** A level in the metric's unit: the p99 in ms, a count per second, the error rate as a fraction. */
  #perSecond(x: number): number {
    if (this.metric === 'p99') return x
    return this.metric === 'error_rate' ? x / Math.max(1, this.#blockRequests) : x / this.#blockS
  }

  /** Where the shift began (the CUSUM's last zero) and its 95 % interval from the profile likelihood of one mean shift. */
  #located(direction: 'up' | 'down', detectedAtS: number, level: number, spread: number): ChangePoint {
    const zeroAt = direction === 'up' ? this.#upZeroAt : this.#downZeroAt
    const history = this.#history
    const zs = history.map((s) => s.z)
    // Log-likelihood (unit variance) of a shift after index i: the level 0 before, the mean of the rest after.
    const suffix = new Array<number>(zs.length + 1).fill(0)
    for (let i = zs.length - 1; i >= 0; i--) suffix[i] = suffix[i + 1]! + zs[i]!
    const gain = zs.map((_, i) => {
      const n = zs.length - i
      return (suffix[i]! * suffix[i]!) / (2 * n)
    })
    const best = Math.max(...gain)
    const within = history.filter((_, i) => best - gain[i]! <= 1.92).map((s) => s.t)
    // A block's t is its last second: the new level starts with its first.
    const firstChanged = (history.find((s) => s.t > zeroAt)?.t ?? detectedAtS) - this.#blockS + 1
    const after = history.filter((s) => s.t >= firstChanged).map((s) => s.z)
    const meanZ = after.reduce((a, b) => a + b, 0) / Math.max(1, after.length)
    return {
      metric: this.metric,
      atS: firstChanged,
      intervalS: [Math.min(firstChanged, ...within.map((t) => t - this.#blockS + 1)), Math.max(firstChanged, ...within)],
      detectedAtS,
      direction,
      ...(this.#blockS > 1 ? { blockS: this.#blockS } : {}),
      before: round(this.#perSecond(inverse(this.metric, level))),
      after: round(this.#perSecond(inverse(this.metric, level + meanZ * spread))),
    }
  }
}

function round(x: number): number {
  return Number(x.toPrecision(4))
}

const METRIC_WORDS: Record<ChangeMetric, string> = { p99: 'p99', slow: 'slow requests/s', error_rate: 'error rate' }

/** "change: hedged p99 up at 600 s (596-602 s), 30.7 ms -> 40.1 ms; found at 602 s". */
export function changeLine(c: ChangePoint, lane: string): string {
  const show = (x: number): string => (c.metric === 'p99' ? formatMs(x) : c.metric === 'error_rate' ? `${(x * 100).toPrecision(3)}%` : String(x))
  return `change: ${lane} ${METRIC_WORDS[c.metric]} ${c.direction} at ${c.atS} s (${c.intervalS[0]}-${c.intervalS[1]} s), ${show(c.before)} -> ${show(c.after)}; found at ${c.detectedAtS} s`
}
