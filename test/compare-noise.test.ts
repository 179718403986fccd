import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHistogram, percentileMs, recordMs } from '../src/stats/histogram.js'
import {
  countChange,
  meanDifference,
  percentileBounds,
  percentileDifference,
  percentileJudgeable,
  proportionDifference,
  rateDifference,
  requestsNeeded,
  verdictOf,
} from '../src/stats/noise.js'
import { seededRandom } from '../src/core/random.js'

function uniformHistogram(count: number, seed: number, lo: number, hi: number) {
  const next = seededRandom(seed)
  const h = createHistogram()
  for (let i = 0; i < count; i++) recordMs(h, lo + next() * (hi - lo))
  return h
}

test('order-statistic bounds bracket the sample percentile and narrow with more samples', () => {
  const small = uniformHistogram(1_000, 1, 10, 20)
  const large = uniformHistogram(100_000, 1, 10, 20)
  for (const h of [small, large]) {
    for (const p of [10, 50, 90, 99]) {
      const [lo, hi] = percentileBounds(h, p)!
      const value = percentileMs(h, p)
      assert.ok(lo <= value && value <= hi, `p${p}: ${lo} <= ${value} <= ${hi}`)
    }
  }
  const width = (h: ReturnType<typeof createHistogram>) => percentileBounds(h, 50)![1] - percentileBounds(h, 50)![0]
  assert.ok(width(large) < width(small) / 5, `${width(large)} vs ${width(small)}`)
  assert.equal(percentileBounds(createHistogram(), 50), null)
})

test('the true median of the distribution falls inside the interval in about 95 % of samples', () => {
  let covered = 0
  const trials = 200
  for (let seed = 1; seed <= trials; seed++) {
    const [lo, hi] = percentileBounds(uniformHistogram(500, seed, 10, 20), 50)!
    if (lo <= 15 && 15 <= hi) covered++
  }
  // Exact binomial coverage is >= 95 %; HDR rounding only widens it.
  assert.ok(covered >= 0.92 * trials, `covered ${covered}/${trials}`)
})

test('percentile difference interval: around 0 for the same distribution, shifted for a shifted one', () => {
  const a = uniformHistogram(20_000, 1, 10, 20)
  const same = percentileDifference(a, uniformHistogram(20_000, 2, 10, 20), 50)!
  assert.ok(same[0] < 0 && same[1] > 0, `${same}`)
  const shifted = percentileDifference(a, uniformHistogram(20_000, 3, 12, 22), 50)!
  assert.ok(shifted[0] > 1.5 && shifted[1] < 2.5, `${shifted}`)
})

test('mean, proportion and rate intervals', () => {
  const mean = meanDifference({ mean: 10, stddev: 2, n: 10_000 }, { mean: 10.5, stddev: 2, n: 10_000 })!
  assert.ok(mean[0] > 0.4 && mean[1] < 0.6)
  assert.equal(meanDifference({ mean: 1, stddev: 0, n: 1 }, { mean: 1, stddev: 0, n: 10 }), null)
  const share = proportionDifference({ count: 10, n: 1000 }, { count: 50, n: 1000 })!
  assert.ok(share[0] > 0.02 && share[1] < 0.06, `${share}`)
  assert.equal(proportionDifference({ count: 0, n: 0 }, { count: 1, n: 10 }), null)
  const rate = rateDifference({ count: 10_000, exposure: 10 }, { count: 10_000, exposure: 10 })!
  assert.ok(rate[0] < 0 && rate[1] > 0)
})

test('verdicts: direction, interval containing 0, and the 1 % practical floor', () => {
  assert.equal(verdictOf(5, 10, [4, 6], true), 'worse')
  assert.equal(verdictOf(5, 10, [4, 6], false), 'better')
  assert.equal(verdictOf(-5, 10, [-6, -4], true), 'better')
  assert.equal(verdictOf(5, 10, [-1, 6], true), 'within noise')
  assert.equal(verdictOf(0.05, 10, [0.01, 0.09], true), 'within noise', 'below 1 % of the baseline')
  assert.equal(verdictOf(0.0005, 0, [0.0001, 0.0009], true, 0.001), 'within noise', 'below one microsecond')
  assert.equal(verdictOf(5, 10, null, true), 'within noise')
})

