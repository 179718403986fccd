/**
 * The HTTP/2 client's limits (engine/h2-limits.ts) frame by frame against
 * the scripted peer (helpers/h2-peer.ts), each at its edge: what a server
 * may send is taken, one octet or one frame more closes the connection with
 * GOAWAY ENHANCE_YOUR_CALM (or FLOW_CONTROL_ERROR) and fails the request in
 * flight under the limit's name. The header list counted on the wire
 * (HEADERS + CONTINUATION) and while HPACK decodes; CONTINUATIONs counted;
 * the control frames owed at once. A raised limit takes what the default refuses.
 */
import assert from 'node:assert/strict'
import { buildConnector } from 'undici'
import { Flag, FrameType } from '../src/engine/h2-frames.js'
import { H2Client } from '../src/engine/h2-client.js'
import { DEFAULT_H2_LIMITS, type H2Limits } from '../src/engine/h2-limits.js'
import {
  connectionError,
  continuation,
  Exchange,
  headers,
  H2Peer,
  indexed,
  longLiteral,
  opened,
  peerTest,
  ping,
  STATUS_200,
  within,
} from './helpers/h2-peer.js'
import type { TestContext } from 'node:test'

const END = Flag.END_HEADERS | Flag.END_STREAM
const LIST = DEFAULT_H2_LIMITS.maxHeaderList

/** A field of exactly `size` octets as RFC 9113 counts it (name + value + 32): "x" and a value of size - 33 octets. */
const fieldOfSize = (size: number): Buffer => longLiteral('x', size - 33)

/** A client with `limits`, on a fresh peer, one request on stream 1 after the SETTINGS exchange. */
async function openedWith(t: TestContext, limits: Partial<H2Limits>) {
  const peer = await H2Peer.start('h2c')
  const client = new H2Client(peer.origin, { connect: buildConnector({}), maxStreams: 100, limits: { ...DEFAULT_H2_LIMITS, ...limits } })
  t.after(async () => {
    await within(client.destroy(), 'the client to be destroyed')
    await peer.close()
  })
  const ex = new Exchange(client, { path: '/a' })
  const c = await peer.connection()
  await c.handshake()
  await c.request(1)
  return { peer, client, c, ex }
}

/** A block of fields adding up to exactly `total` octets (RFC 9113's count), :status 200 first (42 octets). */
function blockOf(total: number): Buffer {
  const parts = [STATUS_200]
  let left = total - 42
  while (left > 0) {
    const size = Math.min(left, 4000)
    // The last field takes what is left; none smaller than 33 octets (an empty value).
    const take = left - size > 0 && left - size < 33 ? size - 33 : size
    parts.push(fieldOfSize(take))
    left -= take
  }
  return Buffer.concat(parts)
}

/** `block` as a HEADERS that ends stream `id` and CONTINUATIONs, `size` octets each. */
function inFrames(id: number, block: Buffer, size = 16_000): Buffer[] {
  const frames: Buffer[] = []
  for (let at = 0; at < block.length; at += size) {
    const last = at + size >= block.length ? Flag.END_HEADERS : 0
    frames.push(at === 0 ? headers(id, block.subarray(0, size), Flag.END_STREAM | last) : continuation(id, block.subarray(at, at + size), last))
  }
  return frames
}

/** What a handler heard, an answer's fields left out. */
const outline = (events: string[]): string[] => events.map((e) => (e.startsWith('headers ') ? e.slice(0, 'headers 200'.length) : e))

peerTest(
  'a header list of exactly 64 KiB (decoded) is taken; one octet more closes the connection: GOAWAY ENHANCE_YOUR_CALM',
  async (t, transport) => {
    const ok = await opened(t, transport)
    ok.c.write(...inFrames(1, blockOf(LIST)))
    assert.deepEqual(outline(await ok.ex.ended()), ['connect', 'headers 200', 'complete'])
    const over = await opened(t, transport)
    // Smaller than 64 KiB on the wire: the decoded size is what breaks the limit.
    assert.ok(blockOf(LIST + 1).length < LIST)
    over.c.write(...inFrames(1, blockOf(LIST + 1)))
    await connectionError(over.c, over.ex, 'ENHANCE_YOUR_CALM', ['connect'], 'h2: header list over 64 KiB')
  },
  { tls: true },
)

