/**
 * One hedged request's decisions, on a scripted wire (helpers/scripted-wire.ts):
 * when a hedge leaves (its delay, not a moment before; the deadline's
 * window; the budget; the saturation gate), where it goes, what every copy
 * carries (hedge number, idempotency key, tie id, gRPC's remaining time and
 * attempt count), which requests are never repeated, and what the caller is
 * told at the end. The hedge timer is fired by the test, as Node would, on
 * the script's clock. Against real servers: hedging-options,
 * hedging-idempotency, grpc-hedging, hedge-interceptor.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import type { Dispatcher } from 'undici'
import { rawHeaderLookup, type HeaderLookup } from '../src/protocol/request-headers.js'
import type { HedgeCaller } from '../src/engine/hedged-request.js'
import { SaturationGate, DEFAULT_SATURATION } from '../src/hedging/saturation-gate.js'
import { ReplicaHealth } from '../src/hedging/replica-health.js'
import { DEFAULT_HEDGE_HEADER, TIE_HEADER } from '../src/hedging/policy.js'
import { A, B, Caller, codeError, GRPC, HTTP1, raw, Script } from './helpers/scripted-wire.js'

const C = 'http://127.0.0.1:1003'

/** A copy's request headers, looked up by name. */
function headersOf(opts: Dispatcher.DispatchOptions): HeaderLookup {
  return rawHeaderLookup((opts.headers ?? []) as string[])
}

/** Ends the request (clears its timers): the original answers. */
function finish(s: Script<HedgeCaller>): void {
  s.answer(0)
}

/** Three replicas, a hedge 10 ms after each attempt (on the script's clock), sent one at a time. */
function timedOverThree(): Script<Caller> {
  return new Script({ parallel: false, maxAttempts: 3, replicas: [A, B, C] }, HTTP1, new Caller(), { delayMs: 10 })
}

/** The hedge timer fires at each of these times. */
function fireAt(s: Script<HedgeCaller>, ...times: number[]): void {
  for (const t of times) {
    s.t = t
    s.req.fireTimer()
  }
}

test('a hedge leaves when its delay is up, not before: a timer that fires early is armed again for the rest', () => {
  const s = new Script({ parallel: false }, HTTP1, new Caller(), { delayMs: 50 })
  s.connect(0, 1)
  s.t = 49
  s.req.fireTimer() // Node fired a millisecond early
  assert.equal(s.copies.length, 1)
  s.t = 53
  s.req.fireTimer()
  assert.equal(s.copies.length, 2)
  assert.equal(s.copies[1]!.opts.origin, B)
  s.connect(1, 54)
  s.headers(1, 200, [], 60)
  s.copies[1]!.handler.onComplete(null)
  assert.deepEqual(s.caller.outcome, { launched: 2, winner: 1, origin: B, hedgeFiredMs: 53, delayMs: 50, budgetDenied: false })
})

test('a timer re-armed five times leaves anyway: a clock that never reaches the delay cannot hold a hedge forever', () => {
  const s = new Script({ parallel: false }, HTTP1, new Caller(), { delayMs: 50 })
  s.t = 10
  for (let i = 0; i < 5; i++) s.req.fireTimer()
  assert.equal(s.copies.length, 1)
  s.req.fireTimer()
  assert.equal(s.copies.length, 2)
  finish(s)
})

test('each hedge arms the timer for the next one, up to the attempts allowed', () => {
  const s = timedOverThree()
  fireAt(s, 10, 20, 30)
  assert.deepEqual(
    s.copies.map((c) => c.opts.origin),
    [A, B, C],
  )
  assert.deepEqual(
    s.copies.map((c) => headersOf(c.opts)(DEFAULT_HEDGE_HEADER)),
    [undefined, '1', '2'],
  )
  finish(s)
  assert.equal(s.caller.outcome?.hedgeFiredMs, 10, 'the first hedge')
})

