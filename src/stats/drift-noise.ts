/**
 * Noise that the request count does not show: drift. noise.ts treats a
 * run's requests as independent draws from one unchanging target; a shared
 * machine's latency wanders over seconds, within a run and between runs, and
 * moves a whole run's percentiles together. Two estimates of that, each
 * widening compare's interval when it is the bigger (compare.ts):
 *
 * Within a run: a moving-block bootstrap over the run's own time series.
 * A phase keeps, per time window (100 ms points for phases of up to 5 s, else
 * one per second), its request count and its p50 and p99. The level of the
 * run is the request-weighted mean of the windows' values. Resampling
 * blocks of consecutive windows (Künsch's moving-block bootstrap), so that
 * wander slower than a window stays inside a block, gives the spread of that
 * level a run of the same length would show; it is read as a relative
 * spread and applied to the percentiles near it (see relativeSpread). The
 * blocks are m^(1/2) windows long, longer than the m^(1/3) that minimises
 * the estimate's error: slow wander is what must not be missed, and a short
 * block misses it (the bootstrap's variance falls short by about the
 * series' correlation length over the block's). The spread then rests on
 * only about m^(1/2) independent blocks, so the bound uses Student's t with
 * that many degrees of freedom less one, not the normal quantile. It is
 * seeded and deterministic: the same file gives the same interval.
 *
 * Between runs: an A/A set. Drift that is slow against a run moves the whole
 * run and no estimate from inside it can see it; runs of the same baseline
 * can. With k baseline runs whose values of a metric have mean m and
 * standard deviation s, a new run of the same target lies within
 * m ± t(k-1) * s * sqrt(1 + 1/k) (Student's t prediction interval for one
 * more draw), at the level below; compare then reads the baseline as m.
 *
 * The level. The aim is that over 20 A/A pairs at most one metric
 * comparison is called better or worse. Per comparison, the false-call rate
 * alpha is the largest for which Binomial(20, alpha) >= 2 has probability at
 * most 5 %: alpha = 1.8 %, a two-sided bound at the 99.1 % quantile (z = 2.37).
 */
import { seededRandom } from '../core/random.js'
import type { TimelinePoint } from '../results/run-result.js'
import { requestsNeeded, studentTQuantile, type Interval } from './noise.js'

/** A/A pairs, calls allowed among them, and the probability that holds with. */
const PAIRS = 20
const CALLS_ALLOWED = 1
const HOLDS_WITH = 0.95

/** The per-comparison false-call rate (see above), by bisection: P(Bin(PAIRS, a) > CALLS_ALLOWED) rises with a. */
export const DRIFT_ALPHA = solveAlpha()

function solveAlpha(): number {
  const tail = (a: number): number => {
    let below = 0
    for (let k = 0; k <= CALLS_ALLOWED; k++) below += binomial(PAIRS, k) * a ** k * (1 - a) ** (PAIRS - k)
    return 1 - below
  }
  let [lo, hi] = [0, 1]
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2
    if (tail(mid) <= 1 - HOLDS_WITH) lo = mid
    else hi = mid
  }
  return lo
}

function binomial(n: number, k: number): number {
  let c = 1
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i
  return c
}

const T_BOUNDS = new Map<number, number>()

/** Student's t two-sided bound at DRIFT_ALPHA, computed once per degrees of freedom (a bisection of about a millisecond). */
function tBound(df: number): number {
  const known = T_BOUNDS.get(df)
  if (known !== undefined) return known
  const t = studentTQuantile(1 - DRIFT_ALPHA / 2, df)
  T_BOUNDS.set(df, t)
  return t
}

/** Fewer windows than this give no time-series estimate (a block bootstrap of 2 blocks says nothing). */
export const MIN_WINDOWS = 10
/** Bootstrap resamples: the spread's own error is about 1/sqrt(2 * RESAMPLES), 3 %. */
const RESAMPLES = 500
/** The bootstrap's seed: fixed, so a file gives the same interval every time it is compared. */
const SEED = 0x5eed

/** A phase's time series, as kept in a result. */
export interface TimeSeries {
  timeline?: TimelinePoint[]
  timelineFine?: TimelinePoint[]
}

/** Relative spreads (standard deviation over level) of a run's p50 and p99 levels; null without enough windows. */
export interface RunSpread {
  p50: number
  /** Null when the windows are too small for their p99 to be one (see runSpread). */
  p99: number | null
  /** Degrees of freedom of the spreads: the blocks a run holds, less one. */
  df: number
}

