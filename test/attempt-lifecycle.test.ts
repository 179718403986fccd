/**
 * One hedged request's attempts, event by event: what is counted (sent,
 * unsent, refused, cancelled, late, settled), what the caller receives, what
 * the budget, the delay source, the saturation gate and outlier ejection are
 * told, for each order in which undici's clients call a handler.
 *
 * The dispatcher here is a script (helpers/scripted-wire.ts): the test
 * makes undici's calls on each attempt in the order under test. That pins orders a real server produces only at a moment nobody chooses (a
 * GOAWAY after a loser's reset, a connection handed to a copy that already
 * lost); the same counts against real servers on 127.0.0.1 are held by
 * engine-counting, h2-cancel, h2-goaway, h2c, grpc-hedging and
 * hedging-saturation. Nothing here measures.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Dispatcher } from 'undici'
import type { AttemptOutcome } from '../src/hedging/observer.js'
import { SaturationGate, DEFAULT_SATURATION } from '../src/hedging/saturation-gate.js'
import { ReplicaHealth } from '../src/hedging/replica-health.js'
import type { Protocol } from '../src/protocol/protocol.js'
import { INTERRUPTED_CODE } from '../src/core/interruption.js'
import { A, B, Caller, codeError, GRPC, HTTP1, raw, Script } from './helpers/scripted-wire.js'

test('a copy that lost before undici handed it a connection is stopped there, never written, counted unsent once, its token refunded', () => {
  const s = new Script({ budgetPct: 10, budgetBurst: 1 })
  assert.deepEqual(s.log.since(), [`launched 0 ${A}`, `launched 1 ${B}`])
  s.connect(0, 1)
  assert.equal(s.headers(0, 200, [], 4), true)
  // The hedge had no connection yet: it is only marked.
  assert.deepEqual(s.log.since(), ['sent 0'])
  const hedge = s.copies[1]!
  assert.equal(hedge.handler.cancelled, true)
  assert.equal(hedge.handler.sent, false)
  // The pool hands it one: it is aborted before its headers go out.
  s.connect(1, 6)
  assert.equal(hedge.handler.sent, false)
  assert.ok(hedge.aborted)
  assert.equal(hedge.aborted.message, 'hedge cancelled before it was sent')
  assert.equal((hedge.aborted as { code?: string }).code, 'HEDGE_CANCELLED')
  assert.deepEqual(s.log.since(), ['unsent 1'])
  // The abort comes back as its error: counted once, settled.
  hedge.handler.onError(hedge.aborted)
  assert.deepEqual(s.log.since(), ['settled 1'])
  assert.equal(tokenAvailable(s), true, 'its token came back')
})

test('the hedge token comes back only for a copy that never reached the wire', () => {
  const spentAndRefunded = tokensAfter((s) => {
    s.connect(0)
    s.headers(0, 200)
    s.copies[1]!.handler.onError(new Error('pool closed'))
  })
  const spentAndSent = tokensAfter((s) => {
    s.connect(0)
    s.connect(1)
    s.headers(0, 200)
    s.copies[1]!.handler.onError(s.copies[1]!.aborted!)
  })
  assert.equal(spentAndRefunded, true, 'the unsent hedge gave its token back: the next request hedges')
  assert.equal(spentAndSent, false, 'a cancelled hedge on the wire cost its token: the next request may not hedge')
})

/** Runs one request on a one-token bucket, then says whether a second request on the same bucket may hedge. */
function tokensAfter(play: (s: Script) => void): boolean {
  const s = new Script({ budgetPct: 10, budgetBurst: 1 })
  play(s)
  return tokenAvailable(s)
}

