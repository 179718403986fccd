/**
 * hedgebench's HTTP/2 client (engine/h2-client.ts) frame by frame against a
 * scripted peer (helpers/h2-peer.ts), the connection's own rules (RFC 9113
 * 3.4, 6.5, 6.7, 6.9, 5.5): the preface, its SETTINGS and the connection
 * WINDOW_UPDATE, byte for byte; one SETTINGS ACK per SETTINGS and none for an
 * ACK; PING answered with the same 8 octets and a PING ACK not answered;
 * unknown frame types and settings ignored; the SETTINGS values and
 * WINDOW_UPDATEs a client must refuse, each with its GOAWAY code.
 */
import assert from 'node:assert/strict'
import { Flag, frame, FrameType, H2Code, Setting } from '../src/engine/h2-frames.js'
import { answer, connectionError, Exchange, headers, opened, peerTest, ping, settings, setUp, STATUS_200, u32, windowUpdate } from './helpers/h2-peer.js'

const settingsPairs = (payload: Buffer): Array<[number, number]> =>
  Array.from({ length: payload.length / 6 }, (_, i) => [payload.readUInt16BE(6 * i), payload.readUInt32BE(6 * i + 2)])

peerTest(
  'the preface, then SETTINGS (HPACK table 4,096, push off, stream window 2^30-1, header list 64 KiB) and WINDOW_UPDATE(0) to 2^30-1, byte for byte, then the request',
  async (t, transport) => {
    const { peer, client } = await setUp(t, transport)
    const ex = new Exchange(client, { path: '/a', headers: { 'x-k': 'v' } })
    const c = await peer.connection()
    assert.equal(c.preface!.toString('latin1'), 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')
    const first = Buffer.concat(c.rawAfterPreface)
    // SETTINGS: 24 octets, HEADER_TABLE_SIZE 4,096, ENABLE_PUSH 0, INITIAL_WINDOW_SIZE 0x3fffffff, MAX_HEADER_LIST_SIZE
    // 65,536 (the limits HTTP/2 has a setting for); WINDOW_UPDATE on 0 by 2^30-1 - 65,535.
    const expected = '000018040000000000' + '000100001000' + '000200000000' + '00043fffffff' + '000600010000' + '000004080000000000' + '3fff0000'
    assert.equal(first.subarray(0, expected.length / 2).toString('hex'), expected)
    const s = await c.next(FrameType.SETTINGS)
    assert.deepEqual(settingsPairs(s.payload), [
      [Setting.HEADER_TABLE_SIZE, 4096],
      [Setting.ENABLE_PUSH, 0],
      [Setting.INITIAL_WINDOW_SIZE, 2 ** 30 - 1],
      [Setting.MAX_HEADER_LIST_SIZE, 65_536],
    ])
    const wu = await c.next(FrameType.WINDOW_UPDATE)
    assert.deepEqual([wu.streamId, wu.payload.readUInt32BE(0)], [0, 2 ** 30 - 1 - 65_535])
    const req = await c.request(1)
    assert.deepEqual(
      c.frames.slice(0, 3).map((f) => f.type),
      [FrameType.SETTINGS, FrameType.WINDOW_UPDATE, FrameType.HEADERS],
    )
    assert.equal(req.flags, Flag.END_STREAM | Flag.END_HEADERS)
    const { host } = new URL(peer.origin)
    assert.deepEqual(req.fields, [
      [':method', 'GET'],
      [':scheme', transport === 'TLS' ? 'https' : 'http'],
      [':authority', host],
      [':path', '/a'],
      ['x-k', 'v'],
    ])
    c.write(answer(1))
    assert.deepEqual(await ex.ended(), ['connect', 'headers 200', 'complete'])
  },
  { tls: true },
)

peerTest(
  "one SETTINGS ACK (empty, stream 0) for each of the server's SETTINGS, empty ones too; none for the server's ACK",
  async (t, transport) => {
    const { peer, client } = await setUp(t, transport)
    const ex = new Exchange(client)
    const c = await peer.connection()
    await c.handshake([
      [Setting.MAX_CONCURRENT_STREAMS, 100],
      [Setting.HEADER_TABLE_SIZE, 8192],
    ])
    await c.handshake()
    c.write(frame(FrameType.SETTINGS, Flag.ACK, 0, null))
    await c.sync()
    const all = c.ofType(FrameType.SETTINGS)
    assert.deepEqual(
      all.map((f) => [f.flags, f.streamId, f.payload.length]),
      [
        [0, 0, 24],
        [Flag.ACK, 0, 0],
        [Flag.ACK, 0, 0],
      ],
      'its own SETTINGS and two ACKs, none for the ACK',
    )
    c.write(answer(1))
    assert.deepEqual(await ex.ended(), ['connect', 'headers 200', 'complete'])
  },
  { tls: true },
)

peerTest(
  'PING is answered with ACK and the same 8 octets; a PING ACK is not answered',
  async (t, transport) => {
    const { c, ex } = await opened(t, transport)
    const octets = Buffer.from('0102030405060708', 'hex')
    c.write(ping(octets))
    const ack = await c.next(FrameType.PING)
    assert.deepEqual([ack.flags, ack.streamId, ack.payload.toString('hex')], [Flag.ACK, 0, '0102030405060708'])
    c.write(ping(Buffer.from('ffffffffffffffff', 'hex'), true))
    await c.sync()
    const pings = c.ofType(FrameType.PING).map((f) => f.payload.toString('hex'))
    assert.equal(pings.length, 2, `an ACK of ours and the barrier's, nothing for the ACK: ${pings}`)
    assert.equal(pings[0], '0102030405060708')
    c.write(answer(1))
    assert.deepEqual(await ex.ended(), ['connect', 'headers 200', 'complete'])
  },
  { tls: true },
)

peerTest('a PING of 7 octets: GOAWAY FRAME_SIZE_ERROR', async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  c.write(frame(FrameType.PING, 0, 0, Buffer.alloc(7)))
  await connectionError(c, ex, 'FRAME_SIZE_ERROR')
})

