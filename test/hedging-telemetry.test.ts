/**
 * The 'Controlled Duplication' article's telemetry and the 'ask many servers' article's tied requests, against the simulated
 * replicas in their own process: loser runtime (abort vs ignore), attempts
 * per logical request, cancellation success, per-replica utilisation, and
 * the work a tie saves (copies that started executing, counted by the
 * server) against the requests it sends.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'
import { workText } from '../src/report/hedging-telemetry.js'
import { spawnTarget, type Target } from '../src/sim/target.js'
import type { PhaseResult, RunOptions } from '../src/index.js'
import { writeTempProfile, type TempProfile } from './helpers/sim.js'
import { round3 } from '../src/core/round.js'

const targets: Target[] = []
const temps: TempProfile[] = []
after(async () => {
  await Promise.all(targets.map((t) => t.close()))
  for (const t of temps) t.cleanup()
})

async function target(model: object, replicas: number): Promise<Target> {
  const temp = writeTempProfile({ name: 'telemetry', description: 'test target', replicas, seed: 9, model })
  temps.push(temp)
  const t = await spawnTarget({ profile: temp.path, seed: 9 })
  targets.push(t)
  return t
}

async function hedgedPhase(options: RunOptions): Promise<PhaseResult> {
  return (await run(options)).phases.hedged!
}

test('loser runtime: aborted losers stop at once, ignored ones run on until their answer; attempts per request add up', async () => {
  // Replica 0 takes 200 ms, replica 1 takes 5 ms. An original on replica 0 is hedged to
  // replica 1 at 10 ms, which answers ~5 ms later: the loser has ~185 ms still to go.
  const t = await target({ base: { type: 'fixed', ms: 5 }, overrides: [{ index: 0, addMs: 195 }] }, 2)
  const base: RunOptions = {
    urls: t.urls,
    mode: 'hedged',
    requests: 30,
    concurrency: 2,
    warmup: 0,
    serverStatsUrl: t.statsUrl,
    hedge: { delay: 10, budgetPct: 100 },
    seed: 4,
  }
  const aborted = await hedgedPhase({ ...base, hedge: { ...base.hedge, cancel: 'abort' } })
  const ignored = await hedgedPhase({ ...base, hedge: { ...base.hedge, cancel: 'ignore' } })
  const a = aborted.hedging!
  const i = ignored.hedging!
  // Half the originals (round-robin) land on the slow replica and lose to their hedge.
  assert.ok(a.loserRuntimeMs!.count >= 10, JSON.stringify(a.loserRuntimeMs))
  assert.ok(i.loserRuntimeMs!.count >= 10, JSON.stringify(i.loserRuntimeMs))
  // Ignored: the answer comes >= 200 ms after the loser started, the decision <= ~10 + 5 ms
  // plus scheduling delay; 100 ms leaves 85 ms for that delay. Aborted: the abort is
  // synchronous in the decision; a tenth of the ignored runtime is far above its cost.
  assert.ok(i.loserRuntimeMs!.p50 > 100, `ignored losers ran on ${i.loserRuntimeMs!.p50} ms`)
  assert.ok(a.loserRuntimeMs!.p50 < i.loserRuntimeMs!.p50 / 10, `aborted ${a.loserRuntimeMs!.p50} ms vs ignored ${i.loserRuntimeMs!.p50} ms`)
  // Attempts per logical request: every request is counted once; those with 2 are those that fired a hedge.
  const per = a.attemptsPerRequest!
  assert.equal((per['1'] ?? 0) + (per['2'] ?? 0), aborted.requests)
  assert.equal(per['2'] ?? 0, Math.round((a.triggerRate * aborted.requests) / 100))
  // Cancellation success: the target saw every aborted loser go before it answered.
  const server = aborted.server!
  assert.equal(Math.min(server.cancelled, a.cancelled), a.cancelled)
  assert.match(
    renderText(await run({ ...base, hedge: { ...base.hedge, cancel: 'abort' } })),
    /cancellation success: server stopped (\d+) of \1 cancelled losers/,
  )
})

test('utilisation: busy time over wall time is the mean number of requests a replica was executing', async () => {
  // One replica, 10 ms of work, 3 in flight: at most 3 execute at once, and nearly always 3
  // (each cycle is 10 ms of work plus the client's and the loopback's share, ~1 ms idle; the
  // wall time also covers the reads that bracket the phase). 1.5 leaves room for a loaded machine.
  const t = await target({ base: { type: 'fixed', ms: 10 } }, 1)
  const phase = (await run({ urls: t.urls, mode: 'plain', requests: 150, concurrency: 3, warmup: 0, serverStatsUrl: t.statsUrl, seed: 1 })).phases.plain!
  const busy = phase.server!.utilisation!
  assert.equal(busy.length, 1)
  assert.ok(busy[0]!.busy <= 3.01 && busy[0]!.busy > 1.5, `mean executing ${busy[0]!.busy}`)
  assert.equal(phase.server!.started, 150)
})

test('tied requests: both copies are sent, only one starts executing; plain parallel copies both run', async () => {
  // Two workers per replica and 12 in flight: copies queue, so the first copy to start drops
  // its twin from the other queue (or on arrival). In one process the claim is atomic, so no
  // request ever executes twice: work started = requests, exactly.
  const t = await target({ base: { type: 'uniform', min: 4, max: 8 }, queue: { workers: 2, depth: 64 } }, 3)
  const base: RunOptions = { urls: t.urls, mode: 'hedged', requests: 300, concurrency: 12, warmup: 0, serverStatsUrl: t.statsUrl, seed: 6 }
  const tied = await hedgedPhase({ ...base, hedge: { delay: 0, tied: true } })
  assert.equal(tied.hedging!.tied, true)
  // Both copies launch at once; a twin still waiting for a connection when the first answered
  // is stopped before the wire (unsent), so the extra load is 100 % less those.
  assert.equal(tied.hedging!.attemptsPerRequest!['2'], 300, 'every request launches both copies')
  const unsentTwins = tied.hedging!.unsent - tied.hedging!.unsentOriginals!
  assert.equal(tied.hedging!.extraLoadPct, round3(((300 - unsentTwins) / 300) * 100))
  assert.equal(tied.errors, 0, 'a dropped twin is never the answer')
  // The 409s of dropped twins the client heard are the tie working, not replicas failing.
  assert.ok(
    tied.hedging!.tiedDropped! > 0 && tied.hedging!.tiedDropped! <= tied.server!.tiedDropped!,
    `client heard ${tied.hedging!.tiedDropped} drops, server made ${tied.server!.tiedDropped}`,
  )
  assert.deepEqual(
    tied.replicas.map((r) => r.errors),
    [0, 0, 0],
  )
  assert.equal(
    tied.replicas.some((r) => r.statusCodes['409'] !== undefined),
    false,
  )
  assert.equal(tied.server!.started, 300, 'no request executed twice')
  // Every twin that reached the server was dropped before starting (or cancelled by the client first).
  assert.ok(tied.server!.tiedDropped! + tied.hedging!.cancelled + tied.hedging!.unsent >= 300, JSON.stringify(tied.server))
  // Without the tie (--parallel), both copies of many requests start before either answers.
  const parallel = await hedgedPhase({ ...base, hedge: { delay: 0, parallel: true, budgetPct: 100 } })
  assert.equal(parallel.server!.tiedDropped, 0)
  // Measured: ~560 of 600 copies start. 330 (10 % extra work) is far below, far above the tie's 300.
  assert.ok(parallel.server!.started! > 300 + 30, `parallel copies started ${parallel.server!.started} for 300 requests`)
})

test("interleaved phases: the one server count is given once, for both phases, and their work is counted against both phases' requests", async () => {
  // Replica 0 is slow (40 ms), replica 1 fast: the hedged lane hedges about half its requests, the plain lane none.
  const t = await target({ base: { type: 'fixed', ms: 2 }, overrides: [{ index: 0, addMs: 38 }] }, 2)
  for (const workers of [1, 2]) {
    const result = await run({
      urls: t.urls,
      mode: 'both',
      schedule: 'interleaved',
      requests: 60,
      concurrency: 4,
      warmup: 0,
      workers,
      serverStatsUrl: t.statsUrl,
      hedge: { delay: 10, budgetPct: 100 },
      seed: 3,
    })
    const { plain, hedged } = result.phases
    assert.equal(plain!.server, undefined, `workers ${workers}: no copy of the window's count on the plain phase`)
    const s = hedged!.server!
    assert.deepEqual(s.phases, ['plain', 'hedged'])
    assert.equal(s.received, plain!.attempts + hedged!.attempts)
    assert.equal(s.clientAttempts, s.received)
    const text = renderText(result)
    assert.match(
      text,
      new RegExp(
        `server received ${s.received} vs client attempts ${s.received} \\(plain and hedged together: one interleaved window, which the server cannot split\\): MATCH`,
      ),
    )
    // Every copy that reached a server started (no ties): the extra work is the hedges, over both lanes' requests.
    const requests = plain!.requests + hedged!.requests
    const pct = (((s.started! - requests) / requests) * 100).toFixed(1)
    assert.match(
      text,
      new RegExp(
        `work: ${s.started} copies began executing for ${requests} requests of plain and hedged together: \\+${pct.replace('.', '\\.')}% extra work \\(vs \\+`,
      ),
    )
    assert.ok(s.started! - requests <= hedged!.hedging!.hedgesSent, `started ${s.started} for ${requests} requests and ${hedged!.hedging!.hedgesSent} hedges`)
  }
})

test('fewer copies began than requests were made (refused connections): no negative extra work, the shortfall named', () => {
  const phase = { name: 'plain', requests: 1000, calls: undefined } as unknown as PhaseResult
  const s = { received: 997, completed: 997, cancelled: 0, hedgeHeader: 0, clientAttempts: 1000, match: false, started: 997 }
  assert.equal(
    workText(s, [phase]),
    '997 copies began executing for 1000 requests: +0.0% extra work; 3 requests never began executing (refused, or failed before a server took them)',
  )
})
