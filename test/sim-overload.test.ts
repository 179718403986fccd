import { test } from 'node:test'
import assert from 'node:assert/strict'
import { fetchServerStats, spawnTarget } from '../src/sim/target.js'
import { closedLoop, eventually, median, simSession, timedRequest, writeTempProfile } from './helpers/sim.js'

const { agent, targets, temps } = simSession(128)

test('overload: latency rises with concurrency (server-side queue + service median, c=1 vs 20 in flight at one replica)', async () => {
  const target = await spawnTarget({ profile: 'overload', seed: 17 })
  targets.push(target)
  const one = [target.urls[0]!]
  const low = await closedLoop(one, 60, 1, agent)
  // 20 in flight at one replica of 4 workers: ~16 queued, ~40 ms of queue on a ~10 ms service,
  // about 5 times c=1's total. Ratio 2 still holds if a starved client keeps only 8 in flight
  // (a 2-core machine running other tests: 40 spread over the three replicas once reached only
  // ~19, 1.6 times), and one replica needs a third of the requests per second.
  const high = await closedLoop(one, 300, 20, agent)
  // The server's account (queue wait + service) is immune to client-side scheduling noise.
  const total = (r: { queueMs: number; serverMs: number }) => r.queueMs + r.serverMs
  const lowMedian = median(low.map(total))
  const highMedian = median(high.map(total))
  assert.ok(median(low.map((r) => r.queueMs)) < 1, 'no queueing at c=1')
  assert.ok(highMedian >= 2 * lowMedian, `median ${lowMedian.toFixed(1)} ms at c=1 vs ${highMedian.toFixed(1)} ms at c=20`)
  // What the client sees rises too (its own noise only adds).
  assert.ok(median(high.map((r) => r.ms)) >= highMedian)
  // 20 in flight fit in 4 workers + 32 queued: nobody was turned away.
  assert.ok([...low, ...high].every((r) => r.status === 200))
})

test('a full queue answers 503 at once; waiting requests are cancelled when the client gives up', async () => {
  const temp = writeTempProfile({
    name: 'tiny-queue',
    description: 'one worker, four waiting places',
    replicas: 1,
    model: { base: { type: 'fixed', ms: 5000 }, queue: { workers: 1, depth: 4 } },
  })
  temps.push(temp)
  const target = await spawnTarget({ profile: temp.path, seed: 1 })
  targets.push(target)
  const controller = new AbortController()
  const pending = Array.from({ length: 10 }, () => timedRequest(target.urls[0]!, agent, { signal: controller.signal }).catch(() => null))
  // 1 running + 4 queued; the other 5 are refused without waiting for the 5 s service time.
  const answered = await eventually(async () => (await fetchServerStats(target.statsUrl)).totals.rejected === 5, 4000)
  assert.ok(answered, 'five requests refused')
  let stats = await fetchServerStats(target.statsUrl)
  assert.equal(stats.totals.received, 10)
  assert.deepEqual(stats.totals.byStatus, { '503': 5 })
  controller.abort()
  const results = await Promise.all(pending)
  assert.equal(results.filter((r) => r?.status === 503).length, 5)
  assert.ok(await eventually(async () => (await fetchServerStats(target.statsUrl)).totals.cancelled === 5, 4000), 'five cancelled')
  stats = await fetchServerStats(target.statsUrl)
  assert.equal(stats.totals.completed, 5)
  assert.equal(stats.totals.cancelled, 5)
})
