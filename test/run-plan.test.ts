/**
 * The run as a plan (run/run-plan.ts), checked without a socket: which
 * windows a run's options make, in which order, with which lanes and sizes;
 * the hedge delay derived from a histogram built here; and the hedging
 * set-up and warnings that follow from it.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { deriveDelay, laneHedging, planRun, spreadMs, type PlannedWindow } from '../src/run/run-plan.js'
import { resolveOptions } from '../src/run/resolve-options.js'
import type { RunOptions } from '../src/run/run-options.js'
import { createHistogram, recordMs } from '../src/stats/histogram.js'
import type { MeasuredPhase } from '../src/stats/phase-snapshot.js'

/** Options resolved as a run resolves them (no target is reached: the URL is never dialled). */
const resolved = (o: Partial<RunOptions> = {}) => resolveOptions({ urls: ['http://127.0.0.1:9/', 'http://127.0.0.1:10/'], ...o }, 1)

/** Each window as `lanes/choice/requests/derives`, for compact comparison. */
const shape = (windows: PlannedWindow[]): string[] =>
  windows.map(
    (w) =>
      `${w.lanes.map((l) => l.name + (l.setting === undefined ? '' : l.setting)).join('+')}/${w.choice}/${w.size.requests}/${w.derivesDelay ? 'derives' : '-'}`,
  )

test('plan: warm-up, plain, hedged in order; the delay read from the warm-up, measured on its second half', () => {
  const plan = planRun(resolved({ requests: 300, warmup: 100 }))
  assert.deepEqual(shape(plan.windows), ['warmup/one/100/derives', 'plain/one/300/-', 'hedged/one/300/-'])
  assert.equal(plan.windows[0]!.lanes[0]!.steadyAfter, 50)
  assert.equal(plan.delayFrom, 'warmup')
})

test('plan: without a warm-up the plain phase gives the delay; --mode hedged alone has nothing measured', () => {
  assert.deepEqual(shape(planRun(resolved({ requests: 40, warmup: 0 })).windows), ['plain/one/40/derives', 'hedged/one/40/-'])
  const hedgedOnly = planRun(resolved({ requests: 40, warmup: 0, mode: 'hedged', hedge: { delay: 5 } }))
  assert.deepEqual(shape(hedgedOnly.windows), ['hedged/one/40/-'])
  assert.equal(hedgedOnly.delayFrom, null)
  // --mode plain: no hedged window, and no delay is ever derived.
  assert.deepEqual(shape(planRun(resolved({ requests: 40, warmup: 10, mode: 'plain' })).windows), ['warmup/one/10/-', 'plain/one/40/-'])
})

test('plan: interleaved is one window of both lanes, -n each, a coin per request; a sweep one window of every lane, in shuffled blocks', () => {
  assert.deepEqual(shape(planRun(resolved({ requests: 50, warmup: 20, schedule: 'interleaved' })).windows), [
    'warmup/one/20/derives',
    'plain+hedged/coin/100/-',
  ])
  // Each setting derives its own delay from the warm-up when its window starts: the warm-up itself derives none.
  const sweep = planRun(resolved({ requests: 50, warmup: 20 }), 3)
  assert.deepEqual(shape(sweep.windows), ['warmup/one/20/-', 'plain+hedged0+hedged1+hedged2/blocks/200/-'])
  assert.equal(sweep.delayFrom, 'warmup')
})

test('plan: -z sizes every window by time; the warm-up stops at --warmup or -z, and lasts at least its least duration', () => {
  const plan = planRun(resolved({ durationMs: 3000, warmup: 100 }))
  assert.deepEqual(
    plan.windows.map((w) => w.size),
    [
      { requests: 100, durationMs: 3000, minDurationMs: resolved({ durationMs: 3000, warmup: 100 }).warmupMinMs },
      { requests: null, durationMs: 3000, minDurationMs: 0 },
      { requests: null, durationMs: 3000, minDurationMs: 0 },
    ],
  )
})

/** A measured phase of `requests` requests whose delay basis holds 1..100 ms, `rounds` times each. */
function measured(rounds: number, requests: number, calls: number | null = null): MeasuredPhase {
  const h = createHistogram()
  for (let r = 0; r < rounds; r++) for (let ms = 1; ms <= 100; ms++) recordMs(h, ms)
  return { delayBasis: () => h, figures: { requests }, calls: calls === null ? null : { requests: calls } }
}

test('hedge delay: the p95 of the warm-up histogram, in words, with the basis it was measured on', () => {
  const { value, warnings } = deriveDelay(resolved().hedge, 'warmup', measured(10, 2000), 1)
  assert.equal(Math.round(value.ms), 95)
  assert.equal(Math.round(value.p50), 50)
  assert.equal(value.text, 'p95 of the last 1000 of 2000 warm-up requests = 95.0 ms')
  assert.deepEqual(value.warmupBasis, { requests: 1000, of: 2000 })
  assert.deepEqual(warnings, [])
  // From the plain phase, and with fan-out (calls, no per-request basis).
  assert.equal(deriveDelay(resolved().hedge, 'plain', measured(10, 1000), 1).value.text, 'p95 of 1000 plain-phase requests = 95.0 ms')
  const fan = deriveDelay(resolved().hedge, 'warmup', measured(10, 600, 3000), 3).value
  assert.equal(fan.text, 'p95 of the last 1000 of 3000 warm-up calls = 95.0 ms')
  assert.equal(fan.warmupBasis, undefined)
})