/** The moving-block bootstrap of a phase's time series (see above). */
export function runSpread(series: TimeSeries): RunSpread | null {
  const fine = series.timelineFine ?? []
  const windows = (fine.length >= MIN_WINDOWS ? fine : (series.timeline ?? [])).filter((w) => w.requests > 0)
  if (windows.length < MIN_WINDOWS) return null
  const p50 = levelSpread(
    windows.map((w) => w.p50Ms),
    windows.map((w) => w.requests),
  )
  if (p50 === null) return null
  // A window's p99 is a percentile only from requestsNeeded(99) requests (368); in smaller ones it is their slowest
  // request, whose scatter is sampling noise the order-statistic interval already holds, not wander.
  const full = windows.filter((w) => w.requests >= requestsNeeded(99))
  const p99 =
    full.length >= MIN_WINDOWS
      ? levelSpread(
          full.map((w) => w.p99Ms),
          full.map((w) => w.requests),
        )
      : null
  return { p50, p99, df: Math.floor(windows.length / blockLength(windows.length)) - 1 }
}

/** Relative standard deviation of the weighted mean of `values` under a moving-block bootstrap. */
export function levelSpread(values: number[], weights: number[]): number | null {
  const m = values.length
  const level = weightedMean(values, weights)
  if (!(level > 0)) return null
  const block = blockLength(m)
  const blocks = Math.ceil(m / block)
  const random = seededRandom(SEED)
  let [sum, sumSq] = [0, 0]
  for (let r = 0; r < RESAMPLES; r++) {
    let [num, den] = [0, 0]
    for (let b = 0; b < blocks; b++) {
      const start = Math.floor(random() * (m - block + 1))
      for (let i = start; i < start + block; i++) {
        num += values[i]! * weights[i]!
        den += weights[i]!
      }
    }
    const x = num / den
    sum += x
    sumSq += x * x
  }
  const mean = sum / RESAMPLES
  const variance = Math.max(0, sumSq / RESAMPLES - mean * mean) * (RESAMPLES / (RESAMPLES - 1))
  return Math.sqrt(variance) / level
}

/** m^(1/2) windows a block (see above). */
function blockLength(m: number): number {
  return Math.max(1, Math.round(Math.sqrt(m)))
}

function weightedMean(values: number[], weights: number[]): number {
  let [num, den] = [0, 0]
  for (let i = 0; i < values.length; i++) {
    num += values[i]! * weights[i]!
    den += weights[i]!
  }
  return num / den
}

/**
 * The relative spread applied to a latency metric. Drift scales the whole
 * distribution, and the windows' medians see it with the least sampling
 * noise of their own: below p99, and for the mean, p50's spread. From p99
 * up the tail may wander on its own (pauses that hit some seconds), so the
 * larger of p50's and p99's (when windows are big enough to have one); no window holds enough requests to see beyond
 * p99, where the order-statistic interval is the wider anyway.
 */
export function relativeSpread(spread: RunSpread, metric: string): number {
  if (metric === 'mean' || Number(metric.slice(1)) < 99) return spread.p50
  return Math.max(spread.p50, spread.p99 ?? 0)
}

interface SpreadAt {
  value: number
  /** Relative spread of the value, or null when its run has none. */
  spread: number | null
  df: number
}

/**
 * The interval of a change `diff` between two values with relative spreads,
 * at the drift level; Student's t on the fewer degrees of freedom. Drift
 * scales latencies, so the bound is on the ratio of the two values (the log
 * of the after value, whose standard deviation is about the relative
 * spread), and read back as a difference: a run whose windows wander by
 * half their level widens the ratio it allows, not a difference of its own
 * size in both directions (which read a 2,500-fold rise of p50, a queue
 * that grew all run long, as "within noise", and allowed latencies below 0).
 * For the small spreads of a steady run it is the symmetric bound of old.
 */
export function timeSeriesInterval(diff: number, before: SpreadAt, after: SpreadAt): Interval | null {
  const known = [before, after].filter((s) => s.spread !== null)
  if (known.length === 0) return null
  const t = tBound(Math.min(...known.map((s) => s.df)))
  if (!(before.value > 0 && after.value > 0)) {
    const half = t * Math.hypot(...known.map((s) => s.spread! * s.value))
    return [diff - half, diff + half]
  }
  // diff = after - before: from the lowest after value drift alone could have made to the highest.
  const half = t * Math.hypot(...known.map((s) => s.spread!))
  return [after.value * Math.exp(-half) - before.value, after.value * Math.exp(half) - before.value]
}

/** The interval of a change `diff` from the baselines' mean, from the spread of their values (k >= 2), at the drift level. */
export function baselineSetInterval(diff: number, baselines: number[]): Interval | null {
  const k = baselines.length
  if (k < 2) return null
  const mean = baselines.reduce((a, b) => a + b, 0) / k
  const s = Math.sqrt(baselines.reduce((a, b) => a + (b - mean) ** 2, 0) / (k - 1))
  const half = tBound(k - 1) * s * Math.sqrt(1 + 1 / k)
  return [diff - half, diff + half]
}