test("the slow count's exact interval: Clopper-Pearson bounds as scipy.stats.beta.ppf gives them, and the change they imply", async () => {
  const { clopperPearson, countChange } = await import('../src/stats/noise.js')
  const close = (a: number, b: number): boolean => Math.abs(a - b) < 1e-9
  // scipy: beta.ppf(0.025, k, n - k + 1), beta.ppf(0.975, k + 1, n - k)
  for (const [k, n, low, high] of [
    [7, 49, 0.05942150569031297, 0.27242151269559745],
    [0, 49, 0, 0.07251926366427738],
    [40, 81, 0.38083549876395417, 0.6072834503440756],
    [5, 5, 0.4781762498950185, 1],
    [1, 1000, 2.531748749129404e-5, 0.005558924279826672],
  ] as const) {
    const [l, h] = clopperPearson(k, n)
    assert.ok(close(l, low) && close(h, high), `${k} of ${n}: [${l}, ${h}]`)
  }
  // 42 -> 7 of 4000 each: the rate ratio is pi / (1 - pi) = [0.0632, 0.3744]; in requests, 49 * (2 pi - 1) = [-43.2, -22.3].
  const c = countChange({ count: 42, n: 4000 }, { count: 7, n: 4000 })!
  assert.deepEqual(
    c.ratio.map((r) => r.toFixed(4)),
    ['0.0632', '0.3744'],
  )
  assert.deepEqual(
    c.difference.map((d) => d.toFixed(1)),
    ['-43.2', '-22.3'],
  )
  // None in either run: no evidence either way; the first run had none: no upper bound on the ratio.
  assert.deepEqual(countChange({ count: 0, n: 100 }, { count: 0, n: 100 })!.difference, [0, 0])
  assert.equal(countChange({ count: 0, n: 100 }, { count: 3, n: 100 })!.ratio[1], Infinity)
})

/** Latencies of `step` µs, 2 µs, ... `count * step` µs: exact in the histogram (under 2.048 ms), so rank r is r * step µs. */
function ranked(count: number, stepUs: number) {
  const h = createHistogram()
  for (let r = 1; r <= count; r++) recordMs(h, (r * stepUs) / 1000)
  return h
}

test('order-statistic bounds are the latencies at the ranks n*q -/+ 1.96*sqrt(n*q*(1-q)), clamped to the slowest only when it is itself a 97.5 % bound', () => {
  // n = 100, p50: spread 9.8, ranks floor(40.2) = 40 and ceil(59.8) + 1 = 61.
  assert.deepEqual(percentileBounds(ranked(100, 10), 50), [0.4, 0.61])
  // p90: spread 5.88, ranks 84 and 97.
  assert.deepEqual(percentileBounds(ranked(100, 10), 90), [0.84, 0.97])
  // p99 of 100: 0.99^100 = 37 % that all 100 lie below it, no upper bound; p1 likewise at the low end.
  assert.equal(percentileBounds(ranked(100, 10), 99), null)
  assert.equal(percentileBounds(ranked(100, 10), 1), null)
  // n = 400, p99: 0.99^400 = 1.8 %, so the slowest bounds it: ranks floor(392.1) = 392 and 401, clamped to 400.
  assert.deepEqual(percentileBounds(ranked(400, 2), 99), [0.784, 0.8])
  // p1 of 400, the mirror image: ranks 0 (clamped to 1) and ceil(7.9) + 1 = 9.
  assert.deepEqual(percentileBounds(ranked(400, 2), 1), [0.002, 0.018])
})

test('how many requests a percentile needs, and the edges of that count', () => {
  assert.equal(requestsNeeded(99), 368)
  assert.equal(requestsNeeded(99.9), 3688)
  assert.equal(requestsNeeded(1), 368, 'the low tail is the mirror image')
  assert.equal(requestsNeeded(50), 6, '0.5^5 = 3.1 % is not yet 2.5 %')
  assert.equal(requestsNeeded(0), Infinity)
  assert.equal(requestsNeeded(100), Infinity)
  assert.equal(percentileJudgeable(367, 99), false)
  assert.equal(percentileJudgeable(368, 99), true)
  assert.equal(percentileJudgeable(5, 50), false)
  assert.equal(percentileJudgeable(6, 50), true)
  assert.equal(percentileJudgeable(0, 50), false)
})