test('a copy that answers first wins: the other, on the wire, is cancelled and reset, and runs on until its error', () => {
  const s = new Script()
  s.connect(0, 1)
  s.connect(1, 2)
  s.log.since()
  assert.equal(s.headers(1, 200, raw('x-from', 'B'), 10), true)
  const [original, hedge] = [s.copies[0]!, s.copies[1]!]
  assert.deepEqual(s.log.since(), ['cancelled 0'])
  assert.equal(original.aborted?.message, 'another attempt answered first')
  assert.deepEqual(s.delays, [10], 'the original was at least this slow (from its launch): its delay sample is a lower bound')
  assert.equal(s.caller.got.join('|'), 'start|response 200 from B')
  // The reset loser's error arrives 3 ms after the decision.
  s.t = 13
  original.handler.onError(original.aborted!)
  assert.deepEqual(s.log.since(), ['loser finished 3', 'settled 0'])
  hedge.handler.onData(Buffer.from('ok'))
  s.t = 15
  hedge.handler.onComplete(null)
  assert.deepEqual(s.log.since(), ['done 1', 'settled 1'])
  assert.equal(s.caller.got.join('|'), 'start|response 200 from B|data ok|end {}')
  assert.deepEqual(s.caller.outcome, { launched: 2, winner: 1, origin: B, hedgeFiredMs: 0, delayMs: 0, budgetDenied: false })
  assert.deepEqual(s.delays, [10], 'only the original samples the delay')
})

test('an outcome carries where its time went: connection, write, first byte, bytes; -1 and false where it never got', () => {
  const s = new Script({ maxAttempts: 1 })
  const copy = s.copies[0]!
  copy.handler.onConnectionOpened()
  s.connect(0, 2)
  s.t = 3
  copy.handler.onRequestSent()
  s.headers(0, 200, [], 7)
  copy.handler.onData(Buffer.from('abc'))
  copy.handler.onData(Buffer.from('de'))
  s.t = 9
  copy.handler.onComplete(null)
  const [o] = s.log.outcomes
  assert.deepEqual(
    { ...pick(o!), bytes: o!.bytes, latencyMs: o!.latencyMs, won: o!.won, status: o!.status, sent: o!.sent },
    { launchedAt: 0, connectedAt: 2, requestSentAt: 3, firstByteAt: 7, openedConnection: true, bytes: 5, latencyMs: 9, won: true, status: 200, sent: true },
  )
  assert.deepEqual(s.delays, [9])

  const failed = new Script({ maxAttempts: 1 })
  failed.t = 4
  failed.copies[0]!.handler.onError(codeError('ECONNREFUSED'))
  const [f] = failed.log.outcomes
  assert.deepEqual(
    { ...pick(f!), won: f!.won, status: f!.status, sent: f!.sent, latencyMs: f!.latencyMs },
    { launchedAt: 0, connectedAt: -1, requestSentAt: -1, firstByteAt: -1, openedConnection: false, won: false, status: null, sent: false, latencyMs: 4 },
  )
  assert.deepEqual(failed.delays, [], 'a failed original says nothing of how slow an answer is')
  assert.deepEqual(failed.caller.got, ['error ECONNREFUSED'])
})

function pick(o: AttemptOutcome): Pick<AttemptOutcome, 'launchedAt' | 'connectedAt' | 'requestSentAt' | 'firstByteAt' | 'openedConnection'> {
  return {
    launchedAt: o.launchedAt,
    connectedAt: o.connectedAt,
    requestSentAt: o.requestSentAt,
    firstByteAt: o.firstByteAt,
    openedConnection: o.openedConnection,
  }
}

test('a stream the server refused is no longer sent; resent on a connection already open, it is sent again and did not open one', () => {
  const s = new Script({ maxAttempts: 1 })
  const copy = s.copies[0]!
  copy.handler.onConnectionOpened()
  s.connect(0, 1)
  assert.deepEqual(s.log.since(), [`launched 0 ${A}`, 'sent 0'])
  copy.handler.onRequestRefused()
  assert.equal(copy.handler.sent, false)
  assert.deepEqual(s.log.since(), ['refused 0'])
  copy.handler.onRequestRefused() // a second GOAWAY naming it: nothing more to take back
  assert.deepEqual(s.log.since(), [])
  s.connect(0, 5)
  assert.deepEqual(s.log.since(), ['sent 0'])
  s.headers(0, 200, [], 6)
  copy.handler.onComplete(null)
  assert.equal(s.log.outcomes[0]!.openedConnection, false, 'the second connection was there already')
  assert.equal(s.log.outcomes[0]!.connectedAt, 5)
  assert.deepEqual(s.caller.got, ['start', 'response 200', 'end {}'], 'the caller started once')
})