test('parallel: every attempt leaves at once, with a delay of 0', () => {
  const s = new Script({ maxAttempts: 3, replicas: [A, B, C] })
  assert.deepEqual(
    s.copies.map((c) => c.opts.origin),
    [A, B, C],
  )
  finish(s)
  assert.equal(s.caller.outcome?.delayMs, 0)
})

test('without replicas a hedge goes to the request’s own origin', () => {
  const s = new Script({ replicas: [] })
  assert.deepEqual(
    s.copies.map((c) => c.opts.origin),
    [A, A],
  )
  finish(s)
})

test('no hedge header when the policy names none', () => {
  const s = new Script({ header: null })
  assert.equal(headersOf(s.copies[1]!.opts)(DEFAULT_HEDGE_HEADER), undefined)
  assert.equal(s.copies[1]!.opts.origin, B)
  finish(s)
})

test('a hedge that would leave too close to the deadline is not sent, and says so', () => {
  const s = new Script({ parallel: false, deadlineMs: 100, minHedgeWindowMs: 30 }, HTTP1, new Caller(), { delayMs: 50 })
  s.t = 71
  s.req.fireTimer()
  assert.equal(s.copies.length, 1)
  assert.ok(s.log.events.includes('deadline suppressed'))
  finish(s)
})

test('a hedge with exactly the window left still leaves', () => {
  const s = new Script({ parallel: false, deadlineMs: 100, minHedgeWindowMs: 30 }, HTTP1, new Caller(), { delayMs: 50 })
  s.t = 70
  s.req.fireTimer()
  assert.equal(s.copies.length, 2)
  assert.ok(!s.log.events.includes('deadline suppressed'))
  finish(s)
})

test('gRPC: every copy carries the time left before the deadline, a hedge its attempt number', () => {
  const s = new Script({ parallel: false, deadlineMs: 100 }, GRPC, new Caller(), { delayMs: 30, request: { method: 'POST', idempotent: true } })
  s.t = 30
  s.req.fireTimer()
  const [first, hedge] = s.copies.map((c) => headersOf(c.opts))
  assert.equal(first!('grpc-timeout'), '100m')
  assert.equal(first!('grpc-previous-rpc-attempts'), undefined)
  assert.equal(hedge!('grpc-timeout'), '70m')
  assert.equal(hedge!('grpc-previous-rpc-attempts'), '1')
  finish(s)
})

test('the deadline fails a request nobody answered, and aborts a winner still answering', async () => {
  const unanswered = new Script({ maxAttempts: 1, deadlineMs: 5 })
  unanswered.connect(0)
  const err = await unanswered.caller.failed
  assert.equal((err as { code?: string }).code, 'HEDGE_DEADLINE_EXCEEDED')
  assert.equal(err.message, 'deadline of 5 ms exceeded')
  // No answer to abort: the request itself fails, and its copy on the wire is reset as a loser.
  assert.equal((unanswered.copies[0]!.aborted as { code?: string }).code, 'HEDGE_CANCELLED')
  assert.deepEqual(unanswered.log.events.slice(-1), ['cancelled 0'])

  const streaming = new Script({ maxAttempts: 1, deadlineMs: 5 })
  streaming.connect(0)
  streaming.headers(0, 200)
  const reason = await streaming.copies[0]!.whenAborted
  assert.equal((reason as { code?: string }).code, 'HEDGE_DEADLINE_EXCEEDED')
  streaming.copies[0]!.handler.onError(reason)
  assert.equal((await streaming.caller.failed).message, 'deadline of 5 ms exceeded')
})

test('the budget refuses a hedge: counted, and the request says so', () => {
  const s = new Script({ maxAttempts: 3, replicas: [A, B, C], budgetPct: 10, budgetBurst: 1 })
  assert.equal(s.copies.length, 2, 'one token: one hedge')
  assert.equal(s.log.events.filter((e) => e === 'budget denied').length, 1)
  finish(s)
  assert.equal(s.caller.outcome?.budgetDenied, true)
})

