import { test } from 'node:test'
import assert from 'node:assert/strict'
import { loadProfile } from '../src/sim/profile.js'
import { spawnTarget, type Target } from '../src/sim/target.js'
import { simSession, timedRequest, writeTempProfile } from './helpers/sim.js'
import type { Timed } from './helpers/sim.js'

// Rounds of one request per replica, sent on a fixed 10 ms schedule whatever
// the answers (open loop), so most rounds land in the middle of a pause
// rather than straddling its start. "Slow" is read from the server's own
// account (Server-Timing sim;dur, pauses included), which client-side noise
// on a busy machine cannot blur.
const SLOW_MS = 20
const { agent, targets, temps } = simSession(128)

function scaledProfile(scope: 'shared' | 'replica', everyMs: number): string {
  const shipped = loadProfile('shared-slow')
  const temp = writeTempProfile({
    name: `pause-${scope}`,
    description: 'shared-slow with times scaled down for a test',
    replicas: shipped.replicas,
    model: { base: { type: 'fixed', ms: 2 }, stalls: [{ type: 'pause', everyMs, durationMs: { min: 400, max: 400 }, scope }] },
  })
  temps.push(temp)
  return temp.path
}

interface Rounds {
  anySlow: number
  allSlow: number
  total: number
}

async function sendRounds(target: Target, minAnySlow: number, maxMs: number): Promise<Rounds> {
  const rounds: Array<Promise<Timed[]>> = []
  const start = performance.now()
  let anySlowSoFar = 0
  // Bounded in rounds and time; stops early once enough pauses were seen and answered.
  for (let i = 0; i < 600 && performance.now() - start < maxMs; i++) {
    const round = Promise.all(target.urls.map((u) => timedRequest(u, agent)))
    round.then(
      (r) => (anySlowSoFar += r.some((x) => x.serverMs >= SLOW_MS) ? 1 : 0),
      () => {},
    )
    rounds.push(round)
    if (anySlowSoFar >= minAnySlow && performance.now() - start > 1500) break
    await new Promise((r) => setTimeout(r, 10))
  }
  const done = await Promise.all(rounds)
  const slowness = done.map((r) => r.map((x) => x.serverMs >= SLOW_MS))
  return {
    total: done.length,
    anySlow: slowness.filter((s) => s.some(Boolean)).length,
    allSlow: slowness.filter((s) => s.every(Boolean)).length,
  }
}

test('shared-slow: the shipped profile pauses a dependency shared by every replica', () => {
  const stalls = loadProfile('shared-slow').model.stalls ?? []
  assert.ok(stalls.length > 0 && stalls.every((s) => s.type === 'pause' && s.scope === 'shared'))
})

test('shared pauses: requests sent to every replica during a pause are all slow', async () => {
  const target = await spawnTarget({ profile: scaledProfile('shared', 300), seed: 5 })
  targets.push(target)
  const r = await sendRounds(target, 40, 5000)
  assert.ok(r.anySlow >= 10, `too few rounds met a pause: ${JSON.stringify(r)}`)
  // Only a round straddling a boundary can disagree: a pause's start, or
  // the instant 18 ms before its end (after it, the wait is under the 20 ms
  // "slow"). A 400 ms pause meets ~38 rounds (one per 10 ms), and a round's
  // three requests reach the server within a spread s, so each boundary
  // splits about 1 + s / 10 rounds: the share is ~ 1 - 2 (1 + s/10) / 38,
  // 0.95 for s < 10 ms. 0.8 is crossed only if s reaches ~28 ms for the
  // requests of one round, which a client freeze cannot cause (they were
  // all written in the same tick); a replica pausing on its own does.
  assert.ok(r.allSlow / r.anySlow >= 0.8, `rounds with a slow replica where all were slow: ${JSON.stringify(r)}`)
})

test('replica pauses (gc-pause) are not simultaneous: the contrast that makes the test mean something', async () => {
  const target = await spawnTarget({ profile: scaledProfile('replica', 1000), seed: 5 })
  targets.push(target)
  const r = await sendRounds(target, 40, 5000)
  assert.ok(r.anySlow >= 10, `too few rounds met a pause: ${JSON.stringify(r)}`)
  // Independent pauses: each replica is paused a share p = 400 / (1000 +
  // 400) = 0.29 of the time (exponential gaps, mean 1 s), so of the rounds
  // meeting any pause, all three are slow in p^3 / (1 - (1 - p)^3) = 0.037
  // on average. Over ~5 s (about 11 pauses in all) that share varies, but
  // 0.5 would need the replicas' pauses to coincide for half their paused
  // time; a shared pause gives ~0.95 (above).
  assert.ok(r.allSlow / r.anySlow <= 0.5, `independent pauses looked simultaneous: ${JSON.stringify(r)}`)
})
