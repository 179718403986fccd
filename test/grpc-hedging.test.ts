/**
 * The Raspberry Pi experiment, scaled down, over gRPC: hedgebench's own engine
 * (h2c, the protocol seam's gRPC framing) against simulated grpc-js replicas
 * in a child process on 127.0.0.1. 3 replicas, 5-15 ms (2-6 ms in the seed
 * experiment's test), 1 call in 100 stalls 200 ms, 4 in flight.
 */
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { run } from '../src/run/run.js'
import { spawnTarget } from '../src/sim/target.js'
import type { Target } from '../src/sim/target.js'
import { SIM_PROTO, SIM_WORK_CALL } from '../src/sim/grpc-replica.js'
import { fetchGrpcServerStats } from '../src/sim/grpc-stats-client.js'
import { grpcProtocol } from '../src/protocol/grpc.js'
import type { Profile } from '../src/sim/profile.js'
import type { RequestRecord } from '../src/run/run-options.js'
import { watchFreezes } from './helpers/freeze-watch.js'

const STALL_MS = 200
const SLOW_MS = 150
const N = 1000
const targets: Target[] = []
after(() => Promise.all(targets.map((t) => t.close())))

function profile(extra: Partial<Profile['model']> = {}): Profile {
  return {
    name: 'grpc-seed',
    description: 'the Raspberry Pi experiment scaled down',
    replicas: 3,
    seed: 1301,
    file: null,
    model: { base: { type: 'uniform', min: 5, max: 15 }, stalls: [{ type: 'independent', probability: 0.01, ms: STALL_MS }], ...extra },
  }
}

const grpc = { call: SIM_WORK_CALL, proto: SIM_PROTO, data: '{"payload": "seed"}' }

test('the Raspberry Pi experiment over gRPC: the plain tail, the hedged tail without it, little extra load, and every count matching the server', async (t) => {
  // 2-6 ms answers instead of the seed's 5-15 ms, scaled down as the stalls
  // are: still far below the 40 ms delay and the 200 ms stall, in under half
  // the time (a call's base latency is most of a phase's duration at 4 in flight).
  const target = await spawnTarget({ profile: profile({ base: { type: 'uniform', min: 2, max: 6 } }), grpc: true })
  targets.push(target)
  // Slow rows, to tell the replicas' stalls from moments when this client
  // process was frozen (a loaded machine): a freeze slows every call in
  // flight, in either phase, and no hedge can help (its timer fires late).
  const slowRows: RequestRecord[] = []
  const hedgedRows: RequestRecord[] = []
  const sink = {
    write: (r: RequestRecord) => {
      if (r.latencyMs > SLOW_MS) slowRows.push(r)
      if (r.attempts > 1) hedgedRows.push(r)
      return true
    },
    waitForDrain: async () => {},
  }
  const freezes = watchFreezes()
  t.after(() => freezes.stop())
  const t0 = performance.now()
  const result = await run({
    urls: target.urls,
    grpc,
    concurrency: 4,
    requests: N,
    warmup: 100,
    slowMs: SLOW_MS,
    seed: 5,
    serverStatsUrl: target.statsUrl,
    // Fixed, above the 6 ms base, so only stalls (and scheduling noise) trigger hedges.
    hedge: { delay: 40 },
    requestSink: sink,
  })
  const duringFreeze = (r: RequestRecord) => freezes.overlaps(t0 + r.startMs, t0 + r.startMs + r.latencyMs, 50)
  const frozen = (phase: string): number => slowRows.filter((r) => r.phase === phase && duringFreeze(r)).length
  const plain = result.phases.plain!
  const hedged = result.phases.hedged!
  const h = hedged.hedging!
  // Stalls per phase ~ Poisson(N * 0.01 = 10): P(fewer than 3) = e^-10 (1 + 10 + 50) < 0.3 %.
  assert.ok(plain.slow.count >= 3, `plain calls over ${SLOW_MS} ms: ${plain.slow.count}`)
  // Each call the replicas stalled is slow, whatever the machine: exactly at least those.
  assert.ok(plain.slow.count >= plain.server!.stalled!, `plain calls over ${SLOW_MS} ms: ${plain.slow.count}, stalled ${plain.server!.stalled}`)
  assert.ok(plain.latencyMs['p99.9'] >= STALL_MS, `plain p99.9 ${plain.latencyMs['p99.9']} ms`)
  // A hedged call is slow only if its hedge stalls too: Poisson(10 * 0.01 = 0.1), P(2 or more) < 0.5 %.
  // Calls in flight during a client freeze are left out (a freeze only adds slow calls); past 20
  // such calls (5 freezes of 4 calls in flight), as in hedging-stalls.test.ts, the machine decides the tail.
  const context = `hedged slow ${hedged.slow.count} (${frozen('hedged')} during a client freeze), plain slow ${plain.slow.count}; freezes ${freezes.windows.length}`
  assert.ok(frozen('plain') + frozen('hedged') <= 20, `the client was frozen too often to measure anything: ${context}`)
  assert.ok(hedged.slow.count - frozen('hedged') <= 1, context)
  assert.equal(plain.ok, N)
  assert.equal(hedged.ok, N)
  assert.deepEqual(Object.keys(hedged.statusCodes), ['0'], 'every call ended with grpc-status 0 (OK), read from its trailers')
  // Every stalled original hedges (>= 3 as above). Beyond the stalls (~1 %), a call
  // crosses the 40 ms delay only when the machine stalls it: the hedges of calls in
  // flight during a client freeze are left out of the "low percent" bound.
  assert.ok(h.hedgesSent >= 3, `hedges sent ${h.hedgesSent}`)
  const hedgesOutsideFreezes = hedgedRows.filter((r) => r.phase === 'hedged' && !duringFreeze(r)).length
  assert.ok(
    hedgesOutsideFreezes / N < 0.05,
    `extra load ${((100 * h.hedgesSent) / N).toFixed(1)} %, ${hedgesOutsideFreezes} hedged calls outside client freezes`,
  )

  for (const phase of [plain, hedged]) {
    assert.ok(phase.server, 'the cross-check ran')
    assert.equal(phase.server.received, phase.attempts, `${phase.name}: server calls = client attempts`)
  }
  assert.equal(plain.server!.hedgeHeader, 0)
  // grpc-previous-rpc-attempts: 1 on every hedge and on nothing else.
  assert.equal(hedged.server!.hedgeHeader, h.hedgesSent)
  const stats = await fetchGrpcServerStats(target.statsUrl)
  assert.deepEqual(stats.totals.previousAttempts, { '1': h.hedgesSent })
  // Losers are reset: the server saw them cancelled before their answer. A
  // stalled original that lost to its hedge still had ~150 ms of stall left
  // when the reset came, so each of the >= 3 stalls (as above) is one; a
  // loser whose answer crossed the reset on the wire is completed there.
  const client = h.cancelled
  assert.ok(hedged.server!.cancelled >= 3 && hedged.server!.cancelled <= client, `client cancelled ${client}, server ${hedged.server!.cancelled}`)
  assert.equal(hedged.server!.completed + hedged.server!.cancelled, hedged.server!.received)
})

