import { test, after, beforeEach } from 'node:test'
import assert from 'node:assert/strict'
import { fetchServerStats, resetServerStats, spawnTarget } from '../src/sim/target.js'
import type { Target } from '../src/sim/target.js'
import { eventually, newAgent, timedRequest, writeTempProfile } from './helpers/sim.js'

// One replica, one worker, one waiting place, 1 s per request: whether a
// cancelled request gave its worker back shows up as a 503 or not, with no
// timing threshold to be flaky about.
const temp = writeTempProfile({
  name: 'one-worker',
  description: 'one worker, one waiting place, 1 s per request',
  replicas: 1,
  model: { base: { type: 'fixed', ms: 1000 }, queue: { workers: 1, depth: 1 } },
})
const agent = newAgent()
let target: Target

after(async () => {
  await target?.close()
  await agent.close()
  temp.cleanup()
})

beforeEach(async () => {
  target ??= await spawnTarget({ profile: temp.path, seed: 1 })
  await resetServerStats(target.statsUrl)
})

const stats = () => fetchServerStats(target.statsUrl)
const until = async (what: string, check: (s: Awaited<ReturnType<typeof stats>>) => boolean) =>
  assert.ok(await eventually(async () => check(await stats()), 4000), what)

test('a client abort mid-wait is counted as cancelled server-side, never completed', async () => {
  const controller = new AbortController()
  const pending = timedRequest(target.urls[0]!, agent, { signal: controller.signal })
  await until('request received', (s) => s.totals.received === 1)
  controller.abort()
  await assert.rejects(pending)
  await until('request cancelled', (s) => s.totals.cancelled === 1)
  const s = await stats()
  assert.equal(s.totals.completed, 0)
  assert.equal(s.replicas[0]!.cancelled, 1)
})

test('without a cancel, the third request finds the worker busy and the queue full (503)', async () => {
  const controller = new AbortController()
  const a = timedRequest(target.urls[0]!, agent, { signal: controller.signal }).catch(() => null)
  await until('A received', (s) => s.totals.received === 1)
  const b = timedRequest(target.urls[0]!, agent, { signal: controller.signal }).catch(() => null)
  await until('B received', (s) => s.totals.received === 2)
  const c = await timedRequest(target.urls[0]!, agent)
  assert.equal(c.status, 503)
  controller.abort()
  await Promise.all([a, b])
})

test('a cancelled request releases its worker: the queued one starts, a new one can queue', async () => {
  const controllerA = new AbortController()
  const a = timedRequest(target.urls[0]!, agent, { signal: controllerA.signal })
  await until('A received', (s) => s.totals.received === 1)
  const b = timedRequest(target.urls[0]!, agent)
  await until('B received', (s) => s.totals.received === 2)
  controllerA.abort()
  await assert.rejects(a)
  await until('A cancelled', (s) => s.totals.cancelled === 1)
  // B holds the worker now and the waiting place is free again: C queues instead of a 503.
  const c = await timedRequest(target.urls[0]!, agent)
  assert.equal(c.status, 200)
  assert.equal((await b).status, 200)
  const s = await stats()
  assert.deepEqual(
    { received: s.totals.received, completed: s.totals.completed, cancelled: s.totals.cancelled, rejected: s.totals.rejected },
    { received: 3, completed: 2, cancelled: 1, rejected: 0 },
  )
})
