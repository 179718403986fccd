import { test } from 'node:test'
import assert from 'node:assert/strict'
import { bestSplit, ChangeDetector, changeLine, cusumThreshold, CUSUM_K, FALSE_ALARM_EVERY_S, type ChangeMetric } from '../src/stats/change-points.js'
import { seededRandom } from '../src/core/random.js'

/** One simulated second of a lane: `n` requests with lognormal latencies (median `medianMs`), each failing with probability `errorP`. */
function second(random: () => number, n: number, medianMs: number, errorP: number, slowMs: number): { p99: number; slow: number; errors: number } {
  const latencies = new Float64Array(n)
  let errors = 0
  let slow = 0
  for (let i = 0; i < n; i++) {
    const gauss = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
    const ms = medianMs * Math.exp(0.5 * gauss)
    latencies[i] = ms
    if (ms > slowMs) slow++
    if (random() < errorP) errors++
  }
  latencies.sort()
  return { p99: latencies[Math.ceil(0.99 * n) - 1]!, slow, errors }
}

function detectors(): Record<ChangeMetric, ChangeDetector> {
  return { p99: new ChangeDetector('p99'), slow: new ChangeDetector('slow'), error_rate: new ChangeDetector('error_rate') }
}

function feed(d: Record<ChangeMetric, ChangeDetector>, t: number, s: { p99: number; slow: number; errors: number }, n: number) {
  return [d.p99.push(t, s.p99, n), d.slow.push(t, s.slow, n), d.error_rate.push(t, s.errors, n)].filter((c) => c !== null)
}

test('the threshold is the one the stated false-alarm rate gives (Siegmund), and grows with it', () => {
  const h = cusumThreshold(FALSE_ALARM_EVERY_S, CUSUM_K)
  assert.equal(Math.round(h * 10) / 10, 10.2)
  assert.ok(cusumThreshold(3600) < h)
})

test('a steady target: none in its first 10 minutes, and over 12 simulated hours no more false alarms than the stated rate allows', () => {
  const random = seededRandom(3)
  const d = detectors()
  const n = 200
  const found = []
  for (let t = 1; t <= 12 * 3600; t++) found.push(...feed(d, t, second(random, n, 10, 0.003, 25), n))
  assert.deepEqual(
    found.filter((c) => c.detectedAtS <= 600),
    [],
  )
  // One per 24 h per series: 1.5 expected in 3 series x 12 h; more than 6 has a chance of 0.1 % (Poisson). h = 5 gives dozens.
  assert.ok(found.length <= 6, `${found.length} false alarms: ${JSON.stringify(found)}`)
})

test('a step in the p99 and in the errors is found, placed at the step with an interval that holds it', () => {
  const random = seededRandom(7)
  const d = detectors()
  const n = 200
  const found = []
  for (let t = 1; t <= 900; t++) {
    const after = t >= 600
    found.push(...feed(d, t, second(random, n, after ? 20 : 10, after ? 0.05 : 0.003, 60), n))
  }
  const p99 = found.find((c) => c.metric === 'p99')
  assert.ok(p99, 'the p99 step is found')
  assert.equal(p99.direction, 'up')
  assert.ok(p99.intervalS[0] <= 600 && 600 <= p99.intervalS[1], `interval ${p99.intervalS} holds 600`)
  assert.ok(Math.abs(p99.atS - 600) <= 5, `placed at ${p99.atS}`)
  assert.ok(p99.detectedAtS >= p99.atS && p99.detectedAtS < 620)
  const errors = found.find((c) => c.metric === 'error_rate')
  assert.ok(errors && errors.direction === 'up' && errors.intervalS[0] <= 600 && 600 <= errors.intervalS[1])
  // A count summed over blocks is placed to a block (the one before the step at worst): its interval still holds the step.
  assert.ok(
    found.every((c) => c.intervalS[0] <= 600 && 600 <= c.intervalS[1] && c.atS >= 600 - 2 * (c.blockS ?? 1) - 5),
    `each at the step: ${JSON.stringify(found)}`,
  )
})

test('a restart (a mark) takes a new baseline: the level after it is no change', () => {
  const random = seededRandom(11)
  const d = detectors()
  const n = 200
  const found = []
  for (let t = 1; t <= 600; t++) {
    if (t === 300) for (const det of Object.values(d)) det.restart()
    found.push(...feed(d, t, second(random, n, t >= 300 ? 20 : 10, 0.003, 60), n))
  }
  assert.deepEqual(found, [])
})

/** A trial's seconds (hedgebench watch, 100 requests/s a lane, 2026-12-05): the p99 of each lane, ms; the target slowed in second 16. */
const TRIAL_P99 = {
  plain: [
    1.43, 2.86, 2.84, 2.31, 1.56, 4.54, 4.33, 21.2, 27.1, 12.1, 3.9, 16.2, 4.17, 3.81, 3.52, 289.8, 292.1, 289, 288, 287.7, 289, 286.2, 286.7, 292.1, 289.8,
  ],
  hedged: [
    1.59, 1.51, 1.89, 1.37, 1.43, 3.94, 5.16, 30.9, 36.8, 10.5, 3.09, 22.9, 2.84, 13.7, 2.41, 293.1, 293.1, 288.8, 288.8, 286.7, 288, 287.5, 286, 289, 289.3,
  ],
}

test('a step after spikes in the baseline: placed at the step, and its levels are what the seconds on each side show', () => {
  for (const [lane, p99s] of Object.entries(TRIAL_P99)) {
    const d = new ChangeDetector('p99')
    const found = p99s.map((p99, i) => d.push(i + 1, p99, 100)).filter((c) => c !== null)
    assert.equal(found.length, 1, `${lane}: ${JSON.stringify(found)}`)
    const c = found[0]!
    // Where the CUSUM was last at zero put the hedged lane's step at the spike in second 8 or 9 ("up at 9 s (9-16 s)").
    assert.deepEqual([c.direction, c.atS], ['up', 16], changeLine(c, lane))
    assert.ok(c.intervalS[0] <= 16 && 16 <= c.intervalS[1] && c.intervalS[0] > 9, changeLine(c, lane))
    // The median second on each side (the old level read back from the standardised samples said 13.5 ms -> 1.35 s for the plain lane).
    const before = [...p99s.slice(0, 15)].sort((a, b) => a - b)[7]!
    assert.equal(c.before, before, changeLine(c, lane))
    const after = p99s.slice(15, c.detectedAtS)
    assert.ok(c.after >= Math.min(...after) && c.after <= Math.max(...after), changeLine(c, lane))
  }
})

test('bestSplit: the split of least squares within, in the direction asked, with the splits within 1.92 of its log-likelihood', () => {
  const ys = [0, 0.1, -0.1, 0, 0.05, 1, 1.1, 0.9, 1]
  assert.deepEqual(bestSplit(ys, 'up', 0.01), { at: 5, within: [5] })
  // No shift down fits: the last split stands, with everything as its interval.
  assert.equal(bestSplit(ys, 'down', 0.01).at, 8)
  // A step of one spread: the interval widens around it.
  const noisy = [0, 1, -1, 0.5, -0.5, 1, 2, 0, 1.5, 0.5]
  const split = bestSplit(noisy, 'up', 0.01)
  assert.ok(split.within.includes(split.at) && split.within.length > 1, JSON.stringify(split))
})
