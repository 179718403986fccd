/**
 * Is a difference between two runs real, or noise?
 *
 * How compare decides (plain words, copied into docs/compare-and-ci.md):
 *
 * Percentiles. A percentile measured from n requests is itself uncertain:
 * with another n requests from the same server, the p99 would land a little
 * elsewhere. Sort the n latencies; the true p-th percentile lies, with 95 %
 * confidence, between the latencies ranked n*q - 1.96*sqrt(n*q*(1-q)) and
 * n*q + 1.96*sqrt(n*q*(1-q)) (q = p/100). This "order-statistic" interval
 * assumes nothing about the shape of the distribution and is read straight
 * from each run's HDR histogram, so it is exact, deterministic and fast. For
 * two runs, the interval of the difference goes from (after's low - before's
 * high) to (after's high - before's low). When it excludes 0 (the two runs'
 * intervals do not overlap) the change is called better or worse; otherwise
 * it is "within noise". Non-overlap is a strict test (stricter than 95 %),
 * which is the side we want to err on before calling a regression.
 *
 * Too few requests. When the high rank passes the last request (or the low
 * rank falls before the first), the slowest request bounds the percentile
 * only if all n requests falling below it is unlikely (q^n <= 2.5 %, about
 * n*(1-q) >= 3.7: 368 requests for p99, 3688 for p99.9). With fewer, the
 * interval has no bound on that side (at n = 50 the p99.9 is just the
 * slowest request), and the percentile is "not enough requests": never
 * better or worse, and never a --fail-if gate. `requestsNeeded(p)` says how
 * many would do.
 *
 * Mean: Welch's interval, difference ± 1.96 * sqrt(sd1²/n1 + sd2²/n2).
 * Error rate: a two-proportion interval on the share of failed requests (so
 * runs with different request counts compare fairly).
 *
 * Slow count (requests over --slow): an exact interval, because the counts
 * are often small (42 against 7) and the normal approximation is poor there.
 * Given that K = k1 + k2 requests were slow in the two runs together, the
 * later run's share of them is Binomial(K, pi), and pi = n2 / (n1 + n2) when
 * both runs are equally slow per request. The Clopper-Pearson interval of pi
 * gives the interval of the rate ratio (pi / (1 - pi) * n1 / n2) and of the
 * difference, in requests of the later run. It excludes 0 exactly when the
 * conditional binomial test rejects "equally slow" at 5 %.
 * Requests/s and extra load: the counts behind them (requests, extra
 * attempts) are treated as Poisson counts.
 *
 * Min, max and standard deviation get no interval and are always "within
 * noise": they hang on one or a few extreme requests, and one extreme value
 * cannot be told apart from bad luck. Read p99.9 / p99.99 for the tail.
 *
 * Practical floor: a change smaller than 1 % of the first run's value (or
 * smaller than 1 µs, the histogram's resolution) is "within noise" even
 * when it is statistically clear, because nobody should act on it.
 */
import type { Histogram } from './histogram.js'

export type Verdict = 'better' | 'worse' | 'within noise' | 'not enough requests'

/** How a metric's interval was computed ('none': no interval, see above). */
export type NoiseMethod = 'order-statistic' | 'welch' | 'two-proportion' | 'exact-binomial' | 'poisson' | 'none'

/** A 95 % interval of (run value - baseline value), in the metric's unit. */
export type Interval = [low: number, high: number]

/** 95 % two-sided normal quantile. */
const Z95 = 1.96
/** One tail of the 95 % interval. */
const TAIL = 0.025
/** Changes below this share of the baseline are never called better or worse. */
const PRACTICAL_FLOOR_PCT = 1
/** One microsecond: the histogram resolution, in milliseconds. */
export const LATENCY_RESOLUTION_MS = 0.001

/**
 * 95 % order-statistic bounds (ms) of percentile `p` (0-100) of the
 * distribution a histogram was sampled from; null for an empty histogram or
 * when a bound would lie beyond the requests measured (see above).
 */
export function percentileBounds(h: Histogram, p: number): Interval | null {
  const ranks = boundRanks(h.totalCount, p)
  if (!ranks) return null
  return [valueAtRank(h, ranks[0]), valueAtRank(h, ranks[1])]
}

