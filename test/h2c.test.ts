/**
 * HTTP/2 cleartext (h2c) and the cost of a cancel, against real node:http2
 * and node:http servers on 127.0.0.1 (started here) and the simulated
 * replicas: over h2c the attempts share one session per replica and a
 * cancelled loser is a stream reset (no connection per cancel); over
 * HTTP/1.1 every cancel closes its connection and the next attempt opens
 * one. Client attempts equal the streams the servers received, exactly.
 *
 * The scenario (no randomness: each server's own request counter decides):
 * replica A stalls every 5th request 300 ms, replica B never stalls and
 * answers in 2-6 ms; originals alternate A/B, hedges go to the other
 * replica after a fixed 40 ms, so every stall at A is hedged to B and
 * answered ~260 ms before A would: A's stalled stream must be reset there.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer as createH2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'
import { renderCsvSummary } from '../src/report/csv.js'
import { fetchServerStats, startTarget } from '../src/sim/target.js'
import { watchFreezes, type FreezeWatch } from './helpers/freeze-watch.js'
import type { PhaseResult, RunResult } from '../src/results/run-result.js'

const STALL_MS = 300
const STALL_EVERY = 5
const REQUESTS = 200
const CONCURRENCY = 8

interface Counts {
  /** TCP connections (HTTP/1.1) or h2 sessions that carried a request (the preflight's bare TCP connect carries none). */
  connections: number
  /** TCP connections accepted, with the preflight's (one per replica, see engine/preflight.ts). */
  accepted: number
  /** Requests (h2: streams) whose headers arrived. */
  received: number
  completed: number
  /** Closed by the client before the answer (h2: RST_STREAM). */
  reset: number
  stalls: number
  /** Stalled requests closed by the client while their connection stayed up (h2: a RST_STREAM of their own). */
  stallsReset: number
  /** Stalled requests still open when their connection ended (the run's end): not a cancel. */
  stallsClosedWithConnection: number
  /** Stalled requests that were answered instead of reset: [arrival, answer], performance.now() ms. */
  stallsAnswered: Array<{ from: number; to: number }>
  /** Most requests in flight at once. */
  maxInFlight: number
}

interface Replica {
  url: string
  counts: Counts
  close(): Promise<void>
}

type Req = IncomingMessage | Http2ServerRequest
type Res = ServerResponse | Http2ServerResponse

/** One replica: stalls every STALL_EVERY-th request when `stalls`, else answers after `fastMs(n)`. */
function handler(counts: Counts, stalls: boolean, fastMs: (n: number) => number): (req: Req, res: Res) => void {
  let inFlight = 0
  const seen = new WeakSet<object>()
  // h2 sessions whose socket ended. A stream's close is emitted a tick after
  // its cause, so one reset by a frame read before the end is heard before
  // it, and one closed by the end after. (On HTTP/1.1 the close is the cancel.)
  const ended = new WeakSet<object>()
  return (req, res) => {
    const n = counts.received++
    const connection = 'stream' in req ? req.stream.session! : req.socket
    if (!seen.has(connection)) {
      seen.add(connection)
      counts.connections++
      // The session's socket (a request's own socket proxies its stream's events).
      if ('stream' in req) for (const event of ['end', 'close']) req.stream.session!.socket.on(event, () => ended.add(connection))
    }
    counts.maxInFlight = Math.max(counts.maxInFlight, ++inFlight)
    const stalled = stalls && n % STALL_EVERY === 0
    if (stalled) counts.stalls++
    const arrivedAt = performance.now()
    req.resume()
    const timer = setTimeout(
      () => {
        counts.completed++
        if (stalled) counts.stallsAnswered.push({ from: arrivedAt, to: performance.now() })
        res.writeHead(200, { 'content-type': 'text/plain' })
        res.end('ok\n')
      },
      stalled ? STALL_MS : fastMs(n),
    )
    res.on('close', () => {
      inFlight--
      if (res.writableEnded) return
      clearTimeout(timer)
      counts.reset++
      if (stalled && ended.has(connection)) counts.stallsClosedWithConnection++
      else if (stalled) counts.stallsReset++
    })
  }
}

const zero = (): Counts => ({
  connections: 0,
  accepted: 0,
  received: 0,
  completed: 0,
  reset: 0,
  stalls: 0,
  stallsReset: 0,
  stallsClosedWithConnection: 0,
  stallsAnswered: [],
  maxInFlight: 0,
})

async function startReplica(t: TestContext, http2: boolean, stalls: boolean, fastMs: (n: number) => number = (n) => 2 + ((n * 3) % 5)): Promise<Replica> {
  const counts = zero()
  const onRequest = handler(counts, stalls, fastMs)
  const server = http2 ? createH2Server({}, onRequest) : createHttpServer({ keepAlive: true }, onRequest)
  server.on('connection', () => counts.accepted++)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const replica: Replica = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    counts,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r())
        if ('closeAllConnections' in server) server.closeAllConnections()
      }),
  }
  t.after(() => replica.close())
  return replica
}

