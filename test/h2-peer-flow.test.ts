/**
 * hedgebench's HTTP/2 client (engine/h2-client.ts) frame by frame against a
 * scripted peer (helpers/h2-peer.ts): flow control (RFC 9113 5.2, 6.9).
 * Receiving: the connection's and a stream's WINDOW_UPDATE go out exactly
 * when 2^29 octets of DATA were consumed, padding included, each for what
 * was; DATA on a stream we reset still counts against the connection window
 * and is dropped. Sending: a body within the server's windows, waiting for
 * its WINDOW_UPDATEs and a new SETTINGS_INITIAL_WINDOW_SIZE.
 */
import assert from 'node:assert/strict'
import { Flag, FrameType, Setting } from '../src/engine/h2-frames.js'
import { HedgeCancelledError } from '../src/hedging/errors.js'
import { data, Exchange, headers, opened, padded, type PeerConnection, peerTest, STATUS_200, windowUpdate } from './helpers/h2-peer.js'

/** h2-client.ts: a WINDOW_UPDATE goes out once half of our 2^30-1 window, 2^29 octets, has been consumed. */
const REFILL = 2 ** 29
/** The WINDOW_UPDATE(0) right after the preface, which takes the connection window to 2^30-1. */
const OPENING: [number, number] = [0, 2 ** 30 - 1 - 65_535]
/** The client reads half a gigabyte before a barrier returns: the wait for it, and the test's limit. */
const BULK_WAIT_MS = 5000
const BULK = { timeoutMs: 20_000 }

/** The client's WINDOW_UPDATEs as [stream, increment]. */
const updates = (c: PeerConnection): Array<[number, number]> => c.ofType(FrameType.WINDOW_UPDATE).map((f) => [f.streamId, f.payload.readUInt32BE(0)])

/** Writes the frame `n` times, 32 to a write. */
async function repeat(c: PeerConnection, frame: Buffer, n: number): Promise<void> {
  await c.pour(Buffer.concat(Array.from({ length: 32 }, () => frame)), Math.floor(n / 32))
  await c.pour(frame, n % 32)
}

peerTest(
  'WINDOW_UPDATE for the connection and the stream: none before 2^29 octets of DATA (padding counted), then each for exactly what was consumed',
  async (t, transport) => {
    const { c, ex: a } = await opened(t, transport, [], {})
    c.write(headers(1, STATUS_200))
    // 16,000 octets a frame: the pad length, 15,899 of content, 100 of padding.
    const one = data(1, padded(Buffer.alloc(15_899, 0x61), 100), Flag.PADDED)
    const crossing = Math.ceil(REFILL / 16_000)
    await repeat(c, one, crossing - 1)
    await c.sync(BULK_WAIT_MS)
    assert.deepEqual(updates(c), [OPENING], `nothing after ${(crossing - 1) * 16_000} octets`)
    c.write(one)
    await c.sync()
    assert.deepEqual(updates(c), [OPENING, [0, crossing * 16_000], [1, crossing * 16_000]])
    c.write(data(1, 'end', Flag.END_STREAM))
    await a.ended()
    assert.deepEqual(a.outline, ['connect', 'headers 200', 'complete'])
    assert.equal(a.received, crossing * 15_899 + 3, 'the content without the padding')
    assert.equal(a.chunks, crossing + 1)
  },
  BULK,
)

