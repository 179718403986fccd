import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHistogram, percentileMs, recordMs } from '../src/stats/histogram.js'
import { meanDifference, percentileBounds, percentileDifference, proportionDifference, rateDifference, verdictOf } from '../src/stats/noise.js'
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