test('hedge delay: too few requests for the percentile, none answered, nothing measured, a fixed delay', () => {
  const few = deriveDelay(resolved({ hedge: { delay: 'p99' } }).hedge, 'warmup', measured(1, 200), 1)
  assert.equal(Math.round(few.value.ms), 99)
  assert.equal(few.warnings.length, 1)
  assert.match(few.warnings[0]!, /^the hedge delay is the p99 of only 100 requests, too few to place it \(a p99 needs at least \d+\); use --warmup \d+ or more/)
  // A target of a mix of 3 warms up on a third of the warm-up: the advice is for the run's --warmup, 3 x 2 x the need.
  const needed = Number(/needs at least (\d+)/.exec(few.warnings[0]!)![1])
  const third = deriveDelay(resolved({ hedge: { delay: 'p99' } }).hedge, 'warmup', measured(1, 200), 1, 3)
  assert.equal(
    third.warnings[0],
    `the hedge delay is the p99 of only 100 requests, too few to place it (a p99 needs at least ${needed}); use --warmup ${3 * 2 * needed} or more (each of the 3 targets warms up on 1/3 of it, its delay measured on the second half)`,
  )

  const none = deriveDelay(resolved().hedge, 'plain', measured(0, 30), 1)
  assert.deepEqual(none, {
    value: { ms: 1000, text: 'fallback 1 s (nothing measured)', p50: 0 },
    warnings: ['none of the 30 plain-phase requests was answered successfully to derive the hedge delay from; hedging with a 1 s delay'],
  })
  assert.deepEqual(deriveDelay(resolved().hedge, null, undefined, 1).warnings, [
    'no latency was measured to derive the hedge delay from; hedging with a 1 s delay',
  ])

  // A fixed delay is the delay; the measured p50 still comes with it (the hedge window's default).
  const fixed = deriveDelay(resolved({ hedge: { delay: 7 } }).hedge, 'warmup', measured(10, 2000), 1)
  assert.deepEqual({ ...fixed.value, p50: Math.round(fixed.value.p50) }, { ms: 7, text: 'fixed 7.00 ms', p50: 50 })
  assert.deepEqual(fixed.warnings, [])
})

test("lane hedging: the set-up a hedged lane records, the delay --parallel and --tied send at, and -t's warning", () => {
  const derived = deriveDelay(resolved().hedge, 'warmup', measured(10, 2000), 1).value
  const { value, warnings } = laneHedging(derived, resolved().hedge, 20_000)
  assert.deepEqual(warnings, [])
  assert.equal(value.minHedgeWindowMs, derived.p50)
  assert.deepEqual(value.setup, {
    delayMs: derived.ms,
    delaySource: derived.text,
    warmupBasis: { requests: 1000, of: 2000 },
    adaptive: false,
    maxAttempts: 2,
    budgetPct: 10,
    parallel: false,
    tied: false,
    cancelMode: 'abort',
  })

  const parallel = laneHedging(derived, resolved({ hedge: { parallel: true } }).hedge, 20_000).value
  assert.equal(parallel.setup.delayMs, 0)
  assert.equal(parallel.setup.delaySource, 'parallel: every attempt sent at once (delay 0)')
  assert.equal(parallel.setup.warmupBasis, undefined)

  const tied = laneHedging(derived, resolved({ hedge: { tied: true } }).hedge, 20_000).value
  assert.equal(tied.setup.delaySource, 'tied: both copies sent at once; the first server to start one drops the other')
  assert.equal(tied.setup.tied, true)
  assert.equal(tied.setup.warmupBasis, undefined)

  const adaptive = laneHedging(derived, resolved({ hedge: { adaptive: true, delayMinMs: 2, delayMaxMs: 400 } }).hedge, 20_000).value
  assert.equal(adaptive.setup.delaySource, `rolling p95 of recent original attempts, clamped to [2.00 ms, 400.0 ms], starting at ${derived.text}`)

  // A delay not below -t never fires on its timer: said once, with the worst case it leads to.
  const late = laneHedging({ ms: 500, text: 'fixed 500.0 ms', p50: 3 }, resolved({ hedge: { delay: 500 }, timeoutMs: 500 }).hedge, 500)
  assert.equal(late.warnings.length, 1)
  assert.match(late.warnings[0]!, /^the hedge delay \(500.0 ms\) is not below -t \(500.0 ms\).* up to 2 × -t/)
})

test('spread: one median of the phase before, at most a tenth of a timed window', () => {
  assert.equal(spreadMs(0, null), 0)
  assert.equal(spreadMs(12, null), 12)
  assert.equal(spreadMs(12, 50), 5)
  assert.equal(spreadMs(12, 1000), 12)
})