/**
 * Ranks (1 = fastest) of the interval's ends: B, the number of requests at or
 * below the true percentile, is Binomial(n, q), and the interval
 * [X(low), X(high)] covers it when low <= B <= high - 1. Ranks past the ends
 * are clamped to the fastest / slowest request, which is sound only while
 * that request is itself a 97.5 % bound: P(B = n) = q^n <= 2.5 % (and
 * (1-q)^n at the low end). Otherwise (n*(1-q) below about 3.7) null.
 */
function boundRanks(n: number, p: number): [low: number, high: number] | null {
  if (n === 0) return null
  const q = p / 100
  if (q ** n > TAIL || (1 - q) ** n > TAIL) return null
  const spread = Z95 * Math.sqrt(n * q * (1 - q))
  return [clampRank(Math.floor(n * q - spread), n), clampRank(Math.ceil(n * q + spread) + 1, n)]
}

function clampRank(rank: number, n: number): number {
  return Math.min(n, Math.max(1, rank))
}

/** Can percentile p be judged from n requests? */
export function percentileJudgeable(n: number, p: number): boolean {
  return boundRanks(n, p) !== null
}

/** The fewest requests from which percentile p gets a bounded interval: q^n <= 2.5 % (p99: 368, p99.9: 3688). */
export function requestsNeeded(p: number): number {
  const q = p / 100
  if (q <= 0 || q >= 1) return Infinity
  let n = Math.max(1, Math.floor(Math.log(TAIL) / Math.log(Math.max(q, 1 - q))))
  // The logarithm can land one below the edge by rounding; a few steps settle it.
  for (let i = 0; i < 3 && !percentileJudgeable(n, p); i++) n++
  return n
}

/** Latency (ms) of the request ranked `rank` (1 = fastest). */
function valueAtRank(h: Histogram, rank: number): number {
  // Half a rank below keeps getValueAtPercentile's round-up on `rank` itself.
  return Math.round(h.getValueAtPercentile((100 * (rank - 0.5)) / h.totalCount)) / 1000
}

/** Interval of percentile p in `after` minus percentile p in `before`. */
export function percentileDifference(before: Histogram, after: Histogram, p: number): Interval | null {
  const a = percentileBounds(before, p)
  const b = percentileBounds(after, p)
  if (!a || !b) return null
  return [round(b[0] - a[1]), round(b[1] - a[0])]
}

interface MeanSample {
  mean: number
  stddev: number
  n: number
}

/** Welch interval of after.mean - before.mean. */
export function meanDifference(before: MeanSample, after: MeanSample): Interval | null {
  if (before.n < 2 || after.n < 2) return null
  const se = Math.sqrt(before.stddev ** 2 / before.n + after.stddev ** 2 / after.n)
  return around(after.mean - before.mean, Z95 * se)
}

interface CountSample {
  /** Events (errors, slow requests). */
  count: number
  /** Out of this many trials (requests). */
  n: number
}

/** Interval of the difference of shares after - before, as a fraction (0-1). */
export function proportionDifference(before: CountSample, after: CountSample): Interval | null {
  if (before.n === 0 || after.n === 0) return null
  const pa = before.count / before.n
  const pb = after.count / after.n
  const se = Math.sqrt((pa * (1 - pa)) / before.n + (pb * (1 - pb)) / after.n)
  return around(pb - pa, Z95 * se)
}

/**
 * The exact (conditional binomial) 95 % intervals of a count's change, see
 * above: `ratio` of the later run's rate per request to the first's (its
 * high end is Infinity when the first run had none), and `difference` in
 * requests of the later run. Null when a run has no requests.
 */
export function countChange(before: CountSample, after: CountSample): { ratio: Interval; difference: Interval } | null {
  if (before.n === 0 || after.n === 0) return null
  const total = before.count + after.count
  if (total === 0) return { ratio: [0, Infinity], difference: [0, 0] }
  const [low, high] = clopperPearson(after.count, total)
  const ratio = (pi: number): number => (pi >= 1 ? Infinity : ((pi / (1 - pi)) * before.n) / after.n)
  const difference = (pi: number): number => total * pi - (total * (1 - pi) * after.n) / before.n
  return { ratio: [round(ratio(low)), round(ratio(high))], difference: [round(difference(low)), round(difference(high))] }
}

