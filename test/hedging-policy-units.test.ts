/**
 * The hedging policy as plain values (src/hedging/): the budget, outlier
 * ejection, replica choice and the rolling delay, each on a clock or a
 * random source the test controls, so every count and duration is exact.
 * These are also what `npm run mutate` runs against those files.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { TokenBucket, UNLIMITED_BUDGET } from '../src/hedging/token-bucket.js'
import { DEFAULT_EJECTION, ReplicaHealth, type EjectionListener } from '../src/hedging/replica-health.js'
import { RoundRobin, pickHedgeTarget } from '../src/hedging/replica-picker.js'
import { RollingPercentileDelay, fixedDelay } from '../src/hedging/delay-source.js'

test('token bucket: starts full at the burst, a hedge spends one token, an original earns the ratio, never above the burst', () => {
  const b = new TokenBucket(0.1, 2)
  assert.equal(b.tokens, 2)
  assert.equal(b.trySpend(), true)
  assert.equal(b.trySpend(), true)
  assert.equal(b.trySpend(), false, 'spent')
  assert.equal(b.tokens, 0)
  for (let i = 0; i < 9; i++) b.deposit()
  assert.equal(b.trySpend(), false, '9 originals at 10 % earn 0.9 of a token')
  b.deposit()
  assert.equal(b.trySpend(), true, 'the 10th earns the whole token')
  b.refund()
  assert.ok(Math.abs(b.tokens - 1) < 1e-9, `a refund gives the token back: ${b.tokens}`)
  for (let i = 0; i < 100; i++) b.deposit()
  assert.equal(b.tokens, 2, 'capped at the burst')
  b.refund()
  assert.equal(b.tokens, 2, 'a refund is capped too')
  assert.equal(new TokenBucket(0.1, 0).tokens, 1, 'a burst below 1 still allows one hedge')
  assert.equal(UNLIMITED_BUDGET.trySpend(), true)
})

/** A listener writing each event into `events` as a line, led by `prefix`; a mix's targets and counts at the end. */
function recorder(events: string[], prefix = ''): EjectionListener {
  return {
    replicaEjected: (o, cause, forMs, targets) => events.push(`${prefix}out ${o} ${forMs} ${cause}${targets ? ` ${JSON.stringify(targets)}` : ''}`),
    replicaReadmitted: (o) => events.push(`${prefix}in ${o}`),
  }
}

function healthAt(origins: string[], policy = { consecutiveFailures: 3, baseEjectionMs: 100, maxEjectionMs: 250 }) {
  let now = 0
  const events: string[] = []
  const health = new ReplicaHealth(origins, policy, recorder(events), () => now)
  return { health, events, advance: (ms: number) => (now += ms) }
}

test('ejection: exactly N failures in a row eject; a success in between resets the count', () => {
  const { health, events } = healthAt(['a', 'b'])
  health.record('a', 'E1')
  health.record('a', 'E2')
  health.record('a', null)
  health.record('a', 'E3')
  health.record('a', 'E4')
  assert.equal(health.isAvailable('a'), true, 'two in a row after a success: still in')
  health.record('a', 'E5')
  assert.equal(health.isAvailable('a'), false)
  assert.deepEqual(events, ['out a 100 3 failures in a row (last: E5)'])
  health.record('a', 'late')
  assert.equal(events.length, 1, 'answers from before the ejection do not count')
  health.record('zzz', 'E')
  assert.equal(health.isAvailable('zzz'), true, 'an origin it does not know is always available')
})

test('ejection: out for the back-off, readmitted on probation where one failure ejects again, for twice as long, capped', () => {
  const { health, events, advance } = healthAt(['a', 'b'])
  for (let i = 0; i < 3; i++) health.record('a', 'E')
  advance(99)
  assert.equal(health.isAvailable('a'), false, 'before its 100 ms')
  advance(1)
  assert.equal(health.isAvailable('a'), true, 'at its 100 ms')
  assert.equal(events.at(-1), 'in a')
  health.record('a', 'E')
  assert.equal(health.isAvailable('a'), false, 'probation: one failure ejects it')
  assert.equal(events.at(-1), 'out a 200 1 failure in a row (last: E)')
  advance(200)
  assert.equal(health.isAvailable('a'), true)
  health.record('a', 'E')
  assert.equal(events.at(-1), 'out a 250 1 failure in a row (last: E)', 'the third back-off (400 ms) is capped at 250')
  advance(250)
  assert.equal(health.isAvailable('a'), true)
  health.record('a', null)
  health.record('a', 'E')
  health.record('a', 'E')
  assert.equal(health.isAvailable('a'), true, 'an answer ends probation: the count starts again')
})

