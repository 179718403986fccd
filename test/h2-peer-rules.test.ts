/**
 * Each rule the HTTP/2 client enforces on what a server sends, one case a
 * rule, against the scripted peer (helpers/h2-peer.ts): the frame, the
 * client's GOAWAY (or RST_STREAM, for a stream's own error) with its code,
 * and the exact reason the request in flight fails with, so that a rule
 * whose check is lost is seen even where a later check would close the
 * connection with the same code.
 */
import assert from 'node:assert/strict'
import { Flag, frame, FrameType, H2Code, Setting } from '../src/engine/h2-frames.js'
import { connectionError, continuation, data, headers, opened, peerTest, settings, STATUS_200, u32, windowUpdate } from './helpers/h2-peer.js'

interface ConnectionCase {
  name: string
  bytes: Buffer
  code: string
  reason: string
  kind?: string
}

const CONNECTION_CASES: ConnectionCase[] = [
  { name: 'DATA on stream 0', bytes: data(0, 'x'), code: 'PROTOCOL_ERROR', reason: 'DATA on stream 0' },
  { name: 'HEADERS on stream 0', bytes: headers(0, STATUS_200), code: 'PROTOCOL_ERROR', reason: 'HEADERS on stream 0' },
  {
    name: 'a CONTINUATION without a HEADERS',
    bytes: continuation(1, STATUS_200, Flag.END_HEADERS),
    code: 'PROTOCOL_ERROR',
    reason: 'CONTINUATION without its HEADERS',
  },
  {
    name: "a CONTINUATION on another stream than its HEADERS'",
    bytes: Buffer.concat([headers(1, STATUS_200, 0), continuation(3, STATUS_200, Flag.END_HEADERS)]),
    code: 'PROTOCOL_ERROR',
    reason: 'CONTINUATION without its HEADERS',
  },
  {
    name: 'a frame inside a header block',
    bytes: Buffer.concat([headers(1, STATUS_200, 0), data(1, 'x')]),
    code: 'PROTOCOL_ERROR',
    reason: 'a frame inside a header block',
  },
  { name: 'a GOAWAY of 7 octets', bytes: frame(FrameType.GOAWAY, 0, 0, Buffer.alloc(7)), code: 'FRAME_SIZE_ERROR', reason: 'malformed GOAWAY' },
  { name: 'a GOAWAY on a stream', bytes: frame(FrameType.GOAWAY, 0, 1, Buffer.alloc(8)), code: 'FRAME_SIZE_ERROR', reason: 'malformed GOAWAY' },
  {
    name: 'a WINDOW_UPDATE of 3 octets',
    bytes: frame(FrameType.WINDOW_UPDATE, 0, 0, Buffer.alloc(3)),
    code: 'FRAME_SIZE_ERROR',
    reason: 'malformed WINDOW_UPDATE',
  },
  { name: 'a RST_STREAM of 3 octets', bytes: frame(FrameType.RST_STREAM, 0, 1, Buffer.alloc(3)), code: 'FRAME_SIZE_ERROR', reason: 'malformed RST_STREAM' },
  { name: 'DATA on a stream never opened (odd)', bytes: data(5, 'x'), code: 'PROTOCOL_ERROR', reason: 'a frame on stream 5, never opened' },
  { name: 'DATA on an even stream', bytes: data(2, 'x'), code: 'PROTOCOL_ERROR', reason: 'a frame on stream 2, never opened' },
  {
    name: 'a PUSH_PROMISE',
    bytes: frame(FrameType.PUSH_PROMISE, Flag.END_HEADERS, 1, u32(2)),
    code: 'PROTOCOL_ERROR',
    reason: 'PUSH_PROMISE with push disabled',
  },
  { name: 'SETTINGS on a stream', bytes: frame(FrameType.SETTINGS, 0, 1, null), code: 'PROTOCOL_ERROR', reason: 'SETTINGS on a stream' },
  {
    name: 'SETTINGS of 5 octets',
    bytes: frame(FrameType.SETTINGS, 0, 0, Buffer.alloc(5)),
    code: 'FRAME_SIZE_ERROR',
    reason: 'SETTINGS length not a multiple of 6',
  },
  {
    name: 'a SETTINGS ACK with a payload',
    bytes: frame(FrameType.SETTINGS, Flag.ACK, 0, Buffer.alloc(6)),
    code: 'FRAME_SIZE_ERROR',
    reason: 'SETTINGS ACK with a payload',
  },
  { name: 'ENABLE_PUSH 1', bytes: settings([[Setting.ENABLE_PUSH, 1]]), code: 'PROTOCOL_ERROR', reason: 'ENABLE_PUSH 1 from a server' },
  {
    name: 'INITIAL_WINDOW_SIZE 2^31',
    bytes: settings([[Setting.INITIAL_WINDOW_SIZE, 2 ** 31]]),
    code: 'FLOW_CONTROL_ERROR',
    reason: 'INITIAL_WINDOW_SIZE above 2^31-1',
  },
  { name: 'MAX_FRAME_SIZE 16,383', bytes: settings([[Setting.MAX_FRAME_SIZE, 16_383]]), code: 'PROTOCOL_ERROR', reason: 'MAX_FRAME_SIZE out of range' },
  { name: 'a PING on a stream', bytes: frame(FrameType.PING, 0, 1, Buffer.alloc(8)), code: 'PROTOCOL_ERROR', reason: 'PING on a stream' },
  { name: 'a PING of 7 octets', bytes: frame(FrameType.PING, 0, 0, Buffer.alloc(7)), code: 'FRAME_SIZE_ERROR', reason: 'PING of other than 8 octets' },
  { name: 'a WINDOW_UPDATE of 0 on the connection', bytes: windowUpdate(0, 0), code: 'PROTOCOL_ERROR', reason: 'WINDOW_UPDATE of 0' },
  {
    name: 'a WINDOW_UPDATE past 2^31-1 on the connection',
    bytes: windowUpdate(0, 2 ** 31 - 65_535),
    code: 'FLOW_CONTROL_ERROR',
    reason: 'WINDOW_UPDATE took the connection window past 2^31-1',
  },
  { name: 'a frame of 16,385 octets', bytes: data(1, Buffer.alloc(16_385)), code: 'FRAME_SIZE_ERROR', reason: 'frame of 16385 octets above 16384' },
  {
    name: 'padded DATA without its pad length',
    bytes: frame(FrameType.DATA, Flag.PADDED, 1, null),
    code: 'PROTOCOL_ERROR',
    reason: 'padded frame without a pad length',
  },
  {
    name: 'padding longer than the frame',
    bytes: frame(FrameType.DATA, Flag.PADDED, 1, Buffer.from([5, 0, 0])),
    code: 'PROTOCOL_ERROR',
    reason: 'padding longer than the frame',
  },
]

