/**
 * hedgebench's HTTP/2 client (engine/h2-client.ts, h2-frames.ts, hpack.ts)
 * frame by frame against a scripted peer (helpers/h2-peer.ts): what it reads
 * inside frames. Padding on DATA and HEADERS at its edges (none, exactly
 * filling the frame, one octet more than fits: PROTOCOL_ERROR); header blocks
 * in HEADERS + CONTINUATION, both ways, and any frame inside one a
 * PROTOCOL_ERROR; HPACK as a server uses it (RFC 7541): the static table's
 * last entries, the dynamic table filled exactly, evicted and emptied by a
 * size update, each state read back through the fields of the next answer
 * on the same connection.
 */
import assert from 'node:assert/strict'
import { Flag, FrameType } from '../src/engine/h2-frames.js'
import type { H2Client } from '../src/engine/h2-client.js'
import {
  connectionError,
  continuation,
  data,
  Exchange,
  headers,
  indexed,
  literal,
  opened,
  padded,
  type PeerConnection,
  peerTest,
  ping,
  setUp,
  STATUS_200,
} from './helpers/h2-peer.js'

const END = Flag.END_HEADERS | Flag.END_STREAM

// ---- padding ----

peerTest('DATA padded with 0 octets, with 3, and with padding filling the frame exactly: the content without the padding', async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  c.write(headers(1, STATUS_200))
  c.write(data(1, padded(Buffer.from('hello'), 0), Flag.PADDED), data(1, padded(Buffer.from('world'), 3), Flag.PADDED))
  // Length 5, pad length 4: no content at all, and the stream ends.
  c.write(data(1, padded(Buffer.alloc(0), 4), Flag.PADDED | Flag.END_STREAM))
  assert.deepEqual(await ex.ended(), ['connect', 'headers 200', 'data hello', 'data world', 'complete'])
})

peerTest('DATA whose pad length is one more than fits: GOAWAY PROTOCOL_ERROR', async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  c.write(headers(1, STATUS_200))
  // Length 5: the pad length octet and 4 octets, which it says are 5 of padding.
  c.write(data(1, padded(Buffer.alloc(0), 4, 5), Flag.PADDED))
  await connectionError(c, ex, 'PROTOCOL_ERROR', ['connect', 'headers 200'])
})

peerTest('DATA with PADDED and no room for the pad length: GOAWAY PROTOCOL_ERROR', async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  c.write(headers(1, STATUS_200), data(1, Buffer.alloc(0), Flag.PADDED))
  await connectionError(c, ex, 'PROTOCOL_ERROR', ['connect', 'headers 200'])
})

peerTest('HEADERS padded with 0 octets, and with PRIORITY and padding filling the rest exactly: the block read', async (t, transport) => {
  const { client, c, ex } = await opened(t, transport)
  c.write(headers(1, padded(STATUS_200, 0), END | Flag.PADDED))
  assert.deepEqual(await ex.ended(), ['connect', 'headers 200', 'complete'])
  const second = new Exchange(client)
  await c.request(3)
  // Pad length, 5 octets of priority (stream dependency and weight), the block, 3 octets of padding.
  const payload = Buffer.concat([Buffer.from([3, 0, 0, 0, 0, 16]), STATUS_200, Buffer.alloc(3)])
  c.write(headers(3, payload, END | Flag.PADDED | Flag.PRIORITY))
  assert.deepEqual(await second.ended(), ['connect', 'headers 200', 'complete'])
})

peerTest('HEADERS whose padding fills it exactly (an empty fragment), the block in its CONTINUATION', async (t, transport) => {
  const { client, c, ex } = await opened(t, transport)
  c.write(headers(1, padded(Buffer.alloc(0), 2), Flag.END_STREAM | Flag.PADDED), continuation(1, STATUS_200, Flag.END_HEADERS))
  assert.deepEqual(await ex.ended(), ['connect', 'headers 200', 'complete'])
  const second = new Exchange(client)
  await c.request(3)
  const payload = Buffer.concat([Buffer.from([1, 0, 0, 0, 0, 16]), Buffer.alloc(1)])
  c.write(headers(3, payload, Flag.END_STREAM | Flag.PADDED | Flag.PRIORITY), continuation(3, STATUS_200, Flag.END_HEADERS))
  assert.deepEqual(await second.ended(), ['connect', 'headers 200', 'complete'])
})

for (const priority of [false, true]) {
  peerTest(`HEADERS${priority ? ' with PRIORITY' : ''} whose pad length is one more than fits: GOAWAY PROTOCOL_ERROR`, async (t, transport) => {
    const { c, ex } = await opened(t, transport)
    // After the pad length (and the 5 octets of priority), 2 octets: a pad length of 3.
    const payload = Buffer.concat([Buffer.from([3]), priority ? Buffer.from([0, 0, 0, 0, 16]) : Buffer.alloc(0), STATUS_200, Buffer.alloc(1)])
    c.write(headers(1, payload, END | Flag.PADDED | (priority ? Flag.PRIORITY : 0)))
    await connectionError(c, ex, 'PROTOCOL_ERROR')
  })
}