test('ejection: failures that arrive while a replica is out neither count nor lengthen its back-off', () => {
  // Three replicas: with two, the last-standing rule alone would stop a second ejection.
  const { health, events, advance } = healthAt(['a', 'b', 'c'])
  for (let i = 0; i < 3; i++) health.record('a', 'E')
  advance(50)
  for (let i = 0; i < 3; i++) health.record('a', 'late')
  advance(50)
  assert.equal(health.isAvailable('a'), true, 'back at its first 100 ms')
  assert.deepEqual(events, ['out a 100 3 failures in a row (last: E)', 'in a'])
})

test("ejection in a mix: the targets' lanes share one health, the lane of the last failure hears the ejection with each target's count, and its readmission", () => {
  const { health: shared, events: own, advance } = healthAt(['a', 'b'])
  const events: string[] = []
  const get = shared.lane(recorder(events, 'get: '), 'GET /a')
  const post = shared.lane(recorder(events, 'post: '), 'POST /c')
  post.record('a', 'E')
  get.record('a', null)
  post.record('a', 'E')
  post.record('a', 'E')
  assert.equal(get.isAvailable('a'), true, "GET /a's answer broke POST /c's run: two in a row")
  get.record('a', 'E')
  assert.equal(get.isAvailable('a'), false, 'out for every target')
  assert.deepEqual(events, ['get: out a 100 3 failures in a row (last: E) [{"target":"POST /c","failures":2},{"target":"GET /a","failures":1}]'])
  advance(100)
  assert.equal(post.isAvailable('a'), true)
  assert.equal(events.at(-1), 'get: in a', 'heard by the lane that heard the ejection')
  post.record('a', 'E')
  assert.equal(
    events.at(-1),
    'post: out a 200 1 failure in a row (last: E) [{"target":"POST /c","failures":1}]',
    'probation: the one failure, its target alone',
  )
  assert.deepEqual(own, [], "the shared health's own listener hears nothing of its lanes")
})

test('ejection with the defaults (5 in a row, 1 s) and no listener: nothing to tell, nothing thrown', () => {
  let now = 0
  const health = new ReplicaHealth(['a', 'b'], DEFAULT_EJECTION, null, () => now)
  for (let i = 0; i < 4; i++) health.record('a', 'E')
  assert.equal(health.isAvailable('a'), true, 'four in a row')
  health.record('a', 'E')
  assert.equal(health.isAvailable('a'), false, 'the fifth ejects')
  now = 999
  assert.equal(health.isAvailable('a'), false)
  now = 1000
  assert.equal(health.isAvailable('a'), true, 'readmitted at 1 s')
  // On the default clock (performance.now()): out at once, for a second no test statement takes.
  const real = new ReplicaHealth(['a', 'b'], DEFAULT_EJECTION)
  for (let i = 0; i < 5; i++) real.record('a', 'E')
  assert.equal(real.isAvailable('a'), false)
})

test('ejection: the last replica standing is never ejected', () => {
  const { health, events } = healthAt(['a', 'b'])
  for (let i = 0; i < 3; i++) health.record('a', 'E')
  for (let i = 0; i < 10; i++) health.record('b', 'E')
  assert.equal(health.isAvailable('a'), false)
  assert.equal(health.isAvailable('b'), true)
  assert.equal(events.length, 1)
})