test('the saturation gate holds a hedge on a timer while errors run high, but not the failover a non-fatal answer asks for', () => {
  const gate = new SaturationGate(DEFAULT_SATURATION, () => 0)
  for (let i = 0; i < 20; i++) gate.outcome(true)
  const s = new Script({ parallel: false, saturation: gate }, HTTP1, new Caller(), { delayMs: 10 })
  s.connect(0)
  s.t = 10
  s.req.fireTimer()
  assert.equal(s.copies.length, 1)
  assert.ok(s.log.events.includes('suppressed errorRate'))
  s.headers(0, 503, [], 12)
  assert.equal(s.copies.length, 2, 'failover')
  assert.ok(s.log.events.includes('non-fatal'))
  s.connect(1)
  s.headers(1, 200)
  s.copies[1]!.handler.onComplete(null)
  assert.deepEqual(s.caller.got, ['start', 'response 200', 'end {}'])
})

test('an overload answer closes the gate to every hedge, failover included', () => {
  const gate = new SaturationGate(DEFAULT_SATURATION, () => 0)
  const s = new Script({ parallel: false, saturation: gate }, HTTP1, new Caller(), { delayMs: 10 })
  s.connect(0)
  s.headers(0, 503, raw('retry-after', '5'))
  assert.equal(s.copies.length, 1)
  assert.ok(s.log.events.includes('suppressed overload'))
  assert.deepEqual(s.caller.got, ['start', 'response 503'], 'nothing else in flight: the 503 is the answer')
})

test('an attempt that fails hedges at once elsewhere; when every one failed, the caller gets the last error and the last replica', () => {
  const s = new Script({ parallel: false }, HTTP1, new Caller(), { delayMs: 50 })
  s.t = 3
  s.copies[0]!.handler.onError(codeError('ECONNREFUSED'))
  assert.equal(s.copies.length, 2)
  assert.ok(s.log.events.includes('non-fatal'))
  s.copies[1]!.handler.onError(codeError('ECONNRESET'))
  assert.deepEqual(s.caller.got, ['error ECONNRESET'])
  assert.deepEqual(s.caller.outcome, { launched: 2, winner: -1, origin: B, hedgeFiredMs: 3, delayMs: 50, budgetDenied: false })
})

test('an attempt that fails while another is in flight waits for it', () => {
  const s = new Script({ maxAttempts: 2 })
  s.copies[0]!.handler.onError(codeError('ECONNREFUSED'))
  assert.deepEqual(s.caller.got, [])
  s.answer(1)
  assert.deepEqual(s.caller.got, ['start', 'response 200', 'end {}'])
})

test('a copy the dispatcher refuses fails like any other attempt', () => {
  const s = new Script({ maxAttempts: 1 }, HTTP1, new Caller(), { throwsFor: 0 })
  assert.deepEqual(s.caller.got, ['error UND_ERR_INVALID_ARG'])
  assert.ok(s.log.events.includes('done 0'))
})

test('a failed winner fails the request, once', () => {
  const s = new Script({ maxAttempts: 2 })
  s.connect(0)
  s.headers(0, 200)
  s.copies[0]!.handler.onError(codeError('UND_ERR_SOCKET'))
  assert.deepEqual(s.caller.got, ['start', 'response 200', 'error UND_ERR_SOCKET'])
  assert.equal(s.copies.length, 2, 'no hedge after the answer')
  s.req.abort(new Error('late abort')) // already finished: nothing more
  assert.deepEqual(s.caller.got, ['start', 'response 200', 'error UND_ERR_SOCKET'])
})

test('an abort before any answer fails the request at once and stops every copy', () => {
  const s = new Script({ maxAttempts: 2 })
  s.connect(0)
  s.req.abort(new Error('caller gave up'))
  assert.deepEqual(s.caller.got, ['start', 'error caller gave up'])
  assert.equal(s.copies[0]!.aborted?.message, 'another attempt answered first')
  assert.equal(s.copies[1]!.handler.cancelled, true)
})

