/**
 * --connections N (ghz's): each replica's attempts are spread over exactly N
 * HTTP/2 sessions, for h2c, h2 over TLS and gRPC. Real servers on 127.0.0.1
 * count the sessions that carried a stream and the streams on each: every
 * session gets some, they add up to the server's total, which is the
 * client's attempts, no session carries more than its server's
 * SETTINGS_MAX_CONCURRENT_STREAMS, the connections the report says were
 * opened are N per replica, and hedges still go to another replica. The pre-run
 * check's own connection carries no stream (gRPC: one call no handler runs).
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, createSecureServer, type Http2Session, type Http2Server, type Http2SecureServer } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { run } from '../src/run/run.js'
import { UsageError } from '../src/core/errors.js'
import type { RunOptions } from '../src/run/run-options.js'
import type { RunResult } from '../src/results/run-result.js'
import { configEntries } from '../src/results/config-entries.js'
import { compareRuns } from '../src/report/compare.js'
import { renderText } from '../src/report/text.js'
import { parseResult, renderJson } from '../src/results/result-json.js'
import { startGrpcServer, SHOP_PROTO, type GrpcTestServer } from './helpers/grpc-server.js'
import { NO_OPENSSL, selfSigned } from './helpers/tls-cert.js'

/** A stream limit below what -c 30 over two replicas puts on three sessions (5 each): attempts wait for a free stream. */
const LIMIT = 4

interface SessionCounter {
  url: string
  /** Streams per session that carried any, in the order the sessions appeared; with the idempotency key of each. */
  streams: Map<Http2Session, string[]>
  /** Most streams open at once on one session. */
  maxOpen: number
  reset(): void
  close(): Promise<void>
}

