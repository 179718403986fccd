/**
 * The stats contract's lanes (wire/stats.ts) on the simulated HTTP replicas:
 * a request carrying x-hedgebench-lane is counted under `totals.lanes` by
 * the replicas' own rules (received, started, completed, cancelled, busy
 * time), summed over the replicas; a value that is no lane is not counted
 * per lane, and the map stops growing at MAX_LANES values, so a client's
 * stray header values cannot grow a server's memory. A reset clears them.
 * The client (run/server-check.ts) reads each lane's difference between two
 * reads, and leaves out what the target does not count per lane.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { request } from 'undici'
import { fetchServerStats, resetServerStats, startTarget, type Target } from '../src/sim/target.js'
import { addLanes, countLane, LANE_HEADER, laneOf, MAX_LANES, type LaneTotals } from '../src/wire/stats.js'
import { parseProfile } from '../src/sim/profile.js'
import { ServerCounter } from '../src/run/server-check.js'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

let target: Target
before(async () => {
  // Two replicas answering in 1-2 ms: the counts are the test, not the latency.
  const profile = parseProfile({ name: 'lanes', description: 'counting lanes', replicas: 2, model: { base: { type: 'uniform', min: 1, max: 2 } } }, 'lanes')
  target = await startTarget({ profile, seed: 1 })
})
after(async () => {
  await target?.close()
})

async function send(url: string, lane?: string): Promise<void> {
  const res = await request(url, { headers: lane === undefined ? {} : { [LANE_HEADER]: lane } })
  await res.body.text()
}

test('laneOf: short token values only, and no new value past MAX_LANES', () => {
  const lanes: Record<string, LaneTotals> = {}
  assert.equal(laneOf('plain', lanes), 'plain')
  assert.equal(laneOf(['3', '4'], lanes), '3')
  for (const bad of [undefined, '', 'a b', 'x'.repeat(17), 'é', 7]) assert.equal(laneOf(bad, lanes), null, String(bad))
  for (let i = 0; i < MAX_LANES; i++) countLane(lanes, String(i), 'received')
  assert.equal(laneOf('new', lanes), null, 'full: no new value')
  assert.equal(laneOf('5', lanes), '5', 'full: a value already kept still counts')
  const sum: Record<string, LaneTotals> = {}
  addLanes(sum, { a: { received: 2, completed: 1, cancelled: 1, busyMs: 1.5 } })
  addLanes(sum, { a: { received: 1, completed: 1, cancelled: 0, started: 1 }, b: { received: 1, completed: 0, cancelled: 0 } })
  assert.deepEqual(sum, { a: { received: 3, completed: 2, cancelled: 1, busyMs: 1.5, started: 1 }, b: { received: 1, completed: 0, cancelled: 0 } })
})

test('the replicas count each lane apart, summed over the replicas, and a reset clears the lanes', async () => {
  await resetServerStats(target.statsUrl)
  const plan: Array<[number, string | undefined]> = [
    [0, 'plain'],
    [1, 'plain'],
    [0, '1'],
    [1, '1'],
    [1, '1'],
    [0, '2'],
    [0, undefined],
    [1, 'not a lane'],
  ]
  for (const [replica, lane] of plan) await send(target.urls[replica]!, lane)
  const stats = await fetchServerStats(target.statsUrl)
  assert.equal(stats.totals.received, plan.length)
  const lanes = stats.totals.lanes
  assert.deepEqual(Object.keys(lanes).sort(), ['1', '2', 'plain'])
  for (const [lane, n] of [
    ['plain', 2],
    ['1', 3],
    ['2', 1],
  ] as const) {
    const counts = lanes[lane]!
    assert.deepEqual([counts.received, counts.started, counts.completed, counts.cancelled], [n, n, n, 0], lane)
    assert.ok((counts.busyMs ?? 0) > 0, `${lane}: busy time`)
  }
  assert.deepEqual(stats.replicas[0]!.lanes['1']?.received, 1, "replica 0's own count")
  await resetServerStats(target.statsUrl)
  assert.deepEqual((await fetchServerStats(target.statsUrl)).totals.lanes, {})
})

test("the client's read of the lanes: each lane's difference, against its attempts; started only where the target counts it per lane", async () => {
  const answers = [
    // before the window: counters that only grow, one lane seen earlier
    {
      totals: {
        received: 10,
        completed: 10,
        cancelled: 0,
        hedgeHeader: 0,
        started: 10,
        stalled: 2,
        lanes: { plain: { received: 4, completed: 4, cancelled: 0 } },
      },
    },
    // after: the totals count starts, the lanes do not
    {
      totals: {
        received: 25,
        completed: 24,
        cancelled: 1,
        hedgeHeader: 1,
        started: 25,
        stalled: 5,
        lanes: { plain: { received: 9, completed: 9, cancelled: 0 }, '1': { received: 10, completed: 9, cancelled: 1 } },
      },
    },
  ]
  let reads = 0
  const stats = createServer((req, res) => {
    req.resume()
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(answers[Math.min(reads++, answers.length - 1)]))
  })
  await new Promise<void>((r) => stats.listen(0, '127.0.0.1', r))
  try {
    const counter = new ServerCounter(`http://127.0.0.1:${(stats.address() as AddressInfo).port}/stats`)
    const before = await counter.snapshot()
    assert.ok(before)
    const checked = await counter.checkLanes(before, 15, 1, [
      { tag: 'plain', attempts: 5 },
      { tag: '1', attempts: 10 },
      { tag: '2', attempts: 0 },
    ])
    assert.equal(checked?.window.received, 15)
    assert.equal(checked?.window.stalled, 3, 'the stalls of the window: a difference, as every counter')
    assert.equal(checked?.window.match, true)
    assert.deepEqual(checked?.lanes, [
      { received: 5, completed: 5, cancelled: 0, clientAttempts: 5, match: true },
      { received: 10, completed: 9, cancelled: 1, clientAttempts: 10, match: true },
      { received: 0, completed: 0, cancelled: 0, clientAttempts: 0, match: true },
    ])
    // A target without `lanes`: the window only.
    answers.splice(0, 2, { totals: { received: 1, completed: 1, cancelled: 0, hedgeHeader: 0 } } as never)
    reads = 0
    const plainBefore = (await counter.snapshot())!
    const bare = await counter.checkLanes(plainBefore, 0, 0, [{ tag: 'plain', attempts: 0 }])
    assert.equal(bare?.lanes, null)
    assert.ok(bare && !('stalled' in bare.window), 'a target that does not count stalls: none claimed')
  } finally {
    await new Promise<void>((r) => stats.close(() => r()))
  }
})