test('a write is never repeated unless it is marked safe: a key, idempotent, or --unsafe-hedge', () => {
  const launched = (policy: object, request: Partial<Dispatcher.DispatchOptions>) => {
    const s = new Script(policy, HTTP1, new Caller(), { request })
    const n = s.copies.length
    finish(s)
    return n
  }
  assert.equal(launched({}, { method: 'POST' }), 1)
  assert.equal(launched({}, { method: 'post' }), 1)
  assert.equal(launched({ unsafeHedge: true }, { method: 'POST' }), 2)
  assert.equal(launched({}, { method: 'POST', headers: ['Idempotency-Key', 'k'] }), 2)
  assert.equal(launched({}, { method: 'POST', idempotent: true }), 2)
  assert.equal(launched({}, { method: 'PUT' }), 2)
  assert.equal(launched({}, { method: 'GET', upgrade: 'websocket' }), 1)
  assert.equal(launched({ maxAttempts: 1 }, { method: 'GET' }), 1)
})

test('a body that can be sent twice is hedged; a stream, read once, is not', () => {
  const launched = (body: Dispatcher.DispatchOptions['body']) => {
    const s = new Script({}, HTTP1, new Caller(), { request: { method: 'PUT', body } })
    const n = s.copies.length
    finish(s)
    return n
  }
  assert.equal(launched('text'), 2)
  assert.equal(launched(new Uint8Array([1])), 2)
  assert.equal(launched(Buffer.from('x')), 2)
  assert.equal(launched(null), 2)
  assert.equal(launched(Readable.from(['x'])), 1)
})

test('every copy carries the request’s one idempotency key and tie id; a key the caller set is kept', () => {
  let n = 0
  const s = new Script({ idempotencyKey: () => `key-${++n}`, tie: true })
  const [first, hedge] = s.copies.map((c) => headersOf(c.opts))
  assert.equal(first!('idempotency-key'), 'key-1')
  assert.equal(hedge!('idempotency-key'), 'key-1')
  assert.match(first!(TIE_HEADER)!, /^[0-9a-f-]{36}$/)
  assert.equal(hedge!(TIE_HEADER), first!(TIE_HEADER))
  finish(s)

  const own = new Script({ idempotencyKey: () => 'ours' }, HTTP1, new Caller(), { request: { headers: ['idempotency-key', 'theirs'] } })
  const sent = (own.copies[0]!.opts.headers as string[]).filter((h) => h.toLowerCase() === 'idempotency-key')
  assert.equal(sent.length, 1)
  assert.equal(headersOf(own.copies[0]!.opts)('idempotency-key'), 'theirs')
  finish(own)

  const plain = new Script({ maxAttempts: 1, idempotencyKey: () => 'k' })
  assert.equal(headersOf(plain.copies[0]!.opts)('idempotency-key'), 'k', 'keyed even when it is not hedged')
  finish(plain)
})

test('the answer’s trailers reach the caller parsed; a caller that ignores headers gets none', () => {
  const s = new Script({ maxAttempts: 1 })
  s.connect(0)
  s.headers(0, 200, raw('x-from', 'A'))
  s.copies[0]!.handler.onComplete(raw('x-checksum', 'abc') as never)
  assert.deepEqual(s.caller.got, ['start', 'response 200 from A', 'end {"x-checksum":"abc"}'])

  const empty = new Script({ maxAttempts: 1 })
  empty.answer(0, [])
  assert.deepEqual(empty.caller.got.at(-1), 'end {}')

  const ignoring = new Script({ maxAttempts: 1 }, HTTP1, new Caller(true))
  ignoring.connect(0)
  ignoring.headers(0, 200, raw('x-from', 'A'))
  ignoring.copies[0]!.handler.onComplete(raw('x-checksum', 'abc') as never)
  assert.deepEqual(ignoring.caller.got, ['start', 'response 200', 'end {}'])
})

