/**
 * The engine's connection pool (a free list of undici Clients per origin)
 * and the shared deadline queue behind -t: a concurrent attempt never
 * queues behind another on a pipelining-1 connection, sequential attempts
 * reuse one connection, and one timer expires every due attempt on time.
 */
import { watchFreezes } from './helpers/freeze-watch.js'
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { buildConnector, errors, type Dispatcher } from 'undici'
import { ConnectionPool } from '../src/engine/connection-pool.js'
import { hedged } from '../src/engine/hedge-interceptor.js'
import type { HedgeObserver } from '../src/hedging/observer.js'
import { DeadlineQueue } from '../src/engine/request-timeout.js'

interface Done {
  status: number | null
  error: Error | null
  at: number
}

/** A minimal legacy-protocol handler, as the hedging attempts are. */
function collect(onDone: (d: Done) => void): Dispatcher.DispatchHandler {
  let status: number | null = null
  return {
    onConnect() {},
    onHeaders(s: number) {
      status = s
      return true
    },
    onData() {
      return true
    },
    onComplete() {
      onDone({ status, error: null, at: performance.now() })
    },
    onError(error: Error) {
      onDone({ status: null, error, at: performance.now() })
    },
  } as unknown as Dispatcher.DispatchHandler
}

/** A hedge observer that hears only the events given; the rest are ignored. */
function observing(events: Partial<HedgeObserver>): HedgeObserver {
  const ignore = (): void => {}
  const all: HedgeObserver = {
    attemptLaunched: ignore,
    attemptSettled: ignore,
    attemptSent: ignore,
    attemptUnsent: ignore,
    attemptCancelled: ignore,
    attemptDone: ignore,
    lateDiscarded: ignore,
    budgetDenied: ignore,
    deadlineSuppressed: ignore,
    nonFatalTriggered: ignore,
    saturationSuppressed: ignore,
    loserFinished: ignore,
    timerLateness: ignore,
  }
  return { ...all, ...events }
}

function request(pool: ConnectionPool, origin: string): Promise<Done> {
  return new Promise((resolve) => pool.dispatch({ origin, path: '/', method: 'GET' }, collect(resolve)))
}

async function server(delayMs: number): Promise<{
  origin: string
  sockets: Set<unknown>
  connections: { accepted: number; open: number }
  requests: { inFlight: number; max: number }
  close(): void
}> {
  const sockets = new Set<unknown>()
  const connections = { accepted: 0, open: 0 }
  const requests = { inFlight: 0, max: 0 }
  const srv = createServer((req: IncomingMessage, res: ServerResponse) => {
    sockets.add(req.socket)
    requests.max = Math.max(requests.max, ++requests.inFlight)
    req.resume()
    setTimeout(() => {
      requests.inFlight--
      res.end('ok')
    }, delayMs)
  })
  srv.on('connection', (socket) => {
    connections.accepted++
    connections.open++
    socket.on('close', () => connections.open--)
  })
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  return { origin: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, sockets, connections, requests, close: () => srv.close() }
}

test('connection pool: concurrent attempts get connections of their own; sequential ones reuse one', async (t) => {
  const s = await server(150)
  const pool = new ConnectionPool({ connectTimeoutMs: 2000, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 10_000, allowH2: false })
  let connects = 0
  pool.on('connect', () => connects++)
  t.after(async () => {
    await pool.close()
    s.close()
  })
  // Two at once (an original and its hedge): the server has both at once (the second did not queue behind the
  // first, which takes 150 ms), on two sockets. Counted at the server, not timed: a loaded machine stretches time.
  const [a, b] = await Promise.all([request(pool, s.origin), request(pool, s.origin)])
  assert.equal(a.status, 200)
  assert.equal(b.status, 200)
  assert.equal(s.requests.max, 2, 'both requests were at the server at once')
  assert.equal(s.sockets.size, 2)
  // One after another: no new connection.
  for (let i = 0; i < 5; i++) assert.equal((await request(pool, s.origin)).status, 200)
  assert.equal(s.sockets.size, 2)
  assert.equal(connects, 2)
  assert.equal(pool.size, 2)
})