for (const c of CONNECTION_CASES) {
  peerTest(`${c.name}: GOAWAY ${c.code}, the request fails with "${c.reason}"`, async (t, transport) => {
    const { c: peer, ex } = await opened(t, transport)
    // Answers first where the rule is about a stream that has its response headers (padding, a frame's size).
    if (c.reason.startsWith('padd') || c.reason.startsWith('frame of')) peer.write(headers(1, STATUS_200))
    peer.write(c.bytes)
    const before = c.reason.startsWith('padd') || c.reason.startsWith('frame of') ? ['connect', 'headers 200'] : ['connect']
    await connectionError(peer, ex, c.code, before, c.kind)
    assert.equal(ex.error?.message, c.reason)
  })
}

/** A stream's own error: RST_STREAM with `code` for it, the request fails with `reason`, and the connection goes on. */
async function streamError(
  t: Parameters<Parameters<typeof peerTest>[1]>[0],
  bytes: (c: { write(...b: Buffer[]): void }) => void,
  code: number,
  reason: string,
  kind: string,
): Promise<void> {
  const { c, ex } = await opened(t, 'h2c')
  bytes(c)
  assert.deepEqual((await ex.ended()).slice(-1), [`error ${kind}`])
  assert.equal(ex.error?.message, reason)
  await c.sync()
  assert.deepEqual(
    c.ofType(FrameType.RST_STREAM).map((f) => [f.streamId, f.payload.readUInt32BE(0)]),
    [[1, code]],
  )
  assert.deepEqual(c.ofType(FrameType.GOAWAY), [], 'the connection goes on')
}

peerTest('DATA before the response headers: RST_STREAM PROTOCOL_ERROR for that stream', (t) =>
  streamError(t, (c) => c.write(data(1, 'x')), H2Code.PROTOCOL_ERROR, 'DATA before the response headers', 'HTTP2_PROTOCOL_ERROR'),
)

peerTest('a WINDOW_UPDATE past 2^31-1 on a stream: RST_STREAM FLOW_CONTROL_ERROR for it', (t) =>
  streamError(
    t,
    (c) => c.write(windowUpdate(1, 2 ** 31 - 65_535)),
    H2Code.FLOW_CONTROL_ERROR,
    'WINDOW_UPDATE took the stream window past 2^31-1',
    'h2: flow-control error',
  ),
)

peerTest("an INITIAL_WINDOW_SIZE that takes an open stream's window past 2^31-1: GOAWAY FLOW_CONTROL_ERROR", async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  // The stream's window: 65,535 + (2^31 - 1 - 65,535) = 2^31 - 1, the most; one more by the new initial size.
  c.write(windowUpdate(1, 2 ** 31 - 1 - 65_535), settings([[Setting.INITIAL_WINDOW_SIZE, 65_536]]))
  await connectionError(c, ex, 'FLOW_CONTROL_ERROR')
  assert.equal(ex.error?.message, "INITIAL_WINDOW_SIZE took stream 1's window past 2^31-1")
})