test("a percentile difference runs from after's low minus before's high to after's high minus before's low; none when either has no bound", () => {
  const before = ranked(100, 10) // p50 in [0.4, 0.61]
  const after = ranked(100, 12) // p50 in [0.48, 0.732]
  assert.deepEqual(
    percentileDifference(before, after, 50),
    [0.48 - 0.61, 0.732 - 0.4].map((x) => Number(x.toPrecision(9))),
  )
  assert.equal(percentileDifference(before, after, 99), null)
  assert.equal(percentileDifference(ranked(400, 2), before, 99), null)
  assert.equal(percentileDifference(before, ranked(400, 2), 99), null)
})

test('mean, share and rate intervals to nine significant digits, and when each has none', () => {
  // Welch: 1 +/- 1.96 * sqrt(2^2/100 + 3^2/50).
  assert.deepEqual(meanDifference({ mean: 10, stddev: 2, n: 100 }, { mean: 11, stddev: 3, n: 50 }), [0.0806785111, 1.91932149])
  assert.notEqual(meanDifference({ mean: 10, stddev: 2, n: 2 }, { mean: 11, stddev: 3, n: 2 }), null, 'two requests a side do')
  assert.equal(meanDifference({ mean: 10, stddev: 2, n: 100 }, { mean: 11, stddev: 3, n: 1 }), null)
  // 30 of 1000 against 45 of 500.
  assert.deepEqual(proportionDifference({ count: 30, n: 1000 }, { count: 45, n: 500 }), [0.0327778649, 0.0872221351])
  assert.equal(proportionDifference({ count: 3, n: 10 }, { count: 0, n: 0 }), null)
  // 1000 in 10 s against 1500 in 12 s: 25/s more, +/- 1.96 * sqrt(1000/10^2 + 1500/12^2).
  assert.deepEqual(rateDifference({ count: 1000, exposure: 10 }, { count: 1500, exposure: 12 }), [16.1437781, 33.8562219])
  assert.equal(rateDifference({ count: 1000, exposure: 0 }, { count: 1500, exposure: 12 }), null)
  assert.equal(rateDifference({ count: 1000, exposure: 10 }, { count: 1500, exposure: -1 }), null)
  assert.equal(rateDifference({ count: 1000, exposure: 10 }, { count: 1500, exposure: 0 }), null)
  assert.deepEqual(countChange({ count: 0, n: 100 }, { count: 0, n: 50 }), { ratio: [0, Infinity], difference: [0, 0] }, 'none slow in either: no evidence')
  assert.equal(countChange({ count: 3, n: 0 }, { count: 3, n: 100 }), null)
  assert.equal(countChange({ count: 3, n: 100 }, { count: 3, n: 0 }), null)
})

test('verdicts at their edges: an interval that touches 0, a change of exactly the floor, the larger of the two floors', () => {
  assert.equal(verdictOf(5, 10, [0, 6], true), 'within noise', 'touching 0 from above')
  assert.equal(verdictOf(-5, 10, [-6, 0], true), 'within noise', 'touching 0 from below')
  assert.equal(verdictOf(-5, 10, [-6, -4], false), 'worse')
  assert.equal(verdictOf(0.1, 10, [0.05, 0.15], true), 'worse', 'exactly 1 % of the baseline is not below the floor')
  assert.equal(verdictOf(-0.1, -10, [-0.15, -0.05], true), 'better', 'the floor is 1 % of the size of a negative baseline')
  assert.equal(verdictOf(0.5, 10, [0.4, 0.6], true, 1), 'within noise', 'the absolute floor when it is the larger')
  assert.equal(verdictOf(0, 0, [-1, 1], true), 'within noise')
  assert.equal(verdictOf(0, 0, [0.1, 1], true), 'within noise', 'no change is never better or worse')
})