// ---- header blocks in HEADERS + CONTINUATION ----

peerTest('a response block cut mid-field over HEADERS and two CONTINUATIONs, and trailers over HEADERS + CONTINUATION: assembled', async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  const block = Buffer.concat([STATUS_200, literal('x-first', 'one'), literal('x-second', 'two')])
  c.write(headers(1, block.subarray(0, 4), 0), continuation(1, block.subarray(4, 13)), continuation(1, block.subarray(13), Flag.END_HEADERS))
  c.write(data(1, 'body'))
  const trailers = literal('grpc-status', '0')
  c.write(headers(1, trailers.subarray(0, 5), Flag.END_STREAM), continuation(1, trailers.subarray(5), Flag.END_HEADERS))
  assert.deepEqual(await ex.ended(), ['connect', 'headers 200 x-first: one, x-second: two', 'data body', 'complete grpc-status: 0'])
})

/** Frames that may not come between a HEADERS without END_HEADERS and its last CONTINUATION. */
const INTERLEAVED: Array<[string, Buffer]> = [
  ['DATA on the same stream', data(1, 'x')],
  ['a PING', ping(Buffer.alloc(8))],
  ['an unknown frame type', Buffer.from('000000fa0000000000', 'hex')],
  ['HEADERS on the same stream', headers(1, STATUS_200)],
  ['CONTINUATION on another stream', continuation(3, STATUS_200, Flag.END_HEADERS)],
]
for (const [name, frame] of INTERLEAVED) {
  peerTest(`${name} inside a header block: GOAWAY PROTOCOL_ERROR`, async (t, transport) => {
    const { c, ex } = await opened(t, transport)
    c.write(headers(1, STATUS_200, 0), frame, continuation(1, literal('x-a', 'b'), Flag.END_HEADERS))
    await connectionError(c, ex, 'PROTOCOL_ERROR')
    assert.deepEqual(c.ofType(FrameType.PING), [], 'the PING inside the block is not answered')
  })
}

peerTest('CONTINUATION without a HEADERS before it: GOAWAY PROTOCOL_ERROR', async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  c.write(continuation(1, STATUS_200, Flag.END_HEADERS))
  await connectionError(c, ex, 'PROTOCOL_ERROR')
})

peerTest('a request block larger than a frame: HEADERS of 16,384 octets and its CONTINUATION, nothing between, the fields intact', async (t, transport) => {
  const { peer, client } = await setUp(t, transport)
  const big = 'v'.repeat(20_000)
  const ex = new Exchange(client, { path: '/big', headers: { 'x-big': big } })
  const c = await peer.connection()
  const req = await c.request(1)
  const block = c.frames.filter((f) => f.streamId === 1)
  assert.deepEqual(
    block.map((f) => [f.type, f.flags, f.payload.length <= 16_384]),
    [
      [FrameType.HEADERS, Flag.END_STREAM, true],
      [FrameType.CONTINUATION, Flag.END_HEADERS, true],
    ],
  )
  assert.equal(block[0]!.payload.length, 16_384)
  const at = c.frames.indexOf(block[0]!)
  assert.equal(c.frames[at + 1], block[1], 'the CONTINUATION right after its HEADERS')
  assert.deepEqual(req.fields!.slice(3), [
    [':path', '/big'],
    ['x-big', big],
  ])
  c.write(headers(1, STATUS_200, END))
  assert.deepEqual(await ex.ended(), ['connect', 'headers 200', 'complete'])
})

// ---- HPACK as a server uses it ----

/** A literal field with incremental indexing, new name (RFC 7541 6.2.1): it goes into the dynamic table. */
function indexing(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x40, name.length]), Buffer.from(name, 'latin1'), Buffer.from([value.length]), Buffer.from(value, 'latin1')])
}

/** A dynamic table size update (RFC 7541 6.3), 5-bit prefix integer. */
function sizeUpdate(size: number): Buffer {
  if (size < 31) return Buffer.from([0x20 | size])
  const out = [0x3f]
  let rest = size - 31
  while (rest >= 128) {
    out.push((rest & 0x7f) | 0x80)
    rest >>= 7
  }
  out.push(rest)
  return Buffer.from(out)
}

/** A field of exactly `size` RFC octets (name + value + 32), named `name` (3 letters). */
const sized = (name: string, size: number): [string, string] => [name, String.fromCharCode(97 + (size % 26)).repeat(size - 32 - name.length)]

