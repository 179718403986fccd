/**
 * h2c servers that rotate their connections with a graceful GOAWAY (code 0,
 * as nginx does on reload and after keepalive_requests): streams above the
 * GOAWAY's last-stream-id were not processed, so hedgebench sends them again
 * on a new connection. No errors, no ejections, the resent streams counted
 * apart, and attempts equal the streams the servers processed (a resent
 * stream is one attempt, processed once).
 *
 * Each server, on every ROTATE_EVERY-th stream k it receives, sends
 * GOAWAY(last-stream-id k - 2) and leaves k unprocessed, as a server does
 * for a stream that arrived after it decided to go away: so every GOAWAY
 * refuses at least one stream, whatever the timing. The servers count only
 * the streams they process (answer).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Http2Session } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'
import { renderCsvSummary } from '../src/report/csv.js'

const ROTATE_EVERY = 10

interface RotatingServer {
  url: string
  /** Streams answered: the ones the server processed. */
  processed: number
  /** Streams left unprocessed above a GOAWAY's last-stream-id. */
  refused: number
  goaways: number
  close(): Promise<void>
}

async function rotatingServer(): Promise<RotatingServer> {
  const lastId = new WeakMap<Http2Session, number>()
  let seen = 0
  const server = createServer()
  const state = { processed: 0, refused: 0, goaways: 0 }
  server.on('stream', (stream) => {
    const session = stream.session!
    const id = stream.id!
    stream.on('error', () => {}) // the streams it refuses are closed by nghttp2 with REFUSED_STREAM
    const limit = lastId.get(session)
    if (limit !== undefined && id > limit) {
      state.refused++ // after its GOAWAY: not processed (nghttp2 closes it)
      return
    }
    if (++seen % ROTATE_EVERY === 0 && id > 1) {
      lastId.set(session, id - 2)
      state.goaways++
      state.refused++
      session.goaway(0, id - 2)
      return
    }
    stream.resume()
    setTimeout(() => {
      if (stream.destroyed) return
      state.processed++
      stream.respond({ ':status': 200 })
      stream.end('ok')
    }, 3)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  // Sessions it sent GOAWAY on are destroyed too: Node's server.close() would wait for them.
  const sessions = new Set<Http2Session>()
  server.on('session', (s) => sessions.add(s))
  const close = (): Promise<void> =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      for (const s of sessions) s.destroy()
    })
  return Object.assign(state, { url, close }) as RotatingServer
}

test('a graceful GOAWAY mid-run: 0 errors, 0 ejections, the refused streams resent and counted apart, attempts = streams processed', async (t) => {
  const [a, b] = [await rotatingServer(), await rotatingServer()]
  t.after(() => Promise.all([a.close(), b.close()]))
  const result = await run({ urls: [a.url, b.url], http2: true, concurrency: 6, requests: 200, warmup: 0, mode: 'plain', seed: 5 })
  const plain = result.phases.plain!
  assert.equal(plain.requests, 200)
  assert.equal(plain.errors, 0, JSON.stringify(plain.errorKinds))
  assert.deepEqual(plain.ejections ?? [], [])
  assert.ok(a.goaways + b.goaways >= 2, `goaways ${a.goaways} + ${b.goaways}`)
  // Every stream a server left unprocessed was sent again, and each resend is counted.
  assert.ok(plain.streamsResentAfterGoaway! >= a.goaways + b.goaways, `resent ${plain.streamsResentAfterGoaway}, goaways ${a.goaways + b.goaways}`)
  assert.ok(
    plain.streamsResentAfterGoaway! >= a.refused + b.refused,
    `resent ${plain.streamsResentAfterGoaway}, refused at the servers ${a.refused + b.refused} (a stream sent after the GOAWAY may never reach the application)`,
  )
  assert.equal(plain.attempts, a.processed + b.processed, `attempts ${plain.attempts}, processed ${a.processed} + ${b.processed}`)
  assert.equal(plain.attempts, 200, 'no attempt counted twice')
  // A new connection per GOAWAY (the run opens one per replica to begin with).
  assert.equal(plain.connectionsOpened, 2 + a.goaways + b.goaways)
  const n = plain.streamsResentAfterGoaway!
  assert.match(renderText(result), new RegExp(`Resent:\\s+${n} streams refused by a GOAWAY`))
  const csv = renderCsvSummary(result).split('\n')
  const header = csv[0]!.split(',')
  const row = csv.map((l) => l.split(',')).find((cells) => cells[header.indexOf('scope')] === 'phase')!
  assert.equal(row[header.indexOf('streams_resent_after_goaway')], String(n))
})

test('a graceful GOAWAY in a hedged run: no replica is ejected and no hedge is an error', async (t) => {
  const [a, b] = [await rotatingServer(), await rotatingServer()]
  t.after(() => Promise.all([a.close(), b.close()]))
  const result = await run({
    urls: [a.url, b.url],
    http2: true,
    concurrency: 6,
    requests: 200,
    warmup: 0,
    mode: 'hedged',
    seed: 5,
    hedge: { delay: 1, budgetPct: 100 },
  })
  const hedged = result.phases.hedged!
  assert.equal(hedged.errors, 0, JSON.stringify(hedged.errorKinds))
  assert.deepEqual(hedged.ejections ?? [], [])
  assert.ok(hedged.hedging!.hedgesSent > 0)
  assert.ok(hedged.streamsResentAfterGoaway! > 0)
})