test('a loser reset, then named by a GOAWAY: its cancel is taken back and it counts as never sent, once', () => {
  const s = new Script({ budgetPct: 10, budgetBurst: 1 })
  s.connect(0)
  s.connect(1)
  s.headers(0, 200)
  const loser = s.copies[1]!
  loser.handler.onError(loser.aborted!)
  assert.deepEqual(s.log.since(), [`launched 0 ${A}`, `launched 1 ${B}`, 'sent 0', 'sent 1', 'cancelled 1', 'settled 1'])
  loser.handler.onRequestRefused()
  assert.deepEqual(s.log.since(), ['refused 1 cancelled', 'unsent 1'])
  assert.equal(tokenAvailable(s), true, 'its token came back')
})

test('a loser named by a GOAWAY before its reset ends: counted unsent at its end, not before', () => {
  const s = new Script()
  s.connect(0)
  s.connect(1)
  s.headers(0, 200)
  s.log.since()
  const loser = s.copies[1]!
  loser.handler.onRequestRefused()
  assert.deepEqual(s.log.since(), ['refused 1 cancelled'])
  loser.handler.onError(loser.aborted!)
  assert.deepEqual(s.log.since(), ['unsent 1', 'settled 1'])
})

test('an answered copy refused later (a GOAWAY after its answer) is not counted unsent', () => {
  const s = new Script({ maxAttempts: 1 })
  s.connect(0)
  s.headers(0, 200)
  s.copies[0]!.handler.onComplete(null)
  s.log.since()
  s.copies[0]!.handler.onRequestRefused()
  assert.deepEqual(s.log.since(), ['refused 0'])
})

/** Whether the next request on this one's bucket may hedge: its original earns 0.1 of a token, a hedge takes 1. */
function tokenAvailable(s: Script): boolean {
  const budget = s.req.policy.budget
  budget.deposit()
  return budget.trySpend()
}

test('a cancelled loser whose headers still arrive is not heard: no status, no late answer, reading goes on', () => {
  const s = new Script()
  s.connect(0)
  s.connect(1)
  s.headers(0, 200, [], 3)
  s.log.since()
  const loser = s.copies[1]!
  assert.equal(s.headers(1, 503, [], 4), true, 'reading is not paused for an answer thrown away')
  assert.equal(loser.handler.status, null)
  assert.equal(loser.handler.firstByteAt, -1)
  assert.deepEqual(s.log.since(), [])
  assert.equal(loser.handler.wantsHeaders(503), false, 'nor are its headers parsed')
})

test('raw headers are asked for when the caller, the protocol or the gate reads them, never for a cancelled copy', () => {
  const reading = new Script({ maxAttempts: 1 })
  assert.equal(reading.copies[0]!.handler.wantsHeaders(200), true)
  const ignoring = new Script({ maxAttempts: 1 }, HTTP1, new Caller(true))
  assert.equal(ignoring.copies[0]!.handler.wantsHeaders(200), false)
  assert.equal(ignoring.copies[0]!.handler.wantsHeaders(503), false, 'no gate: a 503 is not read either')
  const gated = new Script({ maxAttempts: 1, saturation: new SaturationGate(DEFAULT_SATURATION) }, HTTP1, new Caller(true))
  assert.equal(gated.copies[0]!.handler.wantsHeaders(503), true, "a 503's Retry-After is the gate's")
  assert.equal(gated.copies[0]!.handler.wantsHeaders(200), false)
  const grpc = new Script({ maxAttempts: 1 }, GRPC, new Caller(true))
  assert.equal(grpc.copies[0]!.handler.wantsHeaders(200), true, "gRPC's status may be in the headers")
})