test('connection pool: a refused connection fails the attempt; the next attempt connects again', async () => {
  const s = await server(0)
  const origin = s.origin
  s.close()
  await new Promise((r) => setTimeout(r, 20))
  const pool = new ConnectionPool({ connectTimeoutMs: 2000, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 10_000, allowH2: false })
  // Dispatched from inside the failure callback, as a closed-loop slot does.
  const errors: string[] = []
  await new Promise<void>((resolve) => {
    const next = (d: Done): void => {
      errors.push((d.error as { code?: string } | null)?.code ?? 'none')
      if (errors.length === 3) resolve()
      else pool.dispatch({ origin, path: '/', method: 'GET' }, collect(next))
    }
    pool.dispatch({ origin, path: '/', method: 'GET' }, collect(next))
  })
  assert.deepEqual(errors, ['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED'])
  await pool.destroy()
})

test('-t running out while an attempt waits for its connection: it fails with a connect timeout at -t and is never counted as sent', async (t) => {
  const s = await server(0)
  // Connections open 150 ms late; the attempt's deadline is 50 ms.
  const connect = buildConnector({ timeout: 2000 })
  let connectingAt = 0
  const slow: buildConnector.connector = (opts, cb) =>
    void setTimeout(() => {
      connectingAt = performance.now()
      connect(opts, cb)
    }, 150)
  const pool = new ConnectionPool({
    connectTimeoutMs: 2000,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 10_000,
    allowH2: false,
    attemptTimeoutMs: 50,
    connector: slow,
  })
  t.after(async () => {
    await pool.destroy()
    s.close()
  })
  const counts = { sent: 0, unsent: 0, done: 0, settled: 0 }
  const observer = observing({
    attemptSettled: () => void counts.settled++,
    attemptSent: () => void counts.sent++,
    attemptUnsent: () => void counts.unsent++,
    attemptDone: () => void counts.done++,
  })
  const dispatch = hedged(pool.dispatch.bind(pool), { delay: 0, maxAttempts: 1, observer })
  const dispatchedAt = performance.now()
  let erredAt = 0
  const error = await new Promise<Error | null>((resolve) => {
    dispatch({ origin: s.origin, path: '/', method: 'GET' }, {
      onResponseEnd: () => resolve(null),
      onResponseError: (_c: unknown, err: Error) => {
        erredAt = performance.now()
        resolve(err)
      },
    } as unknown as Dispatcher.DispatchHandler)
  })
  assert.ok(error instanceof errors.ConnectTimeoutError, `a connect timeout (nothing was written): ${String(error)}`)
  // At -t, not when the connection comes: the 50 ms deadline's timer runs before the connector's 150 ms one,
  // however late both are on a busy machine (timers fire in the order they are due).
  assert.equal(connectingAt, 0, `the error came ${Math.round(erredAt - dispatchedAt)} ms after the dispatch, after the connector started connecting`)
  assert.ok(erredAt - dispatchedAt >= 49, `the error came ${Math.round(erredAt - dispatchedAt)} ms after the dispatch, before -t`)
  assert.deepEqual(counts, { sent: 0, unsent: 0, done: 1, settled: 1 })
  // Nothing may reach the server even once the slow connection is up. Wait
  // (bounded) until the server accepted it, then close the pool and wait
  // until the server saw it close: a server socket closes only after the
  // bytes sent before the FIN were parsed, so a request written on it would
  // have been counted by then. No sleep to guess with.
  const until = Date.now() + 2000
  while (s.connections.accepted === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5))
  assert.equal(s.connections.accepted, 1, 'the slow connector connected')
  await pool.destroy()
  while (s.connections.open > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5))
  assert.equal(s.connections.open, 0)
  assert.equal(s.sockets.size, 0, 'no request reached the server')
})

