/**
 * hedgebench's HTTP/2 client (engine/h2-client.ts) frame by frame against a
 * scripted peer (helpers/h2-peer.ts): its streams. The server's
 * SETTINGS_MAX_CONCURRENT_STREAMS honoured exactly (a request beyond it is
 * neither written nor told onConnect until a stream ends, and then at once);
 * REFUSED_STREAM taken back (onRequestRefused) and sent again with a new id;
 * a GOAWAY's last-stream-id: only the streams above it sent again, on a new
 * connection, those at or below it finishing on the old one, which then
 * closes; a cancelled hedge's RST_STREAM CANCEL and its 'stream-reset', and
 * whatever the server still sends on that stream dropped.
 */
import assert from 'node:assert/strict'
import { errors } from 'undici'
import { codeName, Flag, FrameType, H2Code, Setting } from '../src/engine/h2-frames.js'
import { HedgeCancelledError } from '../src/hedging/errors.js'
import { answer, countEvents, data, Exchange, goaway, headers, opened, type PeerConnection, peerTest, rst, STATUS_200 } from './helpers/h2-peer.js'

/** The stream ids of the client's HEADERS on a connection, in order. */
const headerIds = (c: PeerConnection): number[] => c.ofType(FrameType.HEADERS).map((f) => f.streamId)

/** Its RST_STREAMs as 'id CODE'. */
const resets = (c: PeerConnection): string[] => c.ofType(FrameType.RST_STREAM).map((f) => `${f.streamId} ${codeName(f.payload.readUInt32BE(0))}`)

const path = (f: { fields: Array<[string, string]> | null }): string | undefined => f.fields?.find(([n]) => n === ':path')?.[1]

// ---- SETTINGS_MAX_CONCURRENT_STREAMS ----

peerTest(
  'MAX_CONCURRENT_STREAMS 2: a third request is neither written nor connected until a stream ends, then at once; a reset frees a slot too',
  async (t, transport) => {
    const { client, c, ex: a } = await opened(t, transport, [[Setting.MAX_CONCURRENT_STREAMS, 2]])
    const b = new Exchange(client, { path: '/b' })
    const third = new Exchange(client, { path: '/c' })
    await c.request(3)
    await c.sync()
    assert.deepEqual(headerIds(c), [1, 3], 'two streams at most')
    assert.deepEqual(third.events, [], 'the third is not told onConnect: it is not on the wire')
    c.write(answer(3))
    assert.equal(path(await c.request(5)), '/c', 'written when stream 3 ended')
    assert.deepEqual(await b.ended(), ['connect', 'headers 200', 'complete'])
    assert.deepEqual(third.events, ['connect'])
    const fourth = new Exchange(client, { path: '/d' })
    await c.sync()
    assert.deepEqual(headerIds(c), [1, 3, 5], 'streams 1 and 5 open: the fourth waits')
    // The server resets stream 1: its slot is free.
    c.write(rst(1, H2Code.INTERNAL_ERROR))
    assert.equal(path(await c.request(7)), '/d')
    await c.sync()
    assert.deepEqual(headerIds(c), [1, 3, 5, 7])
    assert.deepEqual(await a.ended(), ['connect', 'error ERR_HTTP2_STREAM_ERROR'])
    c.write(answer(5), answer(7))
    assert.deepEqual(await third.ended(), ['connect', 'headers 200', 'complete'])
    assert.deepEqual(await fourth.ended(), ['connect', 'headers 200', 'complete'])
  },
)

peerTest('MAX_CONCURRENT_STREAMS raised from 1 to 3 mid-connection: the two waiting requests go out at once', async (t, transport) => {
  const { client, c, ex: a } = await opened(t, transport, [[Setting.MAX_CONCURRENT_STREAMS, 1]])
  const waiting = [new Exchange(client, { path: '/b' }), new Exchange(client, { path: '/c' })]
  await c.sync()
  assert.deepEqual(headerIds(c), [1])
  await c.handshake([[Setting.MAX_CONCURRENT_STREAMS, 3]])
  await c.request(5)
  assert.deepEqual(headerIds(c), [1, 3, 5])
  c.write(answer(1), answer(3), answer(5))
  for (const ex of [a, ...waiting]) assert.deepEqual(await ex.ended(), ['connect', 'headers 200', 'complete'])
})