/** The 95 % Clopper-Pearson interval of a binomial share: k of n. */
export function clopperPearson(k: number, n: number): Interval {
  const low = k === 0 ? 0 : betaQuantile(TAIL, k, n - k + 1)
  const high = k === n ? 1 : betaQuantile(1 - TAIL, k + 1, n - k)
  return [low, high]
}

/** The x at which the regularized incomplete beta I_x(a, b) reaches p, by bisection (I is increasing in x). */
function betaQuantile(p: number, a: number, b: number): number {
  let [lo, hi] = [0, 1]
  for (let i = 0; i < 100 && hi - lo > 1e-15; i++) {
    const mid = (lo + hi) / 2
    if (incompleteBeta(mid, a, b) < p) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

/** Regularized incomplete beta I_x(a, b), by its continued fraction (Numerical Recipes, 6.4). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x))
  // The fraction converges fast below the mean; above it, use the symmetry I_x(a, b) = 1 - I_{1-x}(b, a).
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(x, a, b)) / a : 1 - (front * betaFraction(1 - x, b, a)) / b
}

/** The quantile of Student's t with `df` degrees of freedom at p (0.5 < p < 1), by bisection on its CDF. */
export function studentTQuantile(p: number, df: number): number {
  // P(T <= t) = 1 - I_{df/(df+t^2)}(df/2, 1/2) / 2 for t >= 0.
  const cdf = (t: number): number => 1 - incompleteBeta(df / (df + t * t), df / 2, 0.5) / 2
  let [lo, hi] = [0, 1]
  for (let i = 0; i < 64 && cdf(hi) < p; i++) hi *= 2
  for (let i = 0; i < 100 && hi - lo > 1e-9; i++) {
    const mid = (lo + hi) / 2
    if (cdf(mid) < p) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

/** Lentz's method for the incomplete beta's continued fraction. */
function betaFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300
  let c = 1
  let d = 1 - ((a + b) * x) / (a + 1)
  d = 1 / (Math.abs(d) < tiny ? tiny : d)
  let h = d
  for (let m = 1; m <= 10_000; m++) {
    const m2 = 2 * m
    for (const num of [(m * (b - m) * x) / ((a + m2 - 1) * (a + m2)), (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1))]) {
      d = 1 + num * d
      d = 1 / (Math.abs(d) < tiny ? tiny : d)
      c = 1 + num / c
      if (Math.abs(c) < tiny) c = tiny
      h *= d * c
    }
    if (Math.abs(d * c - 1) < 1e-15) break
  }
  return h
}

/** ln Γ(x) (Lanczos, g = 7; valid from 0.5): called with counts of at least 1, and with half-integers of t's degrees of freedom. */
function logGamma(x: number): number {
  const g = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7,
  ]
  const z = x - 1
  let sum = g[0]!
  for (let i = 1; i < 9; i++) sum += g[i]! / (z + i)
  const t = z + 7.5
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum)
}

interface RateSample {
  /** Events counted (requests, extra attempts). */
  count: number
  /** Over this exposure (seconds, requests). */
  exposure: number
}

/** Interval of count/exposure (after) - count/exposure (before), counts taken as Poisson. */
export function rateDifference(before: RateSample, after: RateSample): Interval | null {
  if (before.exposure <= 0 || after.exposure <= 0) return null
  const ra = before.count / before.exposure
  const rb = after.count / after.exposure
  const se = Math.sqrt(before.count / before.exposure ** 2 + after.count / after.exposure ** 2)
  return around(rb - ra, Z95 * se)
}

/**
 * The verdict for a change of `diff` from `base`, given its interval.
 * `lowerIsBetter` is true for latencies, errors, slow requests and load.
 */
export function verdictOf(diff: number, base: number, interval: Interval | null, lowerIsBetter: boolean, absoluteFloor = 0): Verdict {
  if (!interval) return 'within noise'
  const floor = Math.max((Math.abs(base) * PRACTICAL_FLOOR_PCT) / 100, absoluteFloor)
  if (Math.abs(diff) < floor || diff === 0) return 'within noise'
  const up = interval[0] > 0
  const down = interval[1] < 0
  if (!up && !down) return 'within noise'
  return up === lowerIsBetter ? 'worse' : 'better'
}

function around(centre: number, halfWidth: number): Interval {
  return [round(centre - halfWidth), round(centre + halfWidth)]
}

/** Nine significant digits: drops float dust so JSON stays readable. */
function round(x: number): number {
  return Number(x.toPrecision(9))
}
