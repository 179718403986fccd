/**
 * A cancelled h2c attempt is RST_STREAM with CANCEL (0x8), as RFC 9113
 * defines "stream no longer needed" (undici's client sent NO_ERROR), and a
 * reset is counted only for a stream still open: the client's count of
 * streams reset equals the streams the server saw reset, and the
 * client's attempts equal the streams the server received. A real
 * node:http2 server, which exposes each stream's rstCode.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { constants, createServer } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { run } from '../src/run/run.js'

/** A server that answers every stream at once, or never; records the code each stream was closed with. */
async function server(answers: boolean) {
  const state = { received: 0, rstCodes: [] as number[] }
  const h2 = createServer()
  h2.on('stream', (stream) => {
    state.received++
    stream.on('error', () => {})
    // A stream the client reset closes with its code; one that ended normally with 0.
    stream.on('close', () => {
      if (stream.rstCode !== constants.NGHTTP2_NO_ERROR) state.rstCodes.push(stream.rstCode)
    })
    stream.resume()
    if (!answers) return
    stream.respond({ ':status': 200 })
    stream.end('ok')
  })
  await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(h2.address() as AddressInfo).port}/`
  return { state, url, close: () => new Promise<void>((resolve) => h2.close(() => resolve())) }
}

test('a cancelled loser is RST_STREAM CANCEL at the server, every reset the client counts is one the server received', async (t) => {
  // A never answers, B at once: every loser is a stream at A, reset while open (B's copy wins, whatever the machine's
  // pauses: a B original answered while the client was frozen past the hedge delay still beats its hedge to A).
  const [a, b] = [await server(false), await server(true)]
  t.after(() => Promise.all([a.close(), b.close()]))
  const result = await run({
    urls: [a.url, b.url],
    http2: true,
    concurrency: 4,
    requests: 80,
    warmup: 0,
    mode: 'hedged',
    seed: 2,
    hedge: { delay: 30, budgetPct: 100 },
  })
  const hedged = result.phases.hedged!
  const h = hedged.hedging!
  assert.ok(h.cancelled > 0, 'losers were cancelled')
  // The resets reach the servers a moment after the run ends: wait (bounded) for them.
  const resets = (): number => a.state.rstCodes.length + b.state.rstCodes.length
  for (let i = 0; i < 200 && resets() < hedged.streamsResetByCancel!; i++) await new Promise((r) => setTimeout(r, 10))
  const codes = [...a.state.rstCodes, ...b.state.rstCodes]
  assert.ok(codes.length > 0)
  assert.deepEqual([...new Set(codes)], [constants.NGHTTP2_CANCEL], `RST_STREAM codes at the servers: ${JSON.stringify(codes)}`)
  assert.equal(b.state.rstCodes.length, 0, 'no stream of the replica that answers was reset')
  assert.equal(hedged.errors, 0)
  assert.equal(hedged.streamsResetByCancel, codes.length, 'a reset counted for each RST_STREAM the servers received')
  assert.equal(hedged.attempts, a.state.received + b.state.received, 'attempts = streams received')
  assert.equal(hedged.connectionsOpened, 2, 'the cancels closed no connection')
})

test('an attempt stopped by its deadline (-t) resets its stream with CANCEL too, but is not counted as a cancel', async (t) => {
  const a = await server(false)
  t.after(() => a.close())
  const result = await run({ urls: [a.url], http2: true, concurrency: 2, requests: 4, warmup: 0, mode: 'plain', timeoutMs: 100 })
  const plain = result.phases.plain!
  assert.equal(plain.errors, 4)
  assert.equal(plain.streamsResetByCancel, 0, 'no cancel in a plain phase')
  for (let i = 0; i < 200 && a.state.rstCodes.length < 4; i++) await new Promise((r) => setTimeout(r, 10))
  assert.deepEqual(a.state.rstCodes, [8, 8, 8, 8])
})