test('an original still waiting for its connection when the hedge wins is stopped before the wire, and reported as an original (index 0)', async (t) => {
  const slow = await server(0)
  const fast = await server(0)
  // Connections to the first replica open 300 ms late; the hedge goes to the second after 20 ms and wins.
  const connect = buildConnector({ timeout: 2000 })
  const slowPort = Number(new URL(slow.origin).port)
  const connector: buildConnector.connector = (opts, cb) => (Number(opts.port) === slowPort ? void setTimeout(() => connect(opts, cb), 300) : connect(opts, cb))
  const pool = new ConnectionPool({ connectTimeoutMs: 2000, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 10_000, allowH2: false, connector })
  t.after(async () => {
    await pool.destroy()
    slow.close()
    fast.close()
  })
  const events: string[] = []
  const note = (what: string) => (index: number, origin: string) => void events.push(`${what} ${index} ${origin === slow.origin ? 'slow' : 'fast'}`)
  const observer = observing({ attemptSettled: note('settled'), attemptSent: note('sent'), attemptUnsent: note('unsent'), attemptCancelled: note('cancelled') })
  const dispatch = hedged(pool.dispatch.bind(pool), { delay: 20, maxAttempts: 2, budgetPct: null, replicas: [slow.origin, fast.origin], observer })
  const status = await new Promise<number | Error>((resolve) => {
    let code = 0
    dispatch({ origin: slow.origin, path: '/', method: 'GET' }, {
      onResponseStart: (_c: unknown, s: number) => void (code = s),
      onResponseEnd: () => resolve(code),
      onResponseError: (_c: unknown, err: Error) => resolve(err),
    } as unknown as Dispatcher.DispatchHandler)
  })
  assert.equal(status, 200)
  // The original is counted once undici hands it its connection (300 ms) and it stops there (bounded wait).
  const until = Date.now() + 3000
  while (!events.includes('settled 0 slow') && Date.now() < until) await new Promise((r) => setTimeout(r, 10))
  assert.deepEqual(events, ['sent 1 fast', 'settled 1 fast', 'unsent 0 slow', 'settled 0 slow'])
  assert.equal(slow.sockets.size, 0, 'no request reached the slow replica')
  assert.equal(fast.sockets.size, 1)
})

test('deadline queue: one timer expires each entry at its deadline, skips removed ones, and stops when empty', async () => {
  const q = new DeadlineQueue(200)
  // A loaded machine can stop this process for longer than the 10 ms allowed: such a stop excuses an entry that was late across it.
  const freezes = watchFreezes(8)
  const fired: Array<{ id: number; late: number; at: number }> = []
  class Entry {
    prev = null
    next = null
    at = 0
    queue = null
    constructor(readonly id: number) {}
    expire(): void {
      fired.push({ id: this.id, late: performance.now() - this.at, at: this.at })
    }
  }
  const entries: Entry[] = []
  for (let i = 0; i < 6; i++) {
    const e = new Entry(i)
    q.add(e as never)
    entries.push(e)
    await new Promise((r) => setTimeout(r, 2))
  }
  q.remove(entries[0] as never) // the head: the timer then re-arms for the next one when it fires
  q.remove(entries[3] as never)
  assert.equal(q.pending, 4)
  await new Promise((r) => setTimeout(r, 300))
  assert.deepEqual(
    fired.map((f) => f.id),
    [1, 2, 4, 5],
  )
  freezes.stop()
  for (const f of fired)
    assert.ok(
      f.late >= 0 && (f.late < 10 || freezes.overlaps(f.at, f.at + f.late, 0)),
      `entry ${f.id} expired ${f.late.toFixed(2)} ms after its deadline (frozen: ${JSON.stringify(freezes.windows)})`,
    )
  assert.equal(q.pending, 0)
  assert.equal(q.timerAt, null)
  // Removing the last entry clears the timer (nothing keeps the process alive).
  const e = new Entry(9)
  q.add(e as never)
  assert.notEqual(q.timerAt, null)
  q.remove(e as never)
  assert.equal(q.timerAt, null)
})