test('the gate is told of a 429 even by a caller that reads no headers', () => {
  const gate = new SaturationGate(DEFAULT_SATURATION, () => 0)
  const s = new Script({ maxAttempts: 1, saturation: gate }, HTTP1, new Caller(true))
  assert.equal(s.copies[0]!.handler.wantsHeaders(429), true)
  assert.equal(s.copies[0]!.handler.wantsHeaders(500), false)
  s.connect(0)
  s.headers(0, 429, raw('retry-after', '2'))
  assert.equal(gate.refuse(B, false), 'overload')
})

test('busy and tried replicas: what the picker is told', () => {
  const s = new Script({ maxAttempts: 3, replicas: [A, B, C] })
  assert.deepEqual(s.req.triedOrigins(), [A, B, C])
  assert.deepEqual(s.req.busyOrigins(), [A, B, C])
  s.copies[1]!.handler.onError(codeError('ECONNREFUSED'))
  assert.deepEqual(s.req.busyOrigins(), [A, C])
  finish(s)
  assert.deepEqual(s.req.busyOrigins(), [])
  assert.deepEqual(s.req.triedOrigins(), [A, B, C])
})

test("before any answer the caller's controller has no reading to pause: nothing is paused, nothing throws", () => {
  const s = new Script({ maxAttempts: 1 })
  assert.equal(s.req.paused, false)
  s.req.pause()
  s.req.resume()
  assert.equal(s.req.paused, false)
  finish(s)
})

test('a caller that implements only some callbacks gets those', () => {
  const got: string[] = []
  const answered = new Script<HedgeCaller>({ maxAttempts: 1 }, HTTP1, { onResponseError: (_c, err) => void got.push(err.message) })
  finish(answered)
  const failed = new Script<HedgeCaller>({ maxAttempts: 1 }, HTTP1, { onResponseStart: () => void got.push('start') })
  failed.copies[0]!.handler.onError(codeError('ECONNREFUSED'))
  assert.deepEqual(got, [])
})

test('gRPC: a failed status in the headers is what the caller starts with', () => {
  const s = new Script({ maxAttempts: 1 }, GRPC)
  s.connect(0)
  s.headers(0, 200, raw('grpc-status', '14', 'grpc-message', 'down'))
  assert.deepEqual(s.caller.got, ['start', 'response 14'])
})

test('gRPC without a deadline sends no grpc-timeout', () => {
  const s = new Script({ parallel: false }, GRPC, new Caller(), { delayMs: 10 })
  s.t = 10
  s.req.fireTimer()
  assert.deepEqual(
    s.copies.map((c) => headersOf(c.opts)('grpc-timeout')),
    [undefined, undefined],
  )
  finish(s)
})

test('the default protocol is HTTP/1.1: a replica failing it is named so', () => {
  const causes: string[] = []
  const health = new ReplicaHealth(
    [A, B],
    { consecutiveFailures: 1, baseEjectionMs: 1000, maxEjectionMs: 1000 },
    { replicaEjected: (_o, cause) => void causes.push(cause), replicaReadmitted: () => {} },
    () => 0,
  )
  const s = new Script({ maxAttempts: 1, health }, undefined)
  s.connect(0)
  s.headers(0, 503)
  s.copies[0]!.handler.onComplete(null)
  assert.deepEqual(causes, ['1 failure in a row (last: HTTP/1.1 503)'])
})

test('a non-fatal answer with no time left before the deadline for a hedge is the answer', () => {
  const s = new Script({ parallel: false, deadlineMs: 100, minHedgeWindowMs: 30 }, HTTP1, new Caller(), { delayMs: 90 })
  s.connect(0)
  s.headers(0, 503, [], 80)
  assert.deepEqual(s.caller.got, ['start', 'response 503'])
  assert.equal(s.copies.length, 1)
  s.copies[0]!.handler.onComplete(null)
})