// No budget: every UNAVAILABLE answer may hedge (a 10 % budget would deny some of the 30).
test('UNAVAILABLE (trailers-only) is non-fatal by default: hedged at once to another replica; plain calls fail with it', async () => {
  const target = await spawnTarget({ profile: { ...profile({ stalls: [], overrides: [{ index: 2, errors: { rate: 1, status: 503 } }] }) }, grpc: true })
  targets.push(target)
  // No ejection: the failing replica stays in the rotation (UNAVAILABLE would take it out, as a 503 would).
  const result = await run({
    urls: target.urls,
    grpc,
    concurrency: 4,
    requests: 90,
    warmup: 0,
    seed: 3,
    eject: false,
    hedge: { delay: 1000, budgetPct: null as unknown as number },
    serverStatsUrl: target.statsUrl,
  })
  const plain = result.phases.plain!
  const hedged = result.phases.hedged!
  // Requests rotate over the replicas: a third go to the failing one.
  assert.deepEqual(plain.statusCodes, { '0': 60, '14': 30 })
  assert.equal(plain.errors, 30)
  assert.deepEqual(hedged.statusCodes, { '0': 90 })
  assert.equal(hedged.hedging!.nonFatalTriggered, 30)
  assert.equal(hedged.server!.received, hedged.attempts)
})

test('framing: a hedge carries grpc-previous-rpc-attempts, a deadline travels as grpc-timeout', () => {
  const p = grpcProtocol('/pkg.S/M')
  const base = p.requestOptions(new URL('grpc://127.0.0.1:5000'), {
    method: 'POST',
    headers: ['x-a', '1'],
    body: Buffer.alloc(5),
    timeoutMs: 1000,
    keepAlive: true,
    repeatable: false,
  })
  assert.equal(base.origin, 'http://127.0.0.1:5000')
  assert.equal(base.path, '/pkg.S/M')
  assert.deepEqual(base.headers, ['x-a', '1', 'content-type', 'application/grpc', 'te', 'trailers'])
  assert.equal(p.attemptOptions(base, 0, 'http://127.0.0.1:5000', 'x-hedge-attempt', null), base)
  const hedge = p.attemptOptions(base, 2, 'http://127.0.0.1:5001', 'x-hedge-attempt', 37.2)
  assert.equal(hedge.origin, 'http://127.0.0.1:5001')
  assert.deepEqual((hedge.headers as string[]).slice(6), ['grpc-previous-rpc-attempts', '2', 'grpc-timeout', '38m'])
})