peerTest('a PING on a stream: GOAWAY PROTOCOL_ERROR (RFC 9113 6.7)', async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  c.write(frame(FrameType.PING, 0, 1, Buffer.alloc(8)))
  await connectionError(c, ex, 'PROTOCOL_ERROR')
})

peerTest('unknown frame types (on stream 0 and on an open stream), PRIORITY and unknown settings are ignored: the request completes', async (t, transport) => {
  const { peer, client } = await setUp(t, transport)
  const ex = new Exchange(client)
  const c = await peer.connection()
  await c.handshake([
    [0x99, 7],
    [0xffff, 0xffffffff],
  ])
  await c.request(1)
  c.write(frame(0xfa, 0xff, 0, Buffer.from('unknown')), frame(0x0b, 0, 1, Buffer.alloc(3)), frame(FrameType.PRIORITY, 0, 1, Buffer.from([0, 0, 0, 0, 16])))
  c.write(headers(1, STATUS_200), frame(FrameType.DATA, Flag.END_STREAM, 1, Buffer.from('ok')))
  assert.deepEqual(await ex.ended(), ['connect', 'headers 200', 'data ok', 'complete'])
  await c.sync()
  assert.deepEqual(c.ofType(FrameType.GOAWAY), [])
  assert.deepEqual(c.ofType(FrameType.RST_STREAM), [])
})

peerTest('WINDOW_UPDATE of 0 on the connection: GOAWAY PROTOCOL_ERROR', async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  c.write(windowUpdate(0, 0))
  await connectionError(c, ex, 'PROTOCOL_ERROR')
})