/** Dispatches a request on the open connection, answers it with `block` (END_STREAM) and returns what its handler heard. */
async function answered(client: H2Client, c: PeerConnection, id: number, block: Buffer): Promise<string[]> {
  const ex = new Exchange(client)
  await c.request(id)
  c.write(headers(id, block, END))
  return ex.ended(`the answer on stream ${id}`)
}

peerTest("the static table's last entries: index 60 (via), 61 (www-authenticate) as a field and as a name", async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  // Literal without indexing, name index 61: 0000 1111, then 61 - 15 = 46.
  const block = Buffer.concat([STATUS_200, indexed(60), indexed(61), Buffer.from([0x0f, 46, 5]), Buffer.from('Basic')])
  c.write(headers(1, block, END))
  assert.deepEqual(await ex.ended(), ['connect', 'headers 200 via: , www-authenticate: , www-authenticate: Basic', 'complete'])
})

peerTest('index 62 with an empty dynamic table: GOAWAY COMPRESSION_ERROR', async (t, transport) => {
  const { c, ex } = await opened(t, transport)
  c.write(headers(1, Buffer.concat([STATUS_200, indexed(62)]), END))
  await connectionError(c, ex, 'COMPRESSION_ERROR')
})

peerTest(
  'the dynamic table at 100 octets: filled exactly by two entries, the oldest evicted by a third, an entry of 100 kept, one of 101 empties it',
  async (t, transport) => {
    const { client, c, ex } = await opened(t, transport)
    const [a, b, third] = [sized('x-a', 50), sized('x-b', 50), sized('x-c', 50)]
    const show = (f: [string, string]): string => `${f[0]}: ${f[1]}`
    // Stream 1: the table shrinks to 100, then two entries of 50 fill it exactly.
    c.write(headers(1, Buffer.concat([sizeUpdate(100), STATUS_200, indexing(...a), indexing(...b)]), END))
    assert.deepEqual(await ex.ended(), ['connect', `headers 200 ${show(a)}, ${show(b)}`, 'complete'])
    // Both still there: 62 is the newest.
    assert.deepEqual(await answered(client, c, 3, Buffer.concat([STATUS_200, indexed(62), indexed(63)])), [
      'connect',
      `headers 200 ${show(b)}, ${show(a)}`,
      'complete',
    ])
    // A third evicts the oldest (a): 62 is the third, 63 is b.
    assert.deepEqual(await answered(client, c, 5, Buffer.concat([STATUS_200, indexing(...third), indexed(62), indexed(63)])), [
      'connect',
      `headers 200 ${show(third)}, ${show(third)}, ${show(b)}`,
      'complete',
    ])
    // An entry of exactly 100 evicts both and is kept.
    const whole = sized('x-d', 100)
    assert.deepEqual(await answered(client, c, 7, Buffer.concat([STATUS_200, indexing(...whole), indexed(62)])), [
      'connect',
      `headers 200 ${show(whole)}, ${show(whole)}`,
      'complete',
    ])
    // One of 101 empties the table and is not added (RFC 7541 4.4): 62 is gone.
    const ex9 = new Exchange(client)
    await c.request(9)
    c.write(headers(9, Buffer.concat([STATUS_200, indexing(...sized('x-e', 101)), indexed(62)]), END))
    await connectionError(c, ex9, 'COMPRESSION_ERROR')
  },
)

peerTest('a dynamic table size update to 0 then back to 4,096 at the start of a block empties the table', async (t, transport) => {
  const { client, c, ex } = await opened(t, transport)
  const entry = indexing('x-kept', 'yes')
  c.write(headers(1, Buffer.concat([STATUS_200, entry]), END))
  assert.deepEqual(await ex.ended(), ['connect', 'headers 200 x-kept: yes', 'complete'])
  assert.deepEqual(await answered(client, c, 3, Buffer.concat([sizeUpdate(0), sizeUpdate(4096), STATUS_200])), ['connect', 'headers 200', 'complete'])
  const ex5 = new Exchange(client)
  await c.request(5)
  c.write(headers(5, Buffer.concat([STATUS_200, indexed(62)]), END))
  await connectionError(c, ex5, 'COMPRESSION_ERROR')
})

for (const [name, block] of [
  ['above the 4,096 octets we allow', Buffer.concat([sizeUpdate(4097), STATUS_200])],
  ['after a field', Buffer.concat([STATUS_200, sizeUpdate(0)])],
] as const) {
  peerTest(`a dynamic table size update ${name}: GOAWAY COMPRESSION_ERROR`, async (t, transport) => {
    const { c, ex } = await opened(t, transport)
    c.write(headers(1, block, END))
    await connectionError(c, ex, 'COMPRESSION_ERROR')
  })
}