/** An h2 server (cleartext or TLS) answering each stream after 10 ms, counting streams per session. */
async function h2Server(tls: { key: Buffer; cert: Buffer } | null): Promise<SessionCounter> {
  const streams = new Map<Http2Session, string[]>()
  const open = new Map<Http2Session, number>()
  const counter = { streams, maxOpen: 0 } as SessionCounter
  const onRequest = (req: import('node:http2').Http2ServerRequest, res: import('node:http2').Http2ServerResponse): void => {
    const session = req.stream.session!
    if (!streams.has(session)) streams.set(session, [])
    streams.get(session)!.push(String(req.headers['idempotency-key'] ?? ''))
    const now = (open.get(session) ?? 0) + 1
    open.set(session, now)
    counter.maxOpen = Math.max(counter.maxOpen, now)
    req.stream.once('close', () => open.set(session, (open.get(session) ?? 1) - 1))
    req.resume()
    setTimeout(() => res.end('ok'), 10)
  }
  const settings = { maxConcurrentStreams: LIMIT }
  const server: Http2Server | Http2SecureServer = tls ? createSecureServer({ ...tls, settings }, onRequest) : createServer({ settings }, onRequest)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  counter.url = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}/`
  counter.reset = () => {
    streams.clear()
    counter.maxOpen = 0
  }
  counter.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      for (const s of open.keys()) s.destroy()
    })
  return counter
}

const cert = selfSigned()
const h2c: SessionCounter[] = []
const h2tls: SessionCounter[] = []
const grpc: GrpcTestServer[] = []
before(async () => {
  h2c.push(await h2Server(null), await h2Server(null))
  if (cert) h2tls.push(await h2Server(cert), await h2Server(cert))
  grpc.push(await startGrpcServer(() => ({ delayMs: 10 })), await startGrpcServer(() => ({ delayMs: 10 })))
})
after(async () => {
  await Promise.all([...h2c, ...h2tls].map((s) => s.close()))
  grpc.forEach((s) => s.close())
})

const base = { concurrency: 30, requests: 150, warmup: 0, seed: 5 } as const

function attempts(result: RunResult): number {
  return Object.values(result.phases).reduce((n, p) => n + (p?.attempts ?? 0), 0)
}

function opened(result: RunResult): number {
  return Object.values(result.phases).reduce((n, p) => n + (p?.connectionsOpened ?? 0), 0)
}

/** Streams the client reset may be read by the server after the run: wait (bounded) until the totals meet. */
async function settled(total: () => number, expected: number): Promise<void> {
  for (let i = 0; i < 100 && total() < expected; i++) await new Promise((r) => setTimeout(r, 10))
}

async function checkSpread(servers: SessionCounter[], options: Omit<RunOptions, 'urls'>): Promise<RunResult> {
  servers.forEach((s) => s.reset())
  const result = await run({ ...base, ...options, urls: servers.map((s) => s.url), http2: true, connections: 3 })
  const total = (): number => servers.reduce((n, s) => n + [...s.streams.values()].reduce((m, l) => m + l.length, 0), 0)
  await settled(total, attempts(result))
  for (const s of servers) {
    const counts = [...s.streams.values()].map((l) => l.length)
    assert.equal(counts.length, 3, `sessions that carried streams at ${s.url}: ${counts}`)
    assert.ok(
      counts.every((n) => n >= 10),
      `streams spread over the sessions: ${counts}`,
    )
    assert.ok(s.maxOpen <= LIMIT, `at most ${LIMIT} streams at once on a session: ${s.maxOpen}`)
  }
  assert.equal(total(), attempts(result), 'the servers received every attempt the client counted, and no other')
  assert.equal(opened(result), 3 * servers.length, 'connections opened: 3 per replica')
  return result
}

test('h2c, --connections 3 -c 30: each replica sees 3 sessions, the streams spread over them within its stream limit', async () => {
  const result = await checkSpread(h2c, { mode: 'plain' })
  assert.equal(attempts(result), 150)
})

test('h2c with --workers 2: the threads open 2 + 1 of the 3 sessions per replica', async () => {
  await checkSpread(h2c, { mode: 'plain', workers: 2 })
})

test('h2c hedged: still 3 sessions per replica, every attempt counted, and a hedge goes to the other replica', async () => {
  // A hedge at 1 ms for every request (10 ms answers); the idempotency key names each request's attempts.
  const result = await checkSpread(h2c, { mode: 'hedged', hedge: { delay: 1, budgetPct: 100, idempotencyKey: true } })
  assert.ok(result.phases.hedged!.hedging!.hedgesSent > 0, 'hedges were sent')
  const where = new Map<string, number[]>()
  h2c.forEach((s, i) => {
    for (const keys of s.streams.values()) for (const k of keys) where.set(k, [...(where.get(k) ?? []), i])
  })
  const twice = [...where.values()].filter((r) => r.length === 2)
  assert.ok(twice.length > 0)
  assert.ok(
    twice.every(([a, b]) => a !== b),
    'an original and its hedge on different replicas',
  )
})

test('h2 over TLS, --connections 3: 3 sessions per replica, the streams spread over them', { skip: cert ? false : NO_OPENSSL }, async () => {
  await checkSpread(h2tls, { mode: 'plain', insecure: true })
})

test('gRPC, --connections 3 -c 30: each grpc-js replica serves the calls on 3 connections', async () => {
  grpc.forEach((s) => (s.calls.length = 0))
  const result = await run({ ...base, mode: 'plain', urls: grpc.map((s) => s.url), grpc: { proto: SHOP_PROTO, call: 'shop.Inventory/Get' }, connections: 3 })
  for (const s of grpc) {
    const perPeer = new Map<string, number>()
    for (const c of s.calls) perPeer.set(c.peer, (perPeer.get(c.peer) ?? 0) + 1)
    assert.equal(perPeer.size, 3, `connections that carried calls: ${[...perPeer.values()]}`)
    assert.ok(
      [...perPeer.values()].every((n) => n >= 10),
      `calls spread: ${[...perPeer.values()]}`,
    )
  }
  assert.equal(grpc[0]!.calls.length + grpc[1]!.calls.length, attempts(result))
  assert.equal(attempts(result), 150)
  assert.equal(opened(result), 6)
})

test("the value is recorded: the JSON config, the text header, compare's config entries; absent when not given", async () => {
  const options = { urls: h2c.map((s) => s.url), http2: true, concurrency: 4, requests: 8, warmup: 0, mode: 'plain' as const }
  const given = await run({ ...options, connections: 2 })
  assert.equal(given.config.connections, 2)
  assert.equal(parseResult(renderJson(given), 'r.json').config.connections, 2)
  assert.equal(configEntries(given.config).get('connections'), '2')
  assert.match(renderText(given), / · 2 connections per replica · /)
  const plain = await run(options)
  assert.equal(plain.config.connections, undefined)
  assert.ok(!configEntries(plain.config).has('connections'))
  assert.doesNotMatch(renderText(plain), /per replica · /)
  const diff = compareRuns([
    { name: 'a.json', result: given },
    { name: 'b.json', result: plain },
  ]).configDifferences
  assert.deepEqual(diff.find((d) => d.key === 'connections')?.values, ['2', '(none)'])
})

// 0, -1, abc, more than -c and HTTP/1.1 through the CLI: bad-input.test.ts.
test('refused in one line for a library caller too: a fraction, fewer than the worker threads', async () => {
  const urls = h2c.map((s) => s.url)
  const refusals: Array<[RunOptions, RegExp]> = [
    [{ urls, http2: true, connections: 1.5 }, /^invalid --connections 1.5 \(connections per replica must be a whole number above 0\)$/],
    [
      { urls, http2: true, concurrency: 4, workers: 3, connections: 2 },
      /^--connections 2 with --workers 3: each worker thread has connections of its own \(give --connections 3 or more\)$/,
    ],
  ]
  for (const [options, message] of refusals) {
    await assert.rejects(
      run({ requests: 1, warmup: 0, ...options }),
      (err: Error) => err instanceof UsageError && message.test(err.message),
      JSON.stringify(options),
    )
  }
})