// ---- REFUSED_STREAM ----

peerTest('REFUSED_STREAM: the request is taken back (onRequestRefused) and sent again on the same connection with the next id', async (t, transport) => {
  const { peer, client, c, ex: a } = await opened(t, transport)
  const counts = countEvents(client, 'stream-resent')
  const first = await c.request(1)
  c.write(rst(1, H2Code.REFUSED_STREAM))
  const again = await c.request(3)
  assert.deepEqual(again.fields, first.fields, 'the same request')
  c.write(answer(3))
  assert.deepEqual(await a.ended(), ['connect', 'refused', 'connect', 'headers 200', 'complete'])
  assert.equal(counts['stream-resent'], 1)
  assert.equal(peer.connections.length, 1)
  assert.deepEqual(resets(c), [], 'nothing reset by the client')
})

peerTest('REFUSED_STREAM six times: sent again five times, then it fails as HTTP2_REFUSED_STREAM', async (t, transport) => {
  const { c, ex: a } = await opened(t, transport)
  for (let id = 1; id <= 11; id += 2) {
    await c.request(id)
    c.write(rst(id, H2Code.REFUSED_STREAM))
  }
  const told = ['connect', 'refused']
  assert.deepEqual(await a.ended(), [...told, ...told, ...told, ...told, ...told, ...told, 'error HTTP2_REFUSED_STREAM'])
  await c.sync()
  assert.deepEqual(headerIds(c), [1, 3, 5, 7, 9, 11])
})

peerTest('REFUSED_STREAM after the answer began is no refusal: the request fails and is not sent again', async (t, transport) => {
  const { c, ex: a } = await opened(t, transport)
  c.write(headers(1, STATUS_200), rst(1, H2Code.REFUSED_STREAM))
  assert.deepEqual(await a.ended(), ['connect', 'headers 200', 'error ERR_HTTP2_STREAM_ERROR'])
  await c.sync()
  assert.deepEqual(headerIds(c), [1])
})

// ---- GOAWAY ----

peerTest(
  'GOAWAY(last 3): stream 5 taken back and sent again on a new connection, streams 1 and 3 finish on the old one, which then closes with GOAWAY(0)',
  async (t, transport) => {
    const { peer, client, c, ex: a } = await opened(t, transport)
    const counts = countEvents(client, 'stream-resent')
    const b = new Exchange(client, { path: '/b' })
    const above = new Exchange(client, { path: '/c' })
    await c.request(5)
    c.write(goaway(3, H2Code.NO_ERROR))
    const c2 = await peer.connection(1)
    const resent = await c2.request(1)
    assert.equal(path(resent), '/c')
    assert.deepEqual(above.events, ['connect', 'refused', 'connect'])
    // A request dispatched now goes on the new connection too.
    const later = new Exchange(client, { path: '/d' })
    assert.equal(path(await c2.request(3)), '/d')
    // The old connection finishes what the server processed.
    c.write(answer(1))
    c.write(headers(3, STATUS_200), data(3, 'three', Flag.END_STREAM))
    assert.deepEqual(await a.ended(), ['connect', 'headers 200', 'complete'])
    assert.deepEqual(await b.ended(), ['connect', 'headers 200', 'data three', 'complete'])
    const last = await c.goaway()
    assert.deepEqual(last, { lastStreamId: 0, code: 'NO_ERROR' })
    await c.whenClosed()
    assert.deepEqual(headerIds(c), [1, 3, 5], 'nothing new on the connection going away')
    c2.write(answer(1), answer(3))
    assert.deepEqual(await above.ended(), ['connect', 'refused', 'connect', 'headers 200', 'complete'])
    assert.deepEqual(await later.ended(), ['connect', 'headers 200', 'complete'])
    assert.deepEqual(headerIds(c2), [1, 3])
    assert.equal(counts['stream-resent'], 1)
    assert.equal(peer.connections.length, 2)
  },
  { tls: true },
)