peerTest(
  'DATA on a stream we reset counts against the connection window and is dropped: WINDOW_UPDATE(0) at 2^29 with it, none for that stream',
  async (t, transport) => {
    const { client, c, ex: a } = await opened(t, transport, [], {})
    const live = new Exchange(client, { path: '/live' })
    await c.request(3)
    a.abort!(new HedgeCancelledError('lost'))
    await c.next(FrameType.RST_STREAM)
    // What the server had begun to send on the lost stream arrives after the reset: 1,000 frames of 9,999 octets.
    c.write(headers(1, STATUS_200), headers(3, STATUS_200))
    const lostOctets = 1000 * 9_999
    await repeat(c, data(1, Buffer.alloc(9_999)), 1000)
    const one = data(3, Buffer.alloc(16_000, 0x62))
    const crossing = Math.ceil((REFILL - lostOctets) / 16_000)
    await repeat(c, one, crossing - 1)
    await c.sync(BULK_WAIT_MS)
    assert.deepEqual(updates(c), [OPENING])
    c.write(one)
    await c.sync()
    assert.deepEqual(updates(c), [OPENING, [0, lostOctets + crossing * 16_000]], 'the lost stream counted, nothing for it')
    // The live stream's own WINDOW_UPDATE: at 2^29 octets on it alone.
    const own = Math.ceil(REFILL / 16_000)
    await repeat(c, one, own - crossing)
    await c.sync(BULK_WAIT_MS)
    assert.deepEqual(updates(c), [OPENING, [0, lostOctets + crossing * 16_000], [3, own * 16_000]])
    c.write(data(3, '', Flag.END_STREAM))
    await live.ended()
    assert.deepEqual(live.outline, ['connect', 'headers 200', 'complete'])
    assert.equal(live.received, own * 16_000)
    assert.deepEqual(a.events, ['connect', 'error HEDGE_CANCELLED'], 'none of the lost stream delivered')
  },
  BULK,
)

/** Sizes of the client's DATA on `streamId`, with '!' for END_STREAM. */
const sent = (c: PeerConnection, streamId: number): string[] =>
  c.ofType(FrameType.DATA, streamId).map((f) => `${f.payload.length}${f.flags & Flag.END_STREAM ? '!' : ''}`)

peerTest(
  'a body within SETTINGS_INITIAL_WINDOW_SIZE 30: 30 octets, then as WINDOW_UPDATE(stream) and a larger INITIAL_WINDOW_SIZE allow',
  async (t, transport) => {
    const { client, c, ex: a } = await opened(t, transport, [], {})
    await c.handshake([[Setting.INITIAL_WINDOW_SIZE, 30]])
    const post = new Exchange(client, { method: 'POST', path: '/post', body: 'x'.repeat(100) })
    const req = await c.request(3)
    assert.equal(req.flags, Flag.END_HEADERS, 'no END_STREAM: a body follows')
    assert.deepEqual(req.fields!.at(-1), ['content-length', '100'])
    await c.sync()
    assert.deepEqual(sent(c, 3), ['30'])
    c.write(windowUpdate(3, 20))
    await c.sync()
    assert.deepEqual(sent(c, 3), ['30', '20'])
    // 30 more for every stream: the window of the open one grows by the difference (RFC 9113 6.9.2).
    await c.handshake([[Setting.INITIAL_WINDOW_SIZE, 60]])
    await c.sync()
    assert.deepEqual(sent(c, 3), ['30', '20', '30'])
    c.write(windowUpdate(3, 1000))
    await c.sync()
    assert.deepEqual(sent(c, 3), ['30', '20', '30', '20!'])
    c.write(headers(3, STATUS_200, Flag.END_HEADERS | Flag.END_STREAM), headers(1, STATUS_200, Flag.END_HEADERS | Flag.END_STREAM))
    assert.deepEqual(await post.ended(), ['connect', 'headers 200', 'complete'])
    assert.deepEqual(await a.ended(), ['connect', 'headers 200', 'complete'])
  },
)

peerTest(
  'a body larger than the connection window: 65,535 octets in frames of 16,384, the rest after WINDOW_UPDATE(0) and WINDOW_UPDATE(stream)',
  async (t, transport) => {
    const { client, c } = await opened(t, transport, [], {})
    const post = new Exchange(client, { method: 'POST', path: '/post', body: 'y'.repeat(70_000) })
    await c.request(3)
    await c.sync()
    assert.deepEqual(sent(c, 3), ['16384', '16384', '16384', '16383'])
    c.write(windowUpdate(0, 4465))
    await c.sync()
    assert.deepEqual(sent(c, 3).length, 4, 'the stream window is spent too')
    c.write(windowUpdate(3, 10_000))
    await c.sync()
    assert.deepEqual(sent(c, 3), ['16384', '16384', '16384', '16383', '4465!'])
    assert.equal(Buffer.concat(c.ofType(FrameType.DATA, 3).map((f) => f.payload)).toString(), 'y'.repeat(70_000))
    c.write(headers(3, STATUS_200, Flag.END_HEADERS | Flag.END_STREAM))
    assert.deepEqual(await post.ended(), ['connect', 'headers 200', 'complete'])
  },
)
