/**
 * Issue 2 acceptance, counting: what the client says it sent is exactly what
 * real servers on 127.0.0.1 received, at concurrency 40, in plain and in
 * hedged mode; statuses and transport error kinds are counted; several URLs
 * get a per-replica breakdown that matches each server's own count.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import type { PhaseResult } from '../src/results/run-result.js'
import { assertHedgedCountsMatch, runHedgedWithCancels } from './helpers/hedged-cancels.js'
import { settle, startServer } from './helpers/servers.js'

function sum(phases: Array<PhaseResult | undefined>, key: 'attempts' | 'requests'): number {
  return phases.reduce((s, p) => s + (p?.[key] ?? 0), 0)
}

test('plain, c=40: client attempts equal what the server received, exactly', async (t) => {
  const server = await startServer({ delayMs: (n) => n % 5 })
  t.after(() => server.close())
  const result = await run({ urls: [server.url], concurrency: 40, requests: 3000, warmup: 200, mode: 'plain', seed: 1 })
  const { warmup, plain } = result.phases
  assert.equal(plain!.requests, 3000)
  assert.equal(warmup!.requests, 200)
  assert.equal(plain!.attempts, 3000)
  assert.equal(plain!.ok, 3000)
  assert.equal(await settle([server], 3200), sum([warmup, plain], 'attempts'))
  assert.equal(server.completed, 3200)
})

test('hedged, c=40, hedges and cancels on every other request: attempts still equal what the servers received', async (t) => {
  const stackTraceLimit = Error.stackTraceLimit
  const { hedged, servers } = await runHedgedWithCancels(t)
  await assertHedgedCountsMatch(hedged, servers)
  // Losers are cancelled with stack traces off (hedge-errors.ts); the process's setting is back afterwards.
  assert.equal(Error.stackTraceLimit, stackTraceLimit)
})

test('a server answering 503 counts statuses and errors, not ok', async (t) => {
  const server = await startServer({ status: (n) => (n % 4 === 0 ? 503 : 200) })
  t.after(() => server.close())
  const result = await run({ urls: [server.url], concurrency: 8, requests: 400, warmup: 0, mode: 'plain', seed: 3 })
  const plain = result.phases.plain!
  assert.equal(plain.requests, 400)
  assert.deepEqual(plain.statusCodes, { '200': 300, '503': 100 })
  assert.equal(plain.errors, 100)
  assert.equal(plain.ok, 300)
  assert.deepEqual(plain.errorKinds, {})
})

test('a server resetting connections gives counted transport error kinds, never a throw', async (t) => {
  // Every third request has its socket destroyed mid-request.
  let resets = 0
  const server = await startServer({
    handle: (req, res, n) => {
      req.resume()
      if (n % 3 === 0) {
        resets++
        return void req.socket.destroy()
      }
      res.end('ok\n')
    },
  })
  t.after(() => server.close())
  const result = await run({ urls: [server.url], concurrency: 6, requests: 300, warmup: 0, mode: 'plain', seed: 4 })
  const plain = result.phases.plain!
  assert.equal(plain.requests, 300)
  const kinds = plain.errorKinds
  const transport = Object.values(kinds).reduce((a, b) => a + b, 0)
  assert.ok(transport > 0, 'some requests failed')
  for (const kind of Object.keys(kinds)) assert.match(kind, /^(UND_ERR_SOCKET|ECONNRESET|EPIPE|UND_ERR_CLOSED)$/, kind)
  assert.equal(plain.errors, transport)
  assert.equal(plain.ok + plain.errors, 300)
  assert.equal(plain.statusCodes['200'], plain.ok)
  // The server saw exactly what the client put on the wire.
  assert.equal(await settle([server], plain.attempts), plain.attempts)
  assert.equal(plain.attempts, 300)
  assert.equal(resets, 100, 'one request in three was reset')
  assert.equal(transport, resets)
})

test('several URLs: round-robin over replicas, a per-replica breakdown that matches each server', async (t) => {
  const servers = await Promise.all([1, 2, 3].map((ms) => startServer({ delayMs: ms })))
  t.after(() => Promise.all(servers.map((s) => s.close())))
  const urls = servers.map((s) => `${s.url}r?x=1`)
  const result = await run({ urls, concurrency: 6, requests: 600, warmup: 0, mode: 'plain', seed: 5 })
  const plain = result.phases.plain!
  assert.equal(plain.replicas.length, 3)
  assert.deepEqual(
    plain.replicas.map((r) => r.url),
    urls,
  )
  for (const [i, r] of plain.replicas.entries()) {
    assert.equal(r.requests, 200, `replica ${i} requests`)
    assert.equal(r.attempts, servers[i]!.received, `replica ${i} attempts vs server`)
    assert.equal(r.ok, 200)
    // Its own latency: server i waits i+1 ms.
    assert.ok(r.latencyMs.p50 >= i + 1, `replica ${i} p50 ${r.latencyMs.p50}`)
  }
  assert.equal(
    plain.replicas.reduce((s, r) => s + r.attempts, 0),
    plain.attempts,
  )
})