/** The hedged phase of the scenario against two replicas of one protocol. */
async function hedgedRun(t: TestContext, http2: boolean): Promise<{ result: RunResult; hedged: PhaseResult; a: Counts; b: Counts }> {
  const a = await startReplica(t, http2, true)
  const b = await startReplica(t, http2, false)
  const freezes = watchFreezes()
  t.after(() => freezes.stop())
  const result = await run({
    urls: [a.url, b.url],
    http2,
    concurrency: CONCURRENCY,
    requests: REQUESTS,
    warmup: 0,
    mode: 'hedged',
    seed: 1,
    hedge: { delay: 40, budgetPct: null as unknown as number },
  })
  const hedged = result.phases.hedged!
  await settled(() => a.counts.received + b.counts.received >= hedged.attempts)
  assertStallsReset(t, a.counts, freezes)
  return { result, hedged, a: a.counts, b: b.counts }
}

/**
 * Losers reset at the server: every stalled request at A was reset before its
 * answer, its hedge at B having answered ~250 ms earlier. The servers share
 * this process with the client, so while the process is frozen (a loaded
 * 2-core VM stops it for 100 ms+) A's timer can fire in the same turn as
 * the client reads B's answer: a stall answered during a freeze is the
 * machine's, not the engine's; any other is a failure.
 */
function assertStallsReset(t: TestContext, a: Counts, freezes: FreezeWatch): void {
  assert.ok(a.stalls >= REQUESTS / 2 / STALL_EVERY, `stalls at A: ${a.stalls}`)
  t.diagnostic(
    `stalls at A: ${a.stalls}, reset ${a.stallsReset}, closed with their connection ${a.stallsClosedWithConnection}, answered ${a.stallsAnswered.length}; freezes ${JSON.stringify(freezes.windows.map((w) => Math.round(w.to - w.from)))}`,
  )
  assert.equal(a.stallsReset + a.stallsClosedWithConnection + a.stallsAnswered.length, a.stalls)
  // A loser's RST_STREAM is written when its race is decided, before the
  // run's end closes the session on the same socket, so the server reads it
  // first, however late: a stall still open at the end was never cancelled
  // on the wire (a cancel counted but not sent), whatever the machine.
  assert.equal(a.stallsClosedWithConnection, 0, 'stalls left open until their session ended: their losers were never reset')
  // An answered stall is excused by a freeze of ~250 ms at the wrong moment
  // (the hedge's answer is read ~46 ms into a 300 ms stall); the loaded VM
  // once excused 4 of 22. Past half of them the machine, not the engine,
  // decided, and the test fails rather than excuse more.
  assert.ok(a.stallsReset * 2 > a.stalls, `only ${a.stallsReset} of ${a.stalls} stalls at A were reset before their answer`)
  for (const s of a.stallsAnswered)
    assert.ok(freezes.overlaps(s.from, s.to), `a stall answered at ${(s.to - s.from).toFixed(0)} ms with the client not frozen: its loser was not reset`)
}

/** Waits (bounded) for the servers to see what the client sent: a loser's reset lands a moment after the client settled it. */
async function settled(done: () => boolean): Promise<void> {
  const deadline = performance.now() + 2000
  while (!done() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10))
  await new Promise((r) => setTimeout(r, 50))
}

test('h2c: a hedged run shares one session per replica; each cancel resets a stream and closes no connection', async (t) => {
  const { result, hedged, a, b } = await hedgedRun(t, true)
  const h = hedged.hedging!
  // Every 5th request at A stalls: at least REQUESTS/2/5 = 20 stalls, each hedged and cancelled.
  assert.ok(a.stalls >= REQUESTS / 2 / STALL_EVERY, `stalls at A: ${a.stalls}`)
  assert.ok(h.cancelled >= a.stallsReset, `cancelled ${h.cancelled}, stalls reset at A ${a.stallsReset}`)
  // What really reached the sockets: one h2 session per replica, every attempt a stream on it.
  assert.equal(a.connections, 1, 'one session at A')
  assert.equal(b.connections, 1, 'one session at B')
  assert.equal(a.accepted + b.accepted, 2 + 2, 'and no other connection but the preflight probes')
  assert.equal(hedged.connectionsOpened, 2)
  assert.equal(hedged.connectionsClosedByCancel, 0)
  assert.equal(hedged.streamsResetByCancel, h.cancelled, 'every cancel on the wire is a stream reset')
  // Client attempts = streams received, exactly; the losers were reset at the server.
  assert.equal(a.received + b.received, hedged.attempts)
  assert.ok(a.reset + b.reset <= h.cancelled, `server resets ${a.reset + b.reset} <= client cancels ${h.cancelled}`)
  assert.equal(a.completed + a.reset + b.completed + b.reset, hedged.attempts, 'every stream answered or reset')
  // The report says so.
  const text = renderText(result)
  assert.match(text, new RegExp(`Cancels:\\s+${h.cancelled} streams reset, 0 connections closed \\(2 opened in the phase\\)`))
  assert.match(text, /HTTP\/2 \(h2c\)/)
  const csv = renderCsvSummary(result).split('\n')
  const header = csv[0]!.split(',')
  // Rows start with the run's identity columns; find the hedged phase's row by its scope and phase cells.
  const row = csv.map((l) => l.split(',')).find((cells) => cells[header.indexOf('scope')] === 'phase' && cells[header.indexOf('phase')] === 'hedged')!
  assert.equal(row[header.indexOf('streams_reset_by_cancel')], String(h.cancelled))
  assert.equal(row[header.indexOf('connections_closed_by_cancel')], '0')
})

