import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ChangeDetector, cusumThreshold, CUSUM_K, FALSE_ALARM_EVERY_S, type ChangeMetric } from '../src/stats/change-points.js'
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