test("pausing the caller's controller pauses the winner's reading; resuming calls undici's resume once", () => {
  const s = new Script({ maxAttempts: 1 })
  s.connect(0)
  const copy = s.copies[0]!
  assert.equal(s.headers(0, 200), true)
  assert.equal(s.req.paused, false)
  s.req.resume() // not paused: nothing to resume
  assert.equal(copy.resumed, 0)
  s.req.pause()
  assert.equal(s.req.paused, true)
  assert.equal(copy.handler.paused, true)
  assert.equal(copy.handler.onData(Buffer.from('a')), false, 'undici stops reading')
  s.req.resume()
  assert.equal(copy.resumed, 1)
  assert.equal(s.req.paused, false)
  assert.equal(copy.handler.onData(Buffer.from('b')), true)
  s.req.resume()
  assert.equal(copy.resumed, 1, 'resumed once')
})

test('a caller that pauses in onResponseStart has the headers callback ask undici to pause', () => {
  class Pausing extends Caller {
    override onResponseStart(c: Dispatcher.DispatchController, status: number, headers: Record<string, unknown>): void {
      super.onResponseStart(c, status, headers)
      c.pause()
    }
  }
  const s = new Script({ maxAttempts: 1 }, HTTP1, new Pausing())
  s.connect(0)
  assert.equal(s.headers(0, 200), false)
})

test('with cancel "ignore" a loser runs to its end: its late answer is drained, its data never reaches the caller', () => {
  const s = new Script({ cancel: 'ignore' })
  s.connect(0, 1)
  s.connect(1, 1)
  s.headers(0, 200, [], 5)
  s.log.since()
  const loser = s.copies[1]!
  assert.equal(loser.aborted, null, 'not reset')
  assert.equal(loser.handler.discarding, true)
  s.headers(1, 200, [], 6)
  assert.deepEqual(s.log.since(), ['late 1'])
  loser.handler.onData(Buffer.from('late'))
  s.t = 12
  loser.handler.onComplete(null)
  assert.deepEqual(s.log.since(), ['loser finished 7', 'done 1', 'settled 1'])
  assert.equal(s.log.outcomes[0]!.won, false)
  assert.equal(s.log.outcomes[0]!.bytes, 4)
  assert.equal(s.caller.got.join('|'), 'start|response 200')
  s.copies[0]!.handler.onComplete(null)
  assert.equal(s.caller.got.join('|'), 'start|response 200|end {}')
})

test('with cancel "ignore" a loser that fails is counted and settles, and does not fail the request', () => {
  const s = new Script({ cancel: 'ignore' })
  s.connect(0, 1)
  s.connect(1, 1)
  s.headers(0, 200, [], 2)
  s.log.since()
  s.t = 5
  s.copies[1]!.handler.onError(codeError('ECONNRESET'))
  assert.deepEqual(s.log.since(), ['loser finished 3', 'done 1', 'settled 1'])
  assert.equal(s.caller.got.join('|'), 'start|response 200')
})

test('a non-fatal answer waits for the other copy in flight; a second one, with nothing left in flight, is the answer', () => {
  const s = new Script()
  s.connect(0)
  s.connect(1)
  s.headers(0, 503, [], 2)
  assert.equal(s.copies[0]!.handler.discarding, true)
  assert.deepEqual(s.caller.got, ['start'], 'the other copy may still answer')
  s.headers(1, 503, [], 3)
  assert.deepEqual(s.caller.got, ['start', 'response 503'])
  assert.equal(s.req.winner, s.copies[1]!.handler)
})

