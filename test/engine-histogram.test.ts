/**
 * recordMs computes the HDR bucket index itself (integer operations) on the
 * hot path: the histogram it builds must be the library's, value for value,
 * including values that make an auto-resizing histogram grow.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHistogram, encodeHistogram, percentileMs, percentilesMs, recordMs } from '../src/stats/histogram.js'
import { seededRandom } from '../src/core/random.js'

test('recordMs records exactly what recordValue records', () => {
  const fast = createHistogram()
  const reference = createHistogram()
  let seed = 7
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed / 2147483648
  }
  const values: number[] = [0, 0.0004, 0.001, 0.0015, 1, 1.023, 1.024, 2.047, 2.048, 1023.999, 65_535.5, 70_000, 125_000]
  for (let i = 0; i < 200_000; i++) values.push(i % 7 === 0 ? random() * 90_000 : i % 3 === 0 ? random() * 0.05 : random() * 40)
  for (const ms of values) {
    recordMs(fast, ms)
    reference.recordValue(Math.max(1, Math.round(ms * 1000)))
  }
  assert.equal(fast.totalCount, reference.totalCount)
  assert.equal(fast.maxValue, reference.maxValue)
  assert.equal(fast.minNonZeroValue, reference.minNonZeroValue)
  for (const p of [0, 10, 50, 90, 99, 99.9, 99.99, 100]) assert.equal(fast.getValueAtPercentile(p), reference.getValueAtPercentile(p), `p${p}`)
  assert.equal(encodeHistogram(fast), encodeHistogram(reference))
})

test('percentilesMs reads many percentiles in one walk, each exactly what getValueAtPercentile gives', () => {
  const random = seededRandom(11)
  for (let k = 0; k < 40; k++) {
    const h = createHistogram()
    const n = 1 + Math.floor(random() * 3000)
    for (let i = 0; i < n; i++) recordMs(h, random() < 0.02 ? 1000 + random() * 50 : Math.exp(random() * 5))
    const ps = [0, 0.001, 1, 10, 50, 90, 99, 99.9, 99.99, 100, 100 * (1 - 1 / n), ...Array.from({ length: 100 }, () => random() * 100)]
    assert.deepEqual(
      percentilesMs(h, ps),
      ps.map((p) => percentileMs(h, p)),
      `n = ${n}`,
    )
  }
  assert.deepEqual(percentilesMs(createHistogram(), [50, 99]), [0, 0])
})