peerTest(
  'a header block larger than 64 KiB on the wire is refused before it is decoded (a flood of CONTINUATIONs is never kept whole)',
  async (t, transport) => {
    const { c, ex } = await opened(t, transport)
    // Octets that would not even decode: the limit on the wire comes first.
    c.write(headers(1, Buffer.alloc(16_384, 0xff), 0))
    for (let i = 0; i < 4; i++) c.write(continuation(1, Buffer.alloc(16_384, 0xff)))
    await connectionError(c, ex, 'ENHANCE_YOUR_CALM', ['connect'], 'h2: header list over 64 KiB')
  },
  { tls: true },
)

peerTest(
  'a 4 KB dynamic-table entry referred to by one octet each: refused once the decoded list passes 64 KiB',
  async (t, transport) => {
    const { c, ex } = await opened(t, transport)
    // "x" with a 4,000-octet value, indexed (dynamic entry 62: 4,033 octets), then 16 one-octet references to it:
    // 17 x 4,033 + 42 > 64 KiB decoded from a 4 KB block.
    c.write(headers(1, Buffer.concat([STATUS_200, longLiteral('x', 4000, 0x40), Buffer.alloc(16, 0x80 | 62)]), END))
    await connectionError(c, ex, 'ENHANCE_YOUR_CALM', ['connect'], 'h2: header list over 64 KiB')
  },
  { tls: true },
)

peerTest(
  '8 CONTINUATIONs after a HEADERS are taken; a 9th closes the connection: GOAWAY ENHANCE_YOUR_CALM',
  async (t, transport) => {
    const ok = await opened(t, transport)
    ok.c.write(headers(1, STATUS_200, Flag.END_STREAM))
    for (let i = 1; i <= 8; i++) ok.c.write(continuation(1, indexed(32), i === 8 ? Flag.END_HEADERS : 0))
    assert.deepEqual(outline(await ok.ex.ended()), ['connect', 'headers 200', 'complete'])
    const over = await opened(t, transport)
    over.c.write(headers(1, STATUS_200, Flag.END_STREAM))
    for (let i = 1; i <= 9; i++) over.c.write(continuation(1, indexed(32), i === 9 ? Flag.END_HEADERS : 0))
    await connectionError(over.c, over.ex, 'ENHANCE_YOUR_CALM', ['connect'], 'h2: more than 8 CONTINUATION frames')
  },
  { tls: true },
)

peerTest('--h2-max-continuations 9 and --h2-max-header-list 128 KiB take what the defaults refuse', async (t) => {
  const { c, ex } = await openedWith(t, { maxContinuations: 9, maxHeaderList: 128 * 1024 })
  // Over 64 KiB in a HEADERS and 9 CONTINUATIONs.
  const frames = inFrames(1, blockOf(LIST + 1), 6600)
  assert.equal(frames.length, 10)
  c.write(...frames)
  assert.deepEqual(outline(await ex.ended()), ['connect', 'headers 200', 'complete'])
})

peerTest('--h2-header-table 100: advertised in SETTINGS, and a size update above it is a COMPRESSION_ERROR', async (t) => {
  const { c, ex } = await openedWith(t, { headerTable: 100 })
  const s = c.ofType(FrameType.SETTINGS)[0]!
  assert.equal(s.payload.readUInt16BE(0), 0x1)
  assert.equal(s.payload.readUInt32BE(2), 100)
  // Dynamic table size update to 101 (0x20 | 31, then 101 - 31 = 70).
  c.write(headers(1, Buffer.concat([Buffer.from([0x3f, 70]), STATUS_200]), END))
  await connectionError(c, ex, 'COMPRESSION_ERROR')
})

peerTest('PING frames owed to a server that does not read: the 1,001st closes the connection as a PING flood', async (t) => {
  const { c, ex } = await openedWith(t, { maxOwedFrames: 1000 })
  // The peer stops reading: our ACKs wait in the socket. 1,001 PINGs in one write: their ACKs are owed at once.
  c.socket.pause()
  c.write(Buffer.concat(Array.from({ length: 1001 }, (_, i) => ping(Buffer.alloc(8, i & 0xff)))))
  assert.deepEqual(await ex.ended(), ['connect', 'error h2: PING flood'])
})

peerTest('1,000 PINGs at once are answered (the flood limit is not reached)', async (t) => {
  const { c, ex } = await openedWith(t, { maxOwedFrames: 1000 })
  c.write(Buffer.concat(Array.from({ length: 1000 }, () => ping(Buffer.alloc(8, 1)))))
  await c.sync()
  assert.equal(c.ofType(FrameType.PING).filter((f) => f.flags & Flag.ACK).length, 1001)
  c.write(headers(1, STATUS_200, END))
  assert.deepEqual(await ex.ended(), ['connect', 'headers 200', 'complete'])
})