test('round-robin: in order from the first given, skipping ejected replicas', () => {
  const rr = new RoundRobin(['a', 'b', 'c'], null, 1)
  assert.deepEqual([rr.next(), rr.next(), rr.next(), rr.next()], ['b', 'c', 'a', 'b'])
  const { health } = healthAt(['a', 'b', 'c'])
  for (let i = 0; i < 3; i++) health.record('b', 'E')
  const skipping = new RoundRobin(['a', 'b', 'c'], health)
  assert.deepEqual([skipping.next(), skipping.next(), skipping.next(), skipping.next()], ['a', 'c', 'a', 'c'])
  assert.equal(new RoundRobin(['a', 'b'], null, 5).next(), 'b', 'a shard index past the replicas wraps')
})

test('hedge target: a replica the request has not tried; then one not busy; then not the last used; never an ejected one', () => {
  const r = ['a', 'b', 'c']
  const first = () => 0
  const last = () => 0.999
  assert.equal(pickHedgeTarget(r, ['a'], first), 'b')
  assert.equal(pickHedgeTarget(r, ['a'], last), 'c')
  assert.equal(pickHedgeTarget(r, ['b'], first, null, ['a', 'b']), 'c', 'tried a (finished) and b (busy): c')
  assert.equal(pickHedgeTarget(r, ['c'], first, null, ['a', 'b', 'c']), 'a', 'all tried: one not busy')
  assert.equal(pickHedgeTarget(r, ['a', 'b', 'c'], last, null, ['a', 'b', 'c']), 'b', 'all busy: any but the most recent')
  assert.equal(pickHedgeTarget(['solo'], ['solo'], first), 'solo')
  const { health } = healthAt(r)
  for (let i = 0; i < 3; i++) health.record('b', 'E')
  assert.equal(pickHedgeTarget(r, ['a'], first, health), 'c', 'b is ejected')
  assert.equal(pickHedgeTarget(['a', 'b'], ['a', 'b'], first, null, ['a', 'b']), 'a', 'two replicas, both busy: not the most recent (b)')
  assert.equal(pickHedgeTarget(r, ['a', 'b'], first, null, ['a', 'b', 'c']), 'c', 'all tried, a and b busy: c, the one not busy')
  const two = healthAt(r).health
  for (let i = 0; i < 3; i++) two.record('a', 'E')
  for (let i = 0; i < 3; i++) two.record('c', 'E')
  assert.equal(pickHedgeTarget(r, ['b'], first, two, ['b']), 'b', 'the only replica in, though tried, busy and the most recent')
})

test('rolling delay: the percentile of the recent window, refreshed every 32 samples, clamped', () => {
  assert.equal(fixedDelay(7).current(), 7)
  const d = new RollingPercentileDelay({ percentile: 95, initialMs: 50, minMs: 10, maxMs: 80, windowRequests: 100 })
  assert.equal(d.current(), 50)
  for (let i = 1; i <= 31; i++) d.observe(i)
  assert.equal(d.current(), 50, 'not refreshed before 32 samples')
  d.observe(32)
  // ceil(0.95 * 32) = 31st smallest of 1..32
  assert.equal(d.current(), 31)
  for (let i = 0; i < 32; i++) d.observe(1000)
  assert.equal(d.current(), 80, 'clamped to the maximum')
  for (let i = 0; i < 100; i++) d.observe(1)
  assert.equal(d.current(), 10, 'the old samples left the 100-sample window; clamped to the minimum')
  assert.equal(new RollingPercentileDelay({ percentile: 50, initialMs: 1, minMs: 5, maxMs: 9 }).current(), 5, 'the initial delay is clamped too')
})

test('rolling delay by age: samples older than the window are left out', () => {
  let now = 0
  const d = new RollingPercentileDelay({ percentile: 95, initialMs: 20, minMs: 0, maxMs: 1000, windowMs: 100, now: () => now })
  for (let i = 0; i < 32; i++) d.observe(500)
  assert.equal(d.current(), 500)
  now = 100
  for (let i = 0; i < 32; i++) d.observe(5)
  assert.equal(d.current(), 500, 'at 100 ms the first samples are still in the window: p95 of 64 is one of them')
  now = 150
  for (let i = 0; i < 32; i++) d.observe(6)
  assert.equal(d.current(), 6, 'the 500 ms samples are 150 ms old: left out')
})