peerTest('WINDOW_UPDATE of 0 on a stream: RST_STREAM PROTOCOL_ERROR for it, the connection goes on (RFC 9113 6.9)', async (t, transport) => {
  const { peer, client } = await setUp(t, transport)
  const first = new Exchange(client)
  const c = await peer.connection()
  await c.handshake()
  await c.request(1)
  c.write(windowUpdate(1, 0))
  await c.sync()
  const resets = c.ofType(FrameType.RST_STREAM).map((f) => [f.streamId, f.payload.readUInt32BE(0)])
  assert.deepEqual(resets, [[1, H2Code.PROTOCOL_ERROR]])
  assert.deepEqual(await first.ended(), ['connect', 'error HTTP2_PROTOCOL_ERROR'])
  const second = new Exchange(client)
  await c.request(3)
  c.write(answer(3))
  assert.deepEqual(await second.ended(), ['connect', 'headers 200', 'complete'])
})

peerTest('WINDOW_UPDATE taking the connection window past 2^31-1: GOAWAY FLOW_CONTROL_ERROR (RFC 9113 6.9.1)', async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  // 65,535 + (2^31 - 65,535) = 2^31: one past the largest window.
  c.write(windowUpdate(0, 2 ** 31 - 65_535))
  await connectionError(c, ex, 'FLOW_CONTROL_ERROR')
})

/** SETTINGS the client must refuse, each with its GOAWAY code; and the edge values it must take. */
const BAD_SETTINGS: Array<{ name: string; bytes: Buffer; code: string }> = [
  { name: 'INITIAL_WINDOW_SIZE 2^31', bytes: settings([[Setting.INITIAL_WINDOW_SIZE, 2 ** 31]]), code: 'FLOW_CONTROL_ERROR' },
  { name: 'MAX_FRAME_SIZE 16,383', bytes: settings([[Setting.MAX_FRAME_SIZE, 16_383]]), code: 'PROTOCOL_ERROR' },
  { name: 'MAX_FRAME_SIZE 2^24', bytes: settings([[Setting.MAX_FRAME_SIZE, 2 ** 24]]), code: 'PROTOCOL_ERROR' },
  { name: 'a length of 5', bytes: frame(FrameType.SETTINGS, 0, 0, Buffer.alloc(5)), code: 'FRAME_SIZE_ERROR' },
  { name: 'a stream id', bytes: frame(FrameType.SETTINGS, 0, 1, null), code: 'PROTOCOL_ERROR' },
  {
    name: 'ENABLE_PUSH 1 from a server',
    bytes: settings([[Setting.ENABLE_PUSH, 1]]),
    code: 'PROTOCOL_ERROR',
  },
  {
    name: 'an ACK with a payload',
    bytes: frame(FrameType.SETTINGS, Flag.ACK, 0, u32(1, 2)),
    code: 'FRAME_SIZE_ERROR',
  },
]
for (const bad of BAD_SETTINGS) {
  peerTest(`SETTINGS with ${bad.name}: GOAWAY ${bad.code}`, async (t, transport) => {
    const { c, ex } = await opened(t, transport)
    c.write(bad.bytes)
    await connectionError(c, ex, bad.code)
    assert.equal(c.ofType(FrameType.SETTINGS).filter((f) => f.flags & Flag.ACK).length, 1, 'the bad SETTINGS is not ACKed')
  })
}

peerTest('SETTINGS at the edges (INITIAL_WINDOW_SIZE 2^31-1, MAX_FRAME_SIZE 16,384 and 2^24-1) are ACKed and the request completes', async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  await c.handshake([
    [Setting.INITIAL_WINDOW_SIZE, 2 ** 31 - 1],
    [Setting.MAX_FRAME_SIZE, 16_384],
  ])
  await c.handshake([[Setting.MAX_FRAME_SIZE, 2 ** 24 - 1]])
  c.write(answer(1))
  assert.deepEqual(await ex.ended(), ['connect', 'headers 200', 'complete'])
  assert.deepEqual(c.ofType(FrameType.GOAWAY), [])
})