test('a non-fatal answer whose body then fails decides nothing and launches nothing more', () => {
  const s = new Script({ maxAttempts: 3, parallel: false, replicas: [A, B, 'http://127.0.0.1:1003'] })
  s.connect(0)
  s.headers(0, 503, [], 2) // non-fatal: a hedge at once
  assert.equal(s.copies.length, 2)
  s.copies[0]!.handler.onError(codeError('UND_ERR_SOCKET'))
  assert.equal(s.copies.length, 2, 'no third copy for the discarded one')
  assert.deepEqual(s.caller.got, ['start'])
  s.connect(1)
  s.headers(1, 200, [], 4)
  s.copies[1]!.handler.onComplete(null)
  assert.deepEqual(s.caller.got, ['start', 'response 200', 'end {}'])
})

test('a non-fatal answer with its copy alone is the answer', () => {
  const s = new Script({ maxAttempts: 1 })
  s.connect(0)
  s.headers(0, 503)
  assert.deepEqual(s.caller.got, ['start', 'response 503'])
})

test("the caller's abort reaches the winner's connection, and its error the caller", () => {
  const s = new Script({ maxAttempts: 1 })
  s.connect(0)
  s.headers(0, 200)
  const reason = new Error('caller gave up')
  s.req.abort(reason)
  const copy = s.copies[0]!
  assert.equal(copy.aborted, reason)
  copy.handler.onError(reason)
  assert.deepEqual(s.caller.got, ['start', 'response 200', 'error caller gave up'])
})

test('gRPC: the status in the trailers is the answer, with its message; pushback there closes the way to that replica', () => {
  const gate = new SaturationGate(DEFAULT_SATURATION, () => 0)
  const s = new Script({ maxAttempts: 1, saturation: gate }, GRPC)
  s.connect(0)
  s.headers(0, 200, raw('content-type', 'application/grpc'))
  assert.equal(gate.refuse(A, true), null)
  // As undici's h2 client hands them: Node's header object.
  s.copies[0]!.handler.onComplete({ 'grpc-status': '14', 'grpc-message': 'draining', 'grpc-retry-pushback-ms': '500' } as never)
  assert.deepEqual(s.caller.final, { status: 14, message: 'UNAVAILABLE: draining' })
  assert.equal(gate.refuse(A, true), 'pushback')
  assert.equal(gate.refuse(B, true), null)
})

test('gRPC: a failed status in the headers keeps its message when the trailers carry none; an OK one has no message', () => {
  const failed = new Script({ maxAttempts: 1 }, GRPC)
  failed.connect(0)
  failed.headers(0, 200, raw('grpc-status', '8', 'grpc-message', 'slow down'))
  failed.copies[0]!.handler.onComplete(raw('grpc-status', '8') as never)
  assert.deepEqual(failed.caller.final, { status: 8, message: 'RESOURCE_EXHAUSTED: slow down' })

  const ok = new Script({ maxAttempts: 1 }, GRPC)
  ok.connect(0)
  ok.headers(0, 200, raw('grpc-status', '0', 'grpc-message', 'fine'))
  ok.copies[0]!.handler.onComplete(null)
  assert.deepEqual(ok.caller.final, { status: 0, message: null })

  const okTrailers = new Script({ maxAttempts: 1 }, GRPC)
  okTrailers.connect(0)
  okTrailers.headers(0, 200, [])
  okTrailers.copies[0]!.handler.onComplete(raw('grpc-status', '0', 'grpc-message', 'fine') as never)
  assert.deepEqual(okTrailers.caller.final, { status: 0, message: null })
})

test('gRPC trailers without a signal leave the gate as it was', () => {
  const gate = new SaturationGate(DEFAULT_SATURATION, () => 0)
  const s = new Script({ maxAttempts: 1, saturation: gate }, GRPC)
  s.connect(0)
  s.headers(0, 200, [])
  s.copies[0]!.handler.onComplete({ 'grpc-status': '0' } as never)
  assert.deepEqual(s.caller.final, { status: 0, message: null })
  assert.equal(gate.refuse(A, true), null)
})

