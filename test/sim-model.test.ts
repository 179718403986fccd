import { test } from 'node:test'
import assert from 'node:assert/strict'
import { seededRandom } from '../src/core/random.js'
import { createReplicaModels, finishWithPauses, PauseSchedule } from '../src/sim/latency-model.js'
import type { ModelSpec } from '../src/sim/latency-model.js'

const pi: ModelSpec = { base: { type: 'uniform', min: 5, max: 15 }, stalls: [{ type: 'independent', probability: 0.01, ms: 1000 }] }

test('the same seed replays the same draws, one stream per replica', () => {
  const a = createReplicaModels(pi, 3, 42, 0)
  const b = createReplicaModels(pi, 3, 42, 0)
  // Interleave differently: per-replica streams must not care.
  const fromA = [0, 1, 2].map((i) => Array.from({ length: 50 }, () => a[i]!.draw().workMs))
  const fromB = [2, 1, 0].map((i) => Array.from({ length: 50 }, () => b[i]!.draw().workMs)).reverse()
  assert.deepEqual(fromA, fromB)
  assert.notDeepEqual(fromA[0], fromA[1])
  const other = createReplicaModels(pi, 1, 43, 0)[0]!.draw().workMs
  assert.notEqual(other, fromA[0]![0])
})

test('independent stalls hit at their probability (binomial, ±4σ)', () => {
  const n = 200_000
  const p = 0.01
  const [m] = createReplicaModels(pi, 1, 7, 0)
  let stalls = 0
  for (let i = 0; i < n; i++) {
    const d = m!.draw()
    assert.ok(d.workMs >= 5 && d.workMs <= 1015)
    if (d.stalled) {
      stalls++
      assert.ok(d.workMs >= 1005)
    }
  }
  const sigma = Math.sqrt(n * p * (1 - p))
  assert.ok(Math.abs(stalls - n * p) <= 4 * sigma, `${stalls} stalls of ${n}`)
})

test('lognormal base has its median; errors come at their rate with their status', () => {
  const spec: ModelSpec = { base: { type: 'lognormal', median: 20, sigma: 0.5 }, errors: { rate: 0.1, status: 503 } }
  const [m] = createReplicaModels(spec, 1, 1, 0)
  const n = 20_000
  const draws = Array.from({ length: n }, () => m!.draw())
  const sorted = draws.map((d) => d.workMs).sort((a, b) => a - b)
  // Median of n draws: its rank is binomial(n, 1/2); ±4σ in rank maps to these quantiles.
  const slack = (4 * Math.sqrt(n / 4)) / n
  assert.ok(sorted[Math.floor(n * (0.5 - slack))]! <= 20 && sorted[Math.ceil(n * (0.5 + slack))]! >= 20)
  const errors = draws.filter((d) => d.status === 503).length
  assert.ok(Math.abs(errors - n * 0.1) <= 4 * Math.sqrt(n * 0.1 * 0.9), `${errors} errors`)
  assert.ok(draws.every((d) => d.status === 503 || d.status === 200))
})

test('overrides: replica 2 of broken-replica is slower on every request', () => {
  const spec: ModelSpec = { base: { type: 'uniform', min: 5, max: 15 }, overrides: [{ index: 2, addMs: 80 }] }
  const models = createReplicaModels(spec, 3, 3, 0)
  for (let i = 0; i < 1000; i++) {
    assert.ok(models[0]!.draw().workMs <= 15)
    assert.ok(models[2]!.draw().workMs >= 85)
  }
})

test('pauses freeze work: a request inside a pause waits for its end, one spanning a pause is stretched', () => {
  const schedule = new PauseSchedule({ type: 'pause', everyMs: 100, durationMs: { min: 50, max: 50 }, scope: 'replica' }, seededRandom(5), 0)
  const start = schedule.nextStartAfter(0)
  const end = schedule.pauseEndAt(start)
  const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-6, `${a} != ${b}`)
  close(end - start, 50)
  // Arriving mid-pause: wait until the end, then do the work.
  close(finishWithPauses(start + 10, 5, [schedule]), end + 5)
  // Started 2 ms before the pause with 5 ms of work: 2 ms, frozen 50 ms, 3 ms more.
  const fresh = new PauseSchedule({ type: 'pause', everyMs: 100, durationMs: { min: 50, max: 50 }, scope: 'replica' }, seededRandom(5), 0)
  close(finishWithPauses(start - 2, 5, [fresh]), end + 3)
})

test('shared pauses hit every replica at the same moment; replica pauses do not', () => {
  const shared: ModelSpec = { base: { type: 'fixed', ms: 1 }, stalls: [{ type: 'pause', everyMs: 200, durationMs: { min: 100, max: 100 }, scope: 'shared' }] }
  const own: ModelSpec = { base: { type: 'fixed', ms: 1 }, stalls: [{ type: 'pause', everyMs: 200, durationMs: { min: 100, max: 100 }, scope: 'replica' }] }
  const s = createReplicaModels(shared, 3, 9, 0)
  const r = createReplicaModels(own, 3, 9, 0)
  let disagreeShared = 0
  let disagreeOwn = 0
  for (let t = 0; t < 20_000; t += 7) {
    const slowS = s.map((m) => m.finishAt(t, 1) - t > 1)
    const slowR = r.map((m) => m.finishAt(t, 1) - t > 1)
    if (new Set(slowS).size > 1) disagreeShared++
    if (new Set(slowR).size > 1) disagreeOwn++
  }
  assert.equal(disagreeShared, 0)
  assert.ok(disagreeOwn > 100, `independent replica pauses should often disagree (${disagreeOwn})`)
})
