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
 * A change is placed where one mean shift in the samples since the series
 * last learnt its level fits best (the maximum likelihood split, on the
 * stabilised scale, the shift in the direction of the alarm), with a 95 %
 * interval from its profile likelihood (the splits whose log-likelihood is
 * within 1.92 of the best, the spread being the one within the two sides
 * at the best). Not where the CUSUM was last at zero: a spike in the
 * baseline leaves the CUSUM above zero for seconds, and that would place a
 * later step at the spike. The levels before and after are the medians of
 * the per-second values on each side of the split: what the seconds show,
 * not a level read back from the standardised samples (whose spread grows
 * with the first samples after a step). After a change, or a mark, the
 * series learns its level anew.
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
  /** The samples since the last restart (bounded): on the stabilised scale (y), and as a value per second (x). */
  #history: Sample[] = []

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
    const perSecond = this.metric === 'error_rate' ? block.x / block.requests : block.x / this.#blockS
    this.#block = { x: 0, requests: 0, seconds: 0 }
    return this.#sample({ t, y: transformed(this.metric, x), x: perSecond })
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

  #sample(sample: Sample): ChangePoint | null {
    const { t, y } = sample
    this.#history.push(sample)
    if (this.#history.length > HISTORY_S) this.#history.shift()
    const n = this.#n
    const spread = Math.max(spreadFloor(this.metric), n > 1 ? Math.sqrt(this.#m2 / (n - 1)) : 0)
    const z = n >= MIN_SAMPLES ? Math.max(-Z_CLIP, Math.min(Z_CLIP, (y - this.#mean) / (spread * Math.sqrt(1 + 1 / n)))) : null
    // Welford: the running mean and sum of squares, after the sample was judged against the ones before it.
    this.#n++
    const d = y - this.#mean
    this.#mean += d / this.#n
    this.#m2 += d * (y - this.#mean)
    if (z === null) return null
    this.#up = Math.max(0, this.#up + z - this.#k)
    this.#down = Math.max(0, this.#down - z - this.#k)
    if (this.#up <= this.#h && this.#down <= this.#h) return null
    const direction = this.#up > this.#h ? 'up' : 'down'
    const change = this.#located(direction, t)
    this.restart()
    return change
  }

  /** Where one mean shift in `direction` fits the history best, its 95 % interval, and the levels on each side. */
  #located(direction: 'up' | 'down', detectedAtS: number): ChangePoint {
    const history = this.#history
    const split = bestSplit(
      history.map((s) => s.y),
      direction,
      spreadFloor(this.metric),
    )
    // A block's t is its last second: the new level starts with its first.
    const first = (i: number): number => history[i]!.t - this.#blockS + 1
    const atS = first(split.at)
    return {
      metric: this.metric,
      atS,
      intervalS: [Math.min(atS, ...split.within.map(first)), Math.max(atS, ...split.within.map((i) => history[i]!.t))],
      detectedAtS,
      direction,
      ...(this.#blockS > 1 ? { blockS: this.#blockS } : {}),
      before: round(median(history.slice(0, split.at).map((s) => s.x))),
      after: round(median(history.slice(split.at).map((s) => s.x))),
    }
  }
}

interface Sample {
  /** The block's last second. */
  t: number
  /** On the stabilised scale. */
  y: number
  /** In the metric's unit per second: the p99 in ms, a count per second, the error rate as a fraction. */
  x: number
}

/**
 * One mean shift in `ys`, first index of the new level: the split that
 * leaves the least squares within the two sides (the maximum likelihood one),
 * among those whose shift goes in `direction`; and the splits whose profile
 * log-likelihood, with the spread within the sides at the best split (at
 * least `floor`), is within 1.92 of it (95 %, one parameter).
 */
export function bestSplit(ys: readonly number[], direction: 'up' | 'down', floor: number): { at: number; within: number[] } {
  const n = ys.length
  const total = ys.reduce((a, b) => a + b, 0)
  // Between-sides sum of squares of the split before index i: n1 n2 / n (mean2 - mean1)².
  const between: Array<number | null> = [null]
  let prefix = 0
  for (let i = 1; i < n; i++) {
    prefix += ys[i - 1]!
    const shift = (total - prefix) / (n - i) - prefix / i
    between.push((direction === 'up' ? shift > 0 : shift < 0) ? ((i * (n - i)) / n) * shift * shift : null)
  }
  let at = n - 1
  for (let i = 1; i < n; i++) if ((between[i] ?? -1) > (between[at] ?? -1)) at = i
  const mean = total / n
  const withinSS = ys.reduce((a, y) => a + (y - mean) ** 2, 0) - (between[at] ?? 0)
  const variance = Math.max(floor * floor, withinSS / Math.max(1, n - 2))
  const best = between[at] ?? 0
  const within: number[] = []
  for (let i = 1; i < n; i++) if (between[i] !== null && (best - between[i]!) / (2 * variance) <= 1.92) within.push(i)
  return { at, within }
}

function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
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