/** Plays `n` one-copy requests that end as `end` does, on one gate; what the gate then says of a speculative hedge. */
function gateAfter(n: number, protocol: Protocol, end: (s: Script) => void): string | null {
  const gate = new SaturationGate({ maxErrorRate: 0.25, maxInflight: null, obeyOverload: true }, () => 0)
  for (let i = 0; i < n; i++) {
    const s = new Script({ maxAttempts: 1, saturation: gate }, protocol)
    end(s)
  }
  return gate.refuse(A, true)
}

test('the gate counts timeouts and strained statuses as strain; refused connections, 4xx and other codes are not', () => {
  const failWith = (code: string) => (s: Script) => s.copies[0]!.handler.onError(codeError(code))
  const answer =
    (status: number, headers: Buffer[] = []) =>
    (s: Script) => {
      s.connect(0)
      s.headers(0, status, headers)
      s.copies[0]!.handler.onComplete(null)
    }
  for (const code of ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'HEDGE_DEADLINE_EXCEEDED']) {
    assert.equal(gateAfter(20, HTTP1, failWith(code)), 'errorRate', code)
  }
  for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EMFILE']) assert.equal(gateAfter(20, HTTP1, failWith(code)), null, code)
  assert.equal(
    gateAfter(20, HTTP1, (s) => s.copies[0]!.handler.onError(new Error('no code'))),
    null,
  )
  assert.equal(gateAfter(20, HTTP1, answer(500)), 'errorRate')
  assert.equal(gateAfter(20, HTTP1, answer(404)), null)
  assert.equal(gateAfter(20, GRPC, answer(200, raw('grpc-status', '14'))), 'errorRate', 'UNAVAILABLE')
  assert.equal(gateAfter(20, GRPC, answer(200, raw('grpc-status', '5'))), null, 'NOT_FOUND')
  // One short of the gate's minimum: no judgement yet.
  assert.equal(gateAfter(19, HTTP1, answer(500)), null)
})

test('outlier ejection hears a failure named as the error table names it; our own interruption and local failures are not the replica’s', () => {
  const causes: string[] = []
  const listener = { replicaEjected: (_o: string, cause: string) => void causes.push(cause), replicaReadmitted: () => {} }
  const endWith = (protocol: Protocol, end: (s: Script) => void) => {
    const health = new ReplicaHealth([A, B], { consecutiveFailures: 1, baseEjectionMs: 1000, maxEjectionMs: 1000 }, listener, () => 0)
    end(new Script({ maxAttempts: 1, health }, protocol))
  }
  const answer =
    (status: number, headers: Buffer[] = []) =>
    (s: Script) => {
      s.connect(0)
      s.headers(0, status, headers)
      s.copies[0]!.handler.onComplete(null)
    }
  endWith(HTTP1, answer(503))
  endWith(GRPC, answer(200, raw('grpc-status', '14')))
  endWith(HTTP1, (s) => s.copies[0]!.handler.onError(codeError('ECONNREFUSED')))
  endWith(HTTP1, (s) => s.copies[0]!.handler.onError(codeError(INTERRUPTED_CODE)))
  endWith(HTTP1, (s) => s.copies[0]!.handler.onError(codeError('EMFILE')))
  endWith(HTTP1, answer(404))
  endWith(GRPC, answer(200, raw('grpc-status', '5')))
  assert.deepEqual(causes, [
    '1 failure in a row (last: HTTP/1.1 503)',
    '1 failure in a row (last: gRPC UNAVAILABLE)',
    '1 failure in a row (last: ECONNREFUSED)',
  ])
})

test('a copy written on a connection already open did not open one', () => {
  const s = new Script({ maxAttempts: 1 })
  s.connect(0)
  s.headers(0, 200)
  s.copies[0]!.handler.onComplete(null)
  assert.equal(s.log.outcomes[0]!.openedConnection, false)
})

test('only the original samples the delay: a hedge cancelled on the wire does not', () => {
  const s = new Script()
  s.connect(0, 1)
  s.connect(1, 1)
  s.headers(0, 200, [], 8)
  assert.deepEqual(s.log.since().slice(-1), ['cancelled 1'])
  assert.deepEqual(s.delays, [])
  s.copies[0]!.handler.onComplete(null)
  assert.deepEqual(s.delays, [8])
})

