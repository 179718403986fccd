/**
 * An h2c server that takes only 2 streams at once per session
 * (SETTINGS_MAX_CONCURRENT_STREAMS): hedgebench never puts more on one
 * session, opening another instead, so every attempt it counts as sent is a
 * stream the server received. Before, Node held the rest inside the client:
 * 597 attempts counted against 301 streams received.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Http2Session } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { run } from '../src/run/run.js'

const LIMIT = 2

interface LimitedServer {
  url: string
  received: number
  /** Most streams open at once on any one session. */
  maxPerSession: number
  sessions: number
  close(): Promise<void>
}

async function limitedServer(): Promise<LimitedServer> {
  const open = new Map<Http2Session, number>()
  const state = { received: 0, maxPerSession: 0, sessions: 0 }
  const server = createServer({ settings: { maxConcurrentStreams: LIMIT } }, (req, res) => {
    const session = req.stream.session!
    if (!open.has(session)) state.sessions++
    const now = (open.get(session) ?? 0) + 1
    open.set(session, now)
    state.received++
    state.maxPerSession = Math.max(state.maxPerSession, now)
    req.stream.once('close', () => open.set(session, (open.get(session) ?? 1) - 1))
    req.resume()
    // Slow enough that a hedge (after 5 ms) finds the session full.
    setTimeout(() => res.end('ok'), 20)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  return Object.assign(state, { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }) as LimitedServer
}

test('h2c with SETTINGS_MAX_CONCURRENT_STREAMS 2: no session carries more, and attempts equal the streams the servers received', async (t) => {
  const [a, b] = [await limitedServer(), await limitedServer()]
  t.after(() => Promise.all([a.close(), b.close()]))
  const result = await run({
    urls: [a.url, b.url],
    http2: true,
    concurrency: 6,
    requests: 60,
    warmup: 0,
    mode: 'hedged',
    hedge: { delay: 5, budgetPct: 100 },
    seed: 3,
  })
  const hedged = result.phases.hedged!
  assert.ok(hedged.hedging!.hedgesSent > 0, 'hedges were sent')
  // Streams the client reset may arrive after the run: wait (bounded) for the last ones.
  for (let i = 0; i < 100 && a.received + b.received < hedged.attempts; i++) await new Promise((r) => setTimeout(r, 10))
  assert.equal(a.received + b.received, hedged.attempts, `servers ${a.received} + ${b.received}, client attempts ${hedged.attempts}`)
  assert.ok(a.maxPerSession <= LIMIT && b.maxPerSession <= LIMIT, `at most ${LIMIT} streams per session: ${a.maxPerSession} / ${b.maxPerSession}`)
  // -c 6 plus hedges over two replicas at 2 streams a session: more than one session each.
  assert.ok(a.sessions > 1 && b.sessions > 1, `sessions ${a.sessions} / ${b.sessions}`)
})
