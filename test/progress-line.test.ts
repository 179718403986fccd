/** The progress bar's line and its ETA for the whole run (pure functions; the terminal side is progress-tty.test.ts). */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { etaSeconds, planOf, progressLine, sweepPlanOf, type ProgressView } from '../src/cli/progress-line.js'

const base = { warmup: 100, mode: 'both', schedule: 'sequential', requests: 400, durationMs: null } as const

test('the plan follows the phases run.ts runs', () => {
  assert.deepEqual(
    planOf(base).map((w) => [w.phase, w.requests]),
    [
      ['warmup', 100],
      ['plain', 400],
      ['hedged', 400],
    ],
  )
  assert.deepEqual(
    planOf({ ...base, mode: 'hedged', warmup: 0 }).map((w) => w.phase),
    ['hedged'],
  )
  assert.deepEqual(
    planOf({ ...base, schedule: 'interleaved' }).map((w) => [w.phase, w.requests]),
    [
      ['warmup', 100],
      ['hedged', 800],
    ],
  )
  assert.deepEqual(
    planOf({ ...base, requests: null, durationMs: 5000 })
      .slice(1)
      .map((w) => w.durationMs),
    [5000, 5000],
  )
})

test('ETA covers the rest of this window and every later one', () => {
  const plan = planOf(base)
  // In the warm-up at 100 req/s with 50 of 100 done: 0.5 s left here, then 2 x 400 requests = 8 s.
  const v: ProgressView = { phase: 'warmup', done: 50, total: 100, elapsedMs: 500, rate: 100, later: plan.slice(1), durationMs: null }
  assert.equal(etaSeconds(v), 8.5)
  // Timed phases: what is left of this one plus the later ones' durations, whatever the rate.
  const timed = planOf({ ...base, warmup: 0, requests: null, durationMs: 5000 })
  assert.equal(etaSeconds({ phase: 'plain', done: 10, total: null, elapsedMs: 2000, rate: null, later: timed.slice(1), durationMs: 5000 }), 8)
  // No rate yet and counted windows ahead: unknown, not a made-up figure.
  assert.equal(etaSeconds({ ...v, rate: null }), null)
})

test("a sweep: the warm-up, then one window of every lane; the ETA in the warm-up is the whole sweep's", () => {
  const plan = sweepPlanOf(base, 4)
  assert.deepEqual(
    plan.map((w) => [w.phase, w.requests]),
    [
      ['warmup', 100],
      ['4 settings', 2000],
    ],
  )
  // 50 of 100 warm-up requests done at 100 req/s: 0.5 s, then the plain lane's 400 and four settings' 400 each: 20 s.
  assert.equal(etaSeconds({ phase: 'warmup', done: 50, total: 100, elapsedMs: 500, rate: 100, later: plan.slice(1), durationMs: null }), 20.5)
  assert.deepEqual(
    sweepPlanOf({ ...base, warmup: 0 }, 1).map((w) => w.phase),
    ['1 setting'],
  )
})

test('a timed sweep (-z): one timed window of every lane; the ETA is the warm-up left plus -z, then what is left of -z', () => {
  const plan = sweepPlanOf({ ...base, requests: null, durationMs: 6000 }, 3)
  assert.deepEqual(
    plan.map((w) => [w.phase, w.requests, w.durationMs]),
    [
      ['warmup', 100, null],
      ['3 settings', null, 6000],
    ],
  )
  assert.equal(etaSeconds({ phase: 'warmup', done: 50, total: 100, elapsedMs: 500, rate: 100, later: plan.slice(1), durationMs: null }), 6.5)
  // In the window: what is left of -z, whatever the rate.
  assert.equal(etaSeconds({ phase: '3 settings', done: 900, total: null, elapsedMs: 4500, rate: null, later: [], durationMs: 6000 }), 1.5)
})

test('the line names phase, progress, rate and ETA, and never reaches the last column', () => {
  const v: ProgressView = { phase: 'hedged', done: 200, total: 400, elapsedMs: 1000, rate: 200, later: [], durationMs: null }
  const line = progressLine(v, 80)
  assert.match(line, /^hedged \[#{12}\.{12}\] 200\/400 {2}200 req\/s {2}ETA 1\.0s$/)
  for (const width of [1, 10, 30, 50]) assert.ok(progressLine(v, width).length <= width - 1, `width ${width}`)
  // Too narrow for a bar: the figures stay, the bar goes.
  assert.doesNotMatch(progressLine(v, 40), /\[/)
  assert.match(progressLine({ ...v, total: null, durationMs: 30_000, elapsedMs: 12_000 }, 80), /12s of 30s/)
})

test('issue 30 item 10: a warm-up past its count, running to its minimum duration, says so; its ETA is the time left', () => {
  const plan = planOf({ ...base, warmup: 1000, warmupMinMs: 2000 })
  assert.equal(plan[0]!.minDurationMs, 2000)
  // 1427 of 1000 after 1.4 s at 1000 req/s: 0.6 s to the minimum, then 2 x 400 requests = 0.8 s. It said "1427/1000" and an ETA
  // for 427 requests too many that grew with every one.
  const v: ProgressView = { phase: 'warmup', done: 1427, total: 1000, elapsedMs: 1400, rate: 1000, later: plan.slice(1), durationMs: null, minDurationMs: 2000 }
  assert.equal(etaSeconds(v), 1.4)
  assert.equal(progressLine(v, 100), 'warmup [#################.......] 1427 done, runs its 2.0s minimum  1000 req/s  ETA 1.4s')
  // Still short of its count: the later of the two ends.
  assert.equal(etaSeconds({ ...v, done: 500, elapsedMs: 1900 }), 0.5 + 0.8)
  assert.equal(etaSeconds({ ...v, done: 900, elapsedMs: 1000 }), 1 + 0.8)
  assert.match(progressLine({ ...v, done: 900, elapsedMs: 1000 }, 100), / 900\/1000 /)
  // Past the minimum too (the last requests in flight): the count again.
  assert.match(progressLine({ ...v, elapsedMs: 2100 }, 100), / 1427\/1000 /)
})