test('the timer says how late it fired, never less than 0', () => {
  const s = timedOverThree()
  fireAt(s, 13, 30)
  assert.deepEqual(
    s.log.events.filter((e) => e.startsWith('timer late')),
    ['timer late 3', 'timer late 7'],
  )
  finish(s)
})

test('a failed winner leaves the decision where it was: a loser still running is timed from the answer', () => {
  const s = new Script({ cancel: 'ignore' })
  s.connect(0, 1)
  s.connect(1, 1)
  s.headers(0, 200, [], 5)
  s.t = 8
  s.copies[0]!.handler.onError(codeError('UND_ERR_SOCKET'))
  s.t = 10
  s.copies[1]!.handler.onComplete(null)
  assert.ok(s.log.events.includes('loser finished 5'), s.log.events.join(', '))
})

/** The timers this process holds (hedge timers, deadline timers, the test runner's own). */
function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
}

test('a request leaves no timer behind: not its hedge timer, not its deadline, not one armed with no attempt left', () => {
  const before = activeTimers()
  const s = new Script({ parallel: false, deadlineMs: 1000, maxAttempts: 2 }, HTTP1, new Caller(), { delayMs: 10 })
  assert.equal(activeTimers(), before + 2, 'the hedge timer and the deadline')
  s.connect(0)
  s.headers(0, 503, [], 1) // non-fatal: a hedge at once, and none left after it
  assert.equal(s.copies.length, 2)
  assert.equal(activeTimers(), before + 1, 'only the deadline: no timer for a hedge that cannot be')
  s.answer(1)
  assert.equal(activeTimers(), before)

  const timed = timedOverThree()
  timed.connect(0)
  timed.headers(0, 503, [], 1) // a hedge at once; the timer is armed again for the third
  assert.equal(activeTimers(), before + 1, 'the old timer was cleared')
  timed.answer(1)
  assert.equal(activeTimers(), before)
})

test('parallel copies the budget stops are not tried again later: no timer is armed for them', () => {
  const before = activeTimers()
  const s = new Script({ maxAttempts: 3, replicas: [A, B, C], budgetPct: 10, budgetBurst: 1 }, HTTP1, new Caller(), { delayMs: 0 })
  assert.equal(activeTimers(), before)
  assert.equal(s.copies.length, 2)
  assert.equal(s.log.events.filter((e) => e === 'budget denied').length, 1)
  finish(s)
})

test('without an observer the refusals still refuse: budget, non-fatal failover, saturation, deadline', () => {
  const quiet = { unobserved: true }
  const budget = new Script({ maxAttempts: 3, replicas: [A, B, C], budgetPct: 10, budgetBurst: 1 }, HTTP1, new Caller(), quiet)
  assert.equal(budget.copies.length, 2)
  finish(budget)
  const failover = new Script({ parallel: false }, HTTP1, new Caller(), { ...quiet, delayMs: 50 })
  failover.connect(0)
  failover.headers(0, 503)
  assert.equal(failover.copies.length, 2)
  failover.answer(1)
  const gate = new SaturationGate(DEFAULT_SATURATION, () => 0)
  gate.signal(A, { overloadMs: 5000 })
  const held = new Script({ parallel: false, saturation: gate }, HTTP1, new Caller(), { ...quiet, delayMs: 10 })
  held.t = 10
  held.req.fireTimer()
  assert.equal(held.copies.length, 1)
  finish(held)
  const late = new Script({ parallel: false, deadlineMs: 100, minHedgeWindowMs: 30 }, HTTP1, new Caller(), { ...quiet, delayMs: 50 })
  late.t = 80
  late.req.fireTimer()
  assert.equal(late.copies.length, 1)
  finish(late)
  assert.deepEqual(
    [budget, failover, held, late].flatMap((s) => s.log.events),
    [],
  )
})
