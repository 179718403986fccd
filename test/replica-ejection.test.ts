/**
 * A replica that dies mid-run: outlier ejection takes it out of rotation, so
 * the errors fall from a third of the traffic to the few requests that were
 * on their way to it when it died (plus the failures that eject it).
 * The target runs in its own process; replica 2 dies after it has received
 * DIE_AFTER requests (a profile option), so the moment of death is fixed by
 * a count, not by a clock.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import { fetchServerStats, spawnTarget } from '../src/sim/target.js'
import type { PhaseResult, RunResult } from '../src/results/run-result.js'
import { simSession, writeTempProfile } from './helpers/sim.js'

const { targets, temps } = simSession()

const C = 8
const N = 600
const DIE_AFTER = 40
const FAILURES_TO_EJECT = 5

async function deadReplicaTarget() {
  const temp = writeTempProfile({
    name: 'dies-mid-run',
    description: 'three fast replicas; the third dies after 40 requests',
    replicas: 3,
    model: { base: { type: 'uniform', min: 1, max: 3 }, overrides: [{ index: 2, dieAfter: DIE_AFTER }] },
  })
  temps.push(temp)
  const target = await spawnTarget({ profile: temp.path, seed: 5 })
  targets.push(target)
  return target
}

function plainPhase(result: RunResult): PhaseResult {
  return result.phases.plain!
}

test('a replica that dies mid-run is ejected: errors fall to those in flight when it died', async () => {
  const target = await deadReplicaTarget()
  const result = await run({
    urls: target.urls,
    mode: 'plain',
    requests: N,
    concurrency: C,
    warmup: 0,
    // Long enough that no readmission happens in this short phase: the bound below then holds exactly.
    eject: { consecutiveFailures: FAILURES_TO_EJECT, baseEjectionMs: 60_000 },
    seed: 3,
  })
  const phase = plainPhase(result)
  const dead = target.urls[2]!
  // Errors: the requests that failed before the 5th failure in a row was recorded, and those
  // already dispatched to it when that happened (at most C in flight): <= 5 + C.
  assert.ok(phase.errors >= 1, 'the death is seen')
  assert.ok(phase.errors <= FAILURES_TO_EJECT + C, `${phase.errors} errors, at most ${FAILURES_TO_EJECT + C} expected`)
  assert.equal(phase.ejections?.length, 1, JSON.stringify(phase.ejections))
  const event = phase.ejections![0]!
  assert.equal(event.url, dead)
  assert.equal(event.readmittedAtMs, null)
  assert.equal(event.forMs, 60_000)
  assert.match(event.cause, new RegExp(`^${FAILURES_TO_EJECT} failures in a row`))
  assert.deepEqual(
    phase.replicas.map((r) => r.ejections),
    [0, 0, 1],
  )
  assert.equal(result.config.eject?.consecutiveFailures, FAILURES_TO_EJECT)
  // Client and servers agree. The dead replica received 40; the client may have written a few more
  // onto connections the replica was dropping as it died (they reach no server): at most C.
  // Once its listener is gone, connections are refused before any header is written.
  const stats = await fetchServerStats(target.statsUrl)
  const toDead = phase.replicas[2]!.attempts
  assert.ok(toDead >= DIE_AFTER && toDead <= DIE_AFTER + C, `${toDead} attempts written to the dead replica`)
  assert.equal(stats.replicas[0]!.received + stats.replicas[1]!.received, phase.attempts - toDead)
})

test('--eject-after N: one request at a time, the dead replica fails exactly N requests, then none reach it', async () => {
  // -c 1: round-robin sends every third request to the dead replica, one at a
  // time, so nothing is in flight beside the failures that count: the errors
  // are exactly the threshold, whatever the machine's speed.
  for (const after of [2, 5]) {
    const target = await deadReplicaTarget()
    const result = await run({
      urls: target.urls,
      mode: 'plain',
      requests: 240,
      concurrency: 1,
      warmup: 0,
      eject: { consecutiveFailures: after, baseEjectionMs: 60_000 },
      seed: 3,
    })
    const phase = plainPhase(result)
    assert.equal(phase.errors, after, `--eject-after ${after}: ${phase.errors} errors`)
    assert.equal(phase.ejections?.length, 1)
    assert.match(phase.ejections![0]!.cause, new RegExp(`^${after} failures in a row`))
  }
})

test('--no-eject measures the raw behaviour: a third of the requests after the death fail', async () => {
  const target = await deadReplicaTarget()
  const result = await run({ urls: target.urls, mode: 'plain', requests: N, concurrency: C, warmup: 0, eject: false, seed: 3 })
  const phase = plainPhase(result)
  // Round-robin sends exactly every third request to the dead replica. It dies on its 40th,
  // i.e. by request 3*40 = 120 of the phase; of the N - 120 after it, a third go there:
  // (600 - 120) / 3 = 160 errors, less at most C in flight mis-ordered at the moment of death.
  assert.ok(phase.errors >= 160 - C, `${phase.errors} errors`)
  assert.equal(phase.ejections, undefined)
  assert.equal(result.config.eject, null)
})

test('an ejected replica is readmitted on probation after a back-off that doubles', async () => {
  const target = await deadReplicaTarget()
  const base = 50
  const result = await run({
    urls: target.urls,
    mode: 'plain',
    durationMs: 700,
    concurrency: C,
    warmup: 0,
    eject: { consecutiveFailures: FAILURES_TO_EJECT, baseEjectionMs: base, maxEjectionMs: 10_000 },
    seed: 3,
  })
  const phase = plainPhase(result)
  const events = phase.ejections!
  // 50 + 100 + 200 ms of back-off fit in 700 ms: at least three ejections, each twice as long as the one before.
  assert.ok(events.length >= 3, JSON.stringify(events))
  events.forEach((e, i) => assert.equal(e.forMs, base * 2 ** i))
  for (const [i, e] of events.entries()) {
    if (i < events.length - 1) {
      assert.ok(e.readmittedAtMs !== null && e.readmittedAtMs >= e.atMs + e.forMs - 1, `readmitted after its back-off: ${JSON.stringify(e)}`)
      // On probation a single failure ejects it again: the next event follows closely.
      assert.ok(events[i + 1]!.atMs >= e.readmittedAtMs!)
      assert.match(events[i + 1]!.cause, /^1 failure in a row/)
    }
  }
  // Each readmission costs at most the probation request and those dispatched with it (C).
  const readmissions = events.filter((e) => e.readmittedAtMs !== null).length
  assert.ok(phase.errors <= FAILURES_TO_EJECT + C + readmissions * C, `${phase.errors} errors for ${readmissions} readmissions`)
})

test('requests hedgebench aborts itself after an interruption do not eject a replica', async () => {
  // Two replicas that answer in 300 ms, 10 in flight: 5 on each when the run is stopped at
  // once (stopNow). Those aborts arrive as 5 failures in a row at each replica, enough to eject
  // one (never the last); they are ours, not the replica's, so nothing may be ejected.
  const temp = writeTempProfile({ name: 'slow', description: 'two slow replicas', replicas: 2, model: { base: { type: 'fixed', ms: 300 } } })
  temps.push(temp)
  const target = await spawnTarget({ profile: temp.path, seed: 1 })
  targets.push(target)
  const stop = new AbortController()
  const running = run({
    urls: target.urls,
    mode: 'plain',
    requests: 1000,
    concurrency: 10,
    warmup: 0,
    eject: { consecutiveFailures: FAILURES_TO_EJECT },
    signal: stop.signal,
    stopNow: stop.signal,
    seed: 2,
  })
  setTimeout(() => stop.abort(), 450) // one round answered, the second in flight
  const result = await running
  assert.equal(result.partial, true)
  const phase = plainPhase(result)
  assert.ok((phase.interrupted ?? 0) >= 1, `interrupted ${phase.interrupted}`)
  assert.deepEqual(phase.ejections, [])
})
