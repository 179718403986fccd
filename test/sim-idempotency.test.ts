import { test, after, before } from 'node:test'
import assert from 'node:assert/strict'
import { fetchServerStats, resetServerStats, spawnTarget, startTarget } from '../src/sim/target.js'
import type { Target } from '../src/sim/target.js'
import { newAgent, timedRequest, writeTempProfile } from './helpers/sim.js'

const temp = writeTempProfile({
  name: 'fast',
  description: 'three quick replicas',
  replicas: 3,
  model: { base: { type: 'uniform', min: 1, max: 3 } },
})
const agent = newAgent()
let target: Target

before(async () => {
  target = await spawnTarget({ profile: temp.path, seed: 9 })
})

after(async () => {
  await target?.close()
  await agent.close()
  temp.cleanup()
})

const post = (replica: number, body: string, key?: string) =>
  timedRequest(`${target.urls[replica]}orders`, agent, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
  })

test('two POSTs with the same key to two replicas execute once; the second gets the first answer', async () => {
  await resetServerStats(target.statsUrl)
  const first = await post(0, '{"item":1}', 'key-1')
  const second = await post(1, '{"item":1}', 'key-1')
  assert.equal(first.status, 200)
  assert.equal(second.status, first.status)
  assert.equal(second.body, first.body)
  const s = await fetchServerStats(target.statsUrl)
  assert.equal(s.totals.executions, 1)
  assert.equal(s.totals.duplicatesSuppressed, 1)
  assert.deepEqual(
    s.replicas.map((r) => r.idempotencyKeys),
    [1, 1, 0],
  )
  assert.deepEqual(s.totals.byMethod, { POST: 2 })
})

test('a hedged POST (same key to every replica at once) creates one record', async () => {
  await resetServerStats(target.statsUrl)
  const answers = await Promise.all([0, 1, 2].map((i) => post(i, '{"item":2}', 'key-2')))
  assert.equal(new Set(answers.map((a) => a.body)).size, 1)
  const s = await fetchServerStats(target.statsUrl)
  assert.equal(s.totals.executions, 1)
  assert.equal(s.totals.duplicatesSuppressed, 2)
})

test('the same key with a different body is a client bug: 422, nothing executed', async () => {
  await resetServerStats(target.statsUrl)
  assert.equal((await post(0, '{"item":3}', 'key-3')).status, 200)
  const clash = await post(2, '{"item":4}', 'key-3')
  assert.equal(clash.status, 422)
  const s = await fetchServerStats(target.statsUrl)
  assert.equal(s.totals.executions, 1)
  assert.equal(s.totals.duplicatesSuppressed, 0)
  assert.deepEqual(s.totals.byStatus, { '200': 1, '422': 1 })
})

test('a plain POST sent twice executes twice', async () => {
  await resetServerStats(target.statsUrl)
  const a = await post(0, '{"item":5}')
  const b = await post(0, '{"item":5}')
  assert.notEqual(a.body, b.body)
  const s = await fetchServerStats(target.statsUrl)
  assert.equal(s.totals.executions, 2)
  assert.equal(s.totals.idempotencyKeys, 0)
})

test('the hedge header is counted; control endpoints are not; reset zeroes counters and the key store', async () => {
  await resetServerStats(target.statsUrl)
  await timedRequest(target.urls[1]!, agent, { headers: { 'x-hedge-attempt': '1' } })
  await timedRequest(target.urls[1]!, agent)
  await post(0, '{"item":6}', 'key-6')
  await fetchServerStats(target.statsUrl)
  let s = await fetchServerStats(target.statsUrl)
  assert.equal(s.totals.received, 3)
  assert.equal(s.replicas[1]!.hedgeHeader, 1)
  assert.equal(s.totals.executions, 1)

  await resetServerStats(target.statsUrl)
  s = await fetchServerStats(target.statsUrl)
  for (const r of [...s.replicas, s.totals]) {
    assert.equal(r.received + r.completed + r.cancelled + r.rejected + r.hedgeHeader, 0)
    assert.equal(r.idempotencyKeys + r.duplicatesSuppressed + r.executions, 0)
    assert.deepEqual([r.byMethod, r.byStatus], [{}, {}])
  }
  // The store is empty too: the same key executes again.
  await post(0, '{"item":6}', 'key-6')
  assert.equal((await fetchServerStats(target.statsUrl)).totals.executions, 1)
})

test('in-process startTarget honours a custom hedge header name', async (t) => {
  const inProc = await startTarget({ profile: temp.path, hedgeHeader: 'X-My-Hedge', replicas: 2 })
  t.after(() => inProc.close())
  assert.equal(inProc.urls.length, 2)
  await timedRequest(inProc.urls[0]!, agent, { headers: { 'x-my-hedge': '2' } })
  await timedRequest(inProc.urls[0]!, agent, { headers: { 'x-hedge-attempt': '1' } })
  const s = await fetchServerStats(inProc.statsUrl)
  assert.equal(s.hedgeHeaderName, 'x-my-hedge')
  assert.equal(s.totals.hedgeHeader, 1)
  assert.equal(s.totals.received, 2)
})