test('HTTP/1.1: the same hedged run closes a connection per cancel, and the next attempt opens one', async (t) => {
  const { result, hedged, a, b } = await hedgedRun(t, false)
  const h = hedged.hedging!
  assert.ok(h.cancelled >= a.stallsReset, `cancelled ${h.cancelled}, stalls reset at A ${a.stallsReset}`)
  assert.equal(hedged.streamsResetByCancel, 0)
  // A cancel on the wire closes its connection; so does one stopped just before its headers (undici destroys the socket).
  const closed = hedged.connectionsClosedByCancel!
  assert.ok(closed >= h.cancelled && closed <= h.cancelled + h.unsent, `closed ${closed}, cancelled ${h.cancelled}, unsent ${h.unsent}`)
  // Each is reopened. Every connection the client opened was accepted by a server (less the preflight's
  // one per replica). The servers once accepted one more than the client counted (147 vs 146, in a
  // full-suite run on the loaded 2-core VM; cause not pinned down: an accept whose connect never completed
  // on the client would do it), so the bound is one-sided, never the other way. Every connection that
  // carried a request was opened by the client in this phase (some carried none: a hedge cancelled as it
  // connected).
  assert.ok(hedged.connectionsOpened <= a.accepted + b.accepted - 2, `opened ${hedged.connectionsOpened}, accepted ${a.accepted + b.accepted - 2}`)
  assert.ok(a.connections + b.connections <= hedged.connectionsOpened)
  assert.ok(hedged.connectionsOpened >= closed, `opened ${hedged.connectionsOpened}, closed by a cancel ${closed}`)
  assert.equal(a.received + b.received, hedged.attempts)
  const text = renderText(result)
  assert.match(text, new RegExp(`Cancels:\\s+0 streams reset, ${closed} connections closed \\(${hedged.connectionsOpened} opened in the phase\\)`))
  assert.doesNotMatch(text, /HTTP\/2/)
})

test('h2c: a POST that may be repeated (idempotency keys) runs concurrently on the session, not one at a time', async (t) => {
  // undici serialises requests it does not consider idempotent on an h2 session;
  // with 6 in flight against a 100 ms server the server must see 6 streams at once.
  const r = await startReplica(t, true, false, () => 100)
  const result = await run({
    urls: [r.url],
    http2: true,
    method: 'POST',
    body: Buffer.from('{}'),
    concurrency: 6,
    requests: 12,
    warmup: 0,
    mode: 'hedged',
    seed: 1,
    hedge: { delay: 5000, idempotencyKey: true },
  })
  assert.equal(result.phases.hedged!.ok, 12)
  assert.equal(r.counts.maxInFlight, 6, `streams in flight at once: ${r.counts.maxInFlight}`)
  assert.equal(r.counts.connections, 1)
})

test('simulated replicas serve h2c on their port: streams received = client attempts, losers reset, one session each', async (t) => {
  const target = await startTarget({
    profile: {
      name: 'h2c-test',
      description: 'A stalls every so often',
      replicas: 2,
      model: { base: { type: 'uniform', min: 2, max: 6 }, stalls: [{ type: 'independent', probability: 0.1, ms: STALL_MS }] },
      file: null,
    },
    seed: 7,
  })
  t.after(() => target.close())
  const result = await run({
    urls: target.urls,
    serverStatsUrl: target.statsUrl,
    http2: true,
    concurrency: 4,
    requests: 150,
    warmup: 0,
    mode: 'hedged',
    seed: 1,
    hedge: { delay: 40, budgetPct: null as unknown as number },
  })
  const hedged = result.phases.hedged!
  const stats = await fetchServerStats(target.statsUrl)
  const s = stats.totals
  assert.ok(hedged.hedging!.cancelled > 0, 'some losers were cancelled')
  assert.equal(hedged.server?.match, true, 'client attempts = server requests')
  assert.equal(s.http2Streams, hedged.attempts, 'every attempt was an h2 stream')
  assert.equal(s.received, hedged.attempts)
  assert.equal(s.http2StreamsReset, s.cancelled, 'every cancel at the server was a stream reset')
  assert.ok(
    s.http2StreamsReset > 0 && s.http2StreamsReset <= hedged.streamsResetByCancel!,
    `server resets ${s.http2StreamsReset}, client ${hedged.streamsResetByCancel}`,
  )
  assert.equal(s.connections, 2, 'one session per replica carried every stream')
  assert.equal(hedged.connectionsClosedByCancel, 0)
})