peerTest('GOAWAY(last 1) then the close: stream 1 fails as HTTP2_GOAWAY, stream 3 is sent again on a new connection', async (t, transport) => {
  const { peer, client, c, ex: a } = await opened(t, transport)
  const above = new Exchange(client, { path: '/b' })
  await c.request(3)
  c.write(goaway(1, H2Code.NO_ERROR))
  await c.sync()
  c.socket.end()
  assert.deepEqual(await a.ended(), ['connect', 'error HTTP2_GOAWAY'])
  const c2 = await peer.connection(1)
  assert.equal(path(await c2.request(1)), '/b')
  c2.write(answer(1))
  assert.deepEqual(await above.ended(), ['connect', 'refused', 'connect', 'headers 200', 'complete'])
})

// ---- RST_STREAM CANCEL ----

peerTest(
  "a lost hedge (aborted with HedgeCancelledError): RST_STREAM CANCEL, one 'stream-reset', and the server's late answer on it dropped",
  async (t, transport) => {
    const { client, c, ex: a } = await opened(t, transport)
    const counts = countEvents(client, 'stream-reset')
    a.abort!(new HedgeCancelledError('lost the race'))
    const reset = await c.next(FrameType.RST_STREAM)
    assert.deepEqual([reset.streamId, reset.flags, codeName(reset.payload.readUInt32BE(0))], [1, 0, 'CANCEL'])
    assert.equal(counts['stream-reset'], 1)
    assert.deepEqual(a.events, ['connect', 'error HEDGE_CANCELLED'])
    // What the server had already sent arrives after the reset: read and dropped.
    c.write(headers(1, STATUS_200), data(1, 'late', Flag.END_STREAM))
    await c.sync()
    assert.deepEqual(a.events, ['connect', 'error HEDGE_CANCELLED'], 'nothing more for the cancelled request')
    assert.deepEqual(resets(c), ['1 CANCEL'], 'one reset, nothing for the late frames')
    assert.deepEqual(c.ofType(FrameType.GOAWAY), [])
    // The connection goes on.
    const next = new Exchange(client)
    await c.request(3)
    c.write(answer(3))
    assert.deepEqual(await next.ended(), ['connect', 'headers 200', 'complete'])
  },
  { tls: true },
)

peerTest("an abort that is no hedge cancel (the caller's, a deadline's): RST_STREAM CANCEL too, no 'stream-reset'", async (t, transport) => {
  const { client, c, ex: a } = await opened(t, transport)
  const counts = countEvents(client, 'stream-reset')
  c.write(headers(1, STATUS_200))
  await c.sync()
  a.abort!(new errors.RequestAbortedError())
  const reset = await c.next(FrameType.RST_STREAM)
  assert.deepEqual([reset.streamId, codeName(reset.payload.readUInt32BE(0))], [1, 'CANCEL'])
  assert.equal(counts['stream-reset'], 0)
  assert.deepEqual(a.events, ['connect', 'headers 200', 'error UND_ERR_ABORTED'])
})

peerTest('a cancel after the stream ended writes nothing and counts no reset', async (t, transport) => {
  const { client, c, ex: a } = await opened(t, transport)
  const counts = countEvents(client, 'stream-reset')
  c.write(answer(1))
  assert.deepEqual(await a.ended(), ['connect', 'headers 200', 'complete'])
  a.abort!(new HedgeCancelledError('too late'))
  await c.sync()
  assert.deepEqual(resets(c), [])
  assert.equal(counts['stream-reset'], 0)
})

peerTest('a lost hedge reset before its answer, then GOAWAY below it: the server never processed it, its attempt is taken back', async (t, transport) => {
  const { client, c, ex: a } = await opened(t, transport)
  const hedge = new Exchange(client, { path: '/hedge' })
  await c.request(3)
  c.write(answer(1))
  await a.ended()
  hedge.abort!(new HedgeCancelledError('lost'))
  await c.next(FrameType.RST_STREAM)
  c.write(goaway(1, H2Code.NO_ERROR))
  await c.whenClosed()
  assert.deepEqual(hedge.events, ['connect', 'error HEDGE_CANCELLED', 'refused'])
})