test('an original that never reached the wire gives no token back: only a hedge spent one', () => {
  const s = new Script({ budgetPct: 10, budgetBurst: 1 })
  s.connect(1)
  s.headers(1, 200)
  s.copies[0]!.handler.onError(new Error('pool closed'))
  assert.deepEqual(s.log.since().slice(-2), ['unsent 0', 'settled 0'])
  assert.equal(tokenAvailable(s), false)
})

test('a winner that fails mid-body: its outcome has the error and no status; no loser time is charged to it', () => {
  const s = new Script()
  s.connect(0, 1)
  s.connect(1, 1)
  s.headers(0, 200, [], 5)
  s.copies[1]!.handler.onError(s.copies[1]!.aborted!)
  s.log.since()
  s.t = 9
  s.copies[0]!.handler.onError(codeError('UND_ERR_SOCKET'))
  assert.deepEqual(s.log.since(), ['done 0', 'settled 0'])
  const [o] = s.log.outcomes
  assert.deepEqual([o!.status, (o!.error as { code?: string }).code, o!.won], [null, 'UND_ERR_SOCKET', false])
  assert.deepEqual(s.caller.got, ['start', 'response 200', 'error UND_ERR_SOCKET'])
})

test('a copy that failed before the race was decided is not cancelled afterwards', () => {
  const s = new Script()
  s.connect(0)
  s.connect(1)
  s.copies[0]!.handler.onError(codeError('ECONNRESET'))
  s.log.since()
  s.headers(1, 200)
  assert.deepEqual(s.log.since(), [], 'nothing to cancel')
  assert.equal(s.copies[0]!.aborted, null)
})

test('a hedge’s latency runs from its own launch', () => {
  const s = new Script({ parallel: false }, HTTP1, new Caller(), { delayMs: 10 })
  s.t = 10
  s.req.fireTimer()
  s.connect(1, 11)
  s.headers(1, 200, [], 20)
  s.copies[1]!.handler.onComplete(null)
  assert.equal(s.log.outcomes[0]!.latencyMs, 10, 'launched at 10, answered at 20')
})

test('a cancelled copy that still completes is reported without a status, its trailers unread', () => {
  const s = new Script({}, GRPC)
  s.connect(0)
  s.connect(1)
  s.headers(0, 200, raw('grpc-status', '0'))
  s.headers(1, 200, raw('content-type', 'application/grpc'))
  s.copies[1]!.handler.onComplete({ 'grpc-status': '14', 'grpc-message': 'late' } as never)
  const loser = s.log.outcomes.find((o) => o.index === 1)!
  assert.deepEqual([loser.status, s.copies[1]!.handler.message], [null, null])
})

test('without an observer every path still runs: refused, unsent, late, cancelled', () => {
  const s = new Script({ cancel: 'ignore', maxAttempts: 3, replicas: [A, B, 'http://127.0.0.1:1003'] }, HTTP1, new Caller(), { unobserved: true })
  s.connect(0)
  s.copies[0]!.handler.onRequestRefused()
  s.connect(0)
  s.connect(1)
  s.headers(0, 200)
  s.headers(1, 200) // late
  s.copies[2]!.handler.onError(new Error('pool closed')) // unsent
  s.copies[0]!.handler.onComplete(null)
  s.copies[1]!.handler.onComplete(null)
  assert.deepEqual(s.caller.got, ['start', 'response 200', 'end {}'])
  assert.deepEqual(s.log.events, [])
})

test('an observer without the optional attemptRefused still sees the resend as sent again', () => {
  const s = new Script({ maxAttempts: 1 })
  Object.assign(s.log, { attemptRefused: undefined })
  s.connect(0)
  s.copies[0]!.handler.onRequestRefused()
  s.connect(0)
  assert.deepEqual(s.log.since(), [`launched 0 ${A}`, 'sent 0', 'sent 0'])
})
