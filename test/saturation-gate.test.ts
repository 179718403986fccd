/**
 * The saturation gate's clock, unit by unit: an overload answer closes the
 * gate for the time the answer asks (Retry-After in seconds or as a date,
 * grpc-retry-pushback-ms), bounded; on a clock the test moves, so the
 * durations are exact.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DEFAULT_SATURATION, SaturationGate, overloadBackoffMs as backoffOf } from '../src/hedging/saturation-gate.js'
import { httpOverloadSignal } from '../src/protocol/http.js'
import { rawHeaderLookup } from '../src/protocol/request-headers.js'

/** What HTTP's protocol makes of an answer (the gate reads no header itself). */
const httpSignal = (status: number, headers: string[] | null) => httpOverloadSignal(status, rawHeaderLookup(headers ?? []))
const overloadBackoffMs = (status: number, headers: string[] | null) => backoffOf(httpSignal(status, headers))

/** The gate told of an HTTP answer, as the hedged request tells it. */
function answered(gate: SaturationGate, status: number, headers: string[]): void {
  const signal = httpSignal(status, headers)
  if (signal) gate.signal('http://a', signal)
}

function gateAt(): { gate: SaturationGate; advance: (ms: number) => void } {
  let now = 1_000
  const gate = new SaturationGate(DEFAULT_SATURATION, () => now)
  return { gate, advance: (ms) => (now += ms) }
}

test('a 429 with Retry-After: 5 holds hedges back for exactly 5 s, not the 1 s default', () => {
  const { gate, advance } = gateAt()
  assert.equal(gate.refuse('http://a', true), null)
  answered(gate, 429, ['Retry-After', '5'])
  advance(4_999)
  assert.equal(gate.refuse('http://a', true), 'overload')
  assert.equal(gate.refuse('http://b', false), 'overload', 'an overload signal stops failover hedges too')
  advance(1)
  assert.equal(gate.refuse('http://a', true), null)
})

test('what an answer asks for: seconds, an HTTP date, pushback; the default without a value; 10 s at most', () => {
  assert.equal(overloadBackoffMs(429, ['retry-after', '2']), 2_000)
  assert.equal(overloadBackoffMs(429, null), 1_000)
  assert.equal(overloadBackoffMs(503, ['Retry-After', '3']), 3_000)
  assert.equal(overloadBackoffMs(503, null), null, 'a 503 without Retry-After is an error, not an overload signal')
  assert.equal(overloadBackoffMs(429, ['retry-after', '600']), 10_000)
  assert.equal(overloadBackoffMs(429, ['retry-after', 'soon']), 1_000)
  assert.equal(overloadBackoffMs(503, ['grpc-retry-pushback-ms', '250']), 250)
  const inThreeSeconds = new Date(Date.now() + 3_000).toUTCString()
  const fromDate = overloadBackoffMs(429, ['retry-after', inThreeSeconds])!
  // An HTTP date has whole seconds: between 2 and 3 s from now.
  assert.ok(fromDate > 1_000 && fromDate <= 3_000, `${fromDate} ms`)
  assert.equal(overloadBackoffMs(200, ['retry-after', '5']), null)
})

test('a later, shorter back-off does not shorten the one in force', () => {
  const { gate, advance } = gateAt()
  answered(gate, 429, ['retry-after', '5'])
  answered(gate, 429, ['retry-after', '1'])
  advance(4_000)
  assert.equal(gate.refuse('http://a', true), 'overload')
})

test('obeyOverload off: overload answers are ignored', () => {
  const gate = new SaturationGate({ ...DEFAULT_SATURATION, obeyOverload: false }, () => 0)
  answered(gate, 429, ['retry-after', '5'])
  assert.equal(gate.refuse('http://a', true), null)
})

test('a gRPC pushback holds hedges to its replica only, for the time it asks (10 s at most); a negative one for good', () => {
  const { gate, advance } = gateAt()
  gate.signal('http://a', { pushbackMs: 500 })
  assert.equal(gate.refuse('http://a', true), 'pushback')
  assert.equal(gate.refuse('http://a', false), 'pushback', 'a failover hedge too (gRFC A6: pushback applies to every further attempt)')
  assert.equal(gate.refuse('http://b', true), null, 'the other replicas are still hedged to')
  advance(500)
  assert.equal(gate.refuse('http://a', true), null)
  gate.signal('http://a', { pushbackMs: 60_000 })
  advance(10_000)
  assert.equal(gate.refuse('http://a', true), null)
  gate.signal('http://b', { pushbackMs: -1 })
  advance(3_600_000)
  assert.equal(gate.refuse('http://b', true), 'pushback')
})

