/**
 * A loser's stream is reset (RST_STREAM CANCEL) and only then does the
 * server's GOAWAY come, with a last-stream-id below it: the server never
 * processed that stream, so the attempt counted as sent when it was written
 * is taken back (onRequestRefused), as nginx showed when it rotated its
 * connections (keepalive_requests) under a hedged run: 47 more attempts
 * than its log before, none after. A stream at or below the last id is not
 * taken back. H2Client against a node:http2 server that never answers and
 * sends GOAWAY(last id) when the client resets the higher stream.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { constants, createServer, type Http2Session, type ServerHttp2Stream } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { buildConnector, type Dispatcher } from 'undici'
import { H2Client } from '../src/engine/h2-client.js'
import { HedgeCancelledError } from '../src/hedging/errors.js'
import { until } from './helpers/until.js'
import { PhaseStats } from '../src/stats/phase-stats.js'
import type { GeneratorHealth } from '../src/results/run-result.js'

interface Heard {
  aborts: Array<(err?: Error) => void>
  refused: number
  errors: string[]
}

/** A handler that records what the client tells it; its abort is kept for the test to call. */
function handler(heard: Heard, i: number): Dispatcher.DispatchHandler {
  return {
    onConnect: (abort: (err?: Error) => void) => {
      heard.aborts[i] = abort
    },
    onHeaders: () => true,
    onData: () => true,
    onComplete: () => {},
    onError: (err: Error) => heard.errors.push(err.constructor.name),
    onRequestRefused: () => {
      heard.refused++
    },
  } as unknown as Dispatcher.DispatchHandler
}

/**
 * A node:http2 server that answers nothing (`onStream` sees each stream),
 * and an H2Client on it allowed `maxStreams` at once; both closed after `t`.
 * Dispatches two GET streams and returns what their handlers heard.
 */
async function twoStreams(t: TestContext, maxStreams: number, onStream: (stream: ServerHttp2Stream) => void): Promise<Heard> {
  const server = createServer(maxStreams < 10 ? { settings: { maxConcurrentStreams: maxStreams } } : {})
  const sessions = new Set<Http2Session>()
  server.on('session', (s) => sessions.add(s))
  server.on('stream', (stream) => {
    stream.on('error', () => {})
    onStream(stream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const client = new H2Client(origin, { connect: buildConnector({}), maxStreams })
  t.after(async () => {
    await client.destroy()
    for (const s of sessions) s.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  const heard: Heard = { aborts: [], refused: 0, errors: [] }
  const opts = { origin, path: '/', method: 'GET' } as Dispatcher.DispatchOptions
  client.dispatch(opts, handler(heard, 0)) // stream 1
  client.dispatch(opts, handler(heard, 1)) // stream 3
  return heard
}

test('a GOAWAY after a loser was reset takes back the streams above its last id, and only those', async (t) => {
  const streams: ServerHttp2Stream[] = []
  const heard = await twoStreams(t, 10, (stream) => {
    streams.push(stream)
    const session = stream.session!
    // The client's reset of stream 3 is answered with GOAWAY(last id 1): 1 was processed, 3 was not.
    stream.on('close', () => {
      if (stream.id === 3 && stream.rstCode === constants.NGHTTP2_CANCEL) session.goaway(constants.NGHTTP2_NO_ERROR, 1)
    })
  })
  await until('both streams at the server', () => streams.length === 2)
  // Both lose their races, stream 1 first; the server answers the reset of stream 3 with the GOAWAY.
  heard.aborts[0]!(new HedgeCancelledError('another attempt answered first'))
  heard.aborts[1]!(new HedgeCancelledError('another attempt answered first'))
  // Every stream a GOAWAY refuses is told in one go, as it is read.
  await until('the GOAWAY', () => heard.refused > 0)
  assert.equal(heard.refused, 1, 'stream 3 (above the last id) taken back; stream 1 (at it) not')
  assert.deepEqual(heard.errors, ['HedgeCancelledError', 'HedgeCancelledError'])
})

test('a phase takes a refused attempt back: not sent, not a hedge, not a cancel, but unsent; resent, it counts once', () => {
  const health: GeneratorHealth = { eventLoopDelayMs: { p50: 0, p99: 0, max: 0 }, cpuPct: 1, cores: 1, saturated: false, warnings: [], cpuJudged: true }
  const [a, b] = ['http://127.0.0.1:1', 'http://127.0.0.1:2']
  const stats = new PhaseStats({ name: 'hedged', slowMs: 30, replicas: [a, b], fanout: 1, openLoop: false, runStartedAt: performance.now() })
  stats.hedging = { delayMs: 5, delaySource: 'fixed 5 ms', adaptive: false, maxAttempts: 2, budgetPct: 100, parallel: false, tied: false, cancelMode: 'abort' }
  // A loser refused after its reset (the GOAWAY came later): an original at A whose hedge at B won.
  stats.attemptSent(0, a)
  stats.attemptSent(1, b)
  stats.attemptCancelled(0, a)
  stats.attemptRefused(0, a, true)
  stats.attemptUnsent(0)
  // A hedge refused while still racing, then sent again on a new connection.
  stats.attemptSent(1, a)
  stats.attemptRefused(1, a, false)
  stats.attemptSent(1, a)
  const phase = stats.finish(100, health)
  assert.equal(phase.attempts, 2)
  assert.deepEqual(
    phase.replicas.map((r) => [r.attempts, r.cancelled]),
    [
      [1, 0],
      [1, 0],
    ],
  )
  assert.equal(phase.hedging!.hedgesSent, 2)
  assert.equal(phase.hedging!.cancelled, 0)
  assert.equal(phase.hedging!.unsentOriginals, 1)
})

test('a stream waiting for a slot takes the one a reset freed, with no read from the server to wake it', async (t) => {
  // One stream at a time; the server answers nothing: only the client's own reset frees the slot (--connections
  // puts attempts on a full session this way; before, the waiting one waited for a read that never came).
  const received: number[] = []
  const heard = await twoStreams(t, 1, (stream) => received.push(stream.id!))
  await until('the first stream at the server', () => received.length === 1)
  assert.equal(heard.aborts[1], undefined, 'the second waits for a slot, not yet on the wire')
  heard.aborts[0]!(new HedgeCancelledError('another attempt answered first'))
  await until('the second stream at the server', () => received.length === 2, 5000)
  assert.deepEqual(received, [1, 3])
})