test('error rate: judged over the last 100 outcomes once 20 are seen, above the limit only; it stops speculation, not failover', () => {
  const gate = new SaturationGate({ ...DEFAULT_SATURATION, maxErrorRate: 0.25 }, () => 0)
  for (let i = 0; i < 19; i++) gate.outcome(true)
  assert.equal(gate.refuse('http://a', true), null, '19 outcomes: not judged yet')
  gate.outcome(true)
  assert.equal(gate.refuse('http://a', true), 'errorRate', '20 of 20 failed')
  assert.equal(gate.refuse('http://a', false), null, 'a hedge a non-fatal answer asks for still goes')
  // 20 failures then 60 successes: 20 / 80 = 25 %, not above the limit.
  for (let i = 0; i < 60; i++) gate.outcome(false)
  assert.equal(gate.refuse('http://a', true), null, 'exactly 25 % is not above 25 %')
  gate.outcome(true)
  assert.equal(gate.refuse('http://a', true), 'errorRate', '21 / 81')
  // 100 successes push every failure out of the window of 100.
  for (let i = 0; i < 100; i++) gate.outcome(false)
  assert.equal(gate.refuse('http://a', true), null)
  for (let i = 0; i < 25; i++) gate.outcome(true)
  assert.equal(gate.refuse('http://a', true), null, '25 of the last 100')
  gate.outcome(true)
  assert.equal(gate.refuse('http://a', true), 'errorRate', '26 of the last 100')
  const off = new SaturationGate({ ...DEFAULT_SATURATION, maxErrorRate: null }, () => 0)
  for (let i = 0; i < 50; i++) off.outcome(true)
  assert.equal(off.refuse('http://a', true), null, '--suppress-at-error-rate off')
})

test('in flight: a replica with --hedge-max-inflight attempts under way gets no speculative hedge; others do', () => {
  const gate = new SaturationGate({ ...DEFAULT_SATURATION, maxInflight: 2 }, () => 0)
  gate.launched('http://a')
  assert.equal(gate.refuse('http://a', true), null)
  gate.launched('http://a')
  assert.equal(gate.refuse('http://a', true), 'targetBusy')
  assert.equal(gate.refuse('http://b', true), null)
  assert.equal(gate.refuse('http://a', false), null, 'failover is not held back')
  gate.settled('http://a')
  assert.equal(gate.refuse('http://a', true), null)
  const unlimited = new SaturationGate(DEFAULT_SATURATION, () => 0)
  for (let i = 0; i < 100; i++) unlimited.launched('http://a')
  assert.equal(unlimited.refuse('http://a', true), null)
})

test('pushback: that replica only, for the time it asks (at most 10 s); a negative one for good', () => {
  let now = 0
  const gate = new SaturationGate(DEFAULT_SATURATION, () => now)
  gate.signal('http://a', { pushbackMs: 500 })
  assert.equal(gate.refuse('http://a', false), 'pushback')
  assert.equal(gate.refuse('http://b', true), null)
  now = 499
  assert.equal(gate.refuse('http://a', true), 'pushback')
  now = 500
  assert.equal(gate.refuse('http://a', true), null)
  gate.signal('http://a', { pushbackMs: 60_000 })
  now = 10_499
  assert.equal(gate.refuse('http://a', true), 'pushback')
  now = 10_500
  assert.equal(gate.refuse('http://a', true), null, 'capped at 10 s')
  gate.signal('http://b', { pushbackMs: -1 })
  now = 1e9
  assert.equal(gate.refuse('http://b', true), 'pushback')
})

test('a back-off the answer cannot mean (negative, not a number) is the 1 s default; zero holds nothing', () => {
  assert.equal(backoffOf({ overloadMs: -5 }), 1000)
  assert.equal(backoffOf({ overloadMs: Number.NaN }), 1000)
  assert.equal(backoffOf({ overloadMs: Number.POSITIVE_INFINITY }), 1000)
  assert.equal(backoffOf({ overloadMs: 0 }), 0)
  assert.equal(backoffOf({ overloadMs: null }), 1000, 'an overload answer that names no time')
  assert.equal(backoffOf(null), null)
})

test('a pushback of 0 ms holds nothing back; only a negative one is for good', () => {
  const gate = new SaturationGate(DEFAULT_SATURATION, () => 0)
  gate.signal('http://a', { pushbackMs: 0 })
  assert.equal(gate.refuse('http://a', true), null)
})

test('in flight: the count is kept per attempt, so one attempt settling leaves the others counted', () => {
  const gate = new SaturationGate({ ...DEFAULT_SATURATION, maxInflight: 2 }, () => 0)
  for (let i = 0; i < 3; i++) gate.launched('http://a')
  gate.settled('http://a')
  assert.equal(gate.refuse('http://a', true), 'targetBusy', 'two still under way')
})

test('on the default clock (performance.now()), an overload answer closes the gate at once', () => {
  const gate = new SaturationGate(DEFAULT_SATURATION)
  gate.signal('http://a', { overloadMs: 5000 })
  assert.equal(gate.refuse('http://a', true), 'overload')
})
