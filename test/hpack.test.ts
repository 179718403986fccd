/**
 * HPACK (engine/hpack.ts) against RFC 7541 Appendix C: the request examples
 * without and with Huffman (C.3, C.4) and the response examples with a
 * 256-octet table that evicts (C.5, C.6), each chain on one decoder with the
 * dynamic table checked after every block; the Huffman code against codes
 * printed in Appendix B; the encoder's blocks decoded back; malformed blocks
 * refused with HpackError; the decoder's generation and the block cache that
 * relies on it.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { BlockCache, encodeBlock, HpackDecoder, HpackError, HUFFMAN_CODES, huffmanDecode, huffmanEncode } from '../src/engine/hpack.js'
import { seededRandom } from '../src/core/random.js'

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex')
const fields = (raw: Buffer[]): Array<[string, string]> => {
  const out: Array<[string, string]> = []
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i]!.toString('latin1'), raw[i + 1]!.toString('latin1')])
  return out
}

const REQ1: Array<[string, string]> = [
  [':method', 'GET'],
  [':scheme', 'http'],
  [':path', '/'],
  [':authority', 'www.example.com'],
]
const REQ2: Array<[string, string]> = [...REQ1, ['cache-control', 'no-cache']]
const REQ3: Array<[string, string]> = [
  [':method', 'GET'],
  [':scheme', 'https'],
  [':path', '/index.html'],
  [':authority', 'www.example.com'],
  ['custom-key', 'custom-value'],
]
const REQ_TABLES: Array<Array<[string, string]>> = [
  [[':authority', 'www.example.com']],
  [
    ['cache-control', 'no-cache'],
    [':authority', 'www.example.com'],
  ],
  [
    ['custom-key', 'custom-value'],
    ['cache-control', 'no-cache'],
    [':authority', 'www.example.com'],
  ],
]
const REQ_SIZES = [57, 110, 164]

const DATE1 = 'Mon, 21 Oct 2013 20:13:21 GMT'
const DATE2 = 'Mon, 21 Oct 2013 20:13:22 GMT'
const COOKIE = 'foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1'
const RES1: Array<[string, string]> = [
  [':status', '302'],
  ['cache-control', 'private'],
  ['date', DATE1],
  ['location', 'https://www.example.com'],
]
const RES2: Array<[string, string]> = [[':status', '307'], ...RES1.slice(1)]
const RES3: Array<[string, string]> = [
  [':status', '200'],
  ['cache-control', 'private'],
  ['date', DATE2],
  ['location', 'https://www.example.com'],
  ['content-encoding', 'gzip'],
  ['set-cookie', COOKIE],
]
const RES_TABLES: Array<Array<[string, string]>> = [
  [
    ['location', 'https://www.example.com'],
    ['date', DATE1],
    ['cache-control', 'private'],
    [':status', '302'],
  ],
  [
    [':status', '307'],
    ['location', 'https://www.example.com'],
    ['date', DATE1],
    ['cache-control', 'private'],
  ],
  [
    ['set-cookie', COOKIE],
    ['content-encoding', 'gzip'],
    ['date', DATE2],
  ],
]
const RES_SIZES = [222, 222, 215]

function chain(size: number, blocks: string[], expected: Array<Array<[string, string]>>, tables: Array<Array<[string, string]>>, sizes: number[]): void {
  const decoder = new HpackDecoder(size)
  blocks.forEach((block, i) => {
    assert.deepEqual(fields(decoder.decode(hex(block))), expected[i], `block ${i + 1}`)
    assert.deepEqual(decoder.entries(), tables[i], `table after block ${i + 1}`)
    assert.equal(decoder.tableSize, sizes[i])
  })
}

test('C.3: requests without Huffman, one dynamic table across the three', () => {
  chain(
    4096,
    [
      '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
      '8286 84be 5808 6e6f 2d63 6163 6865',
      '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
    ],
    [REQ1, REQ2, REQ3],
    REQ_TABLES,
    REQ_SIZES,
  )
})

test('C.4: the same requests with Huffman', () => {
  chain(
    4096,
    ['8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff', '8286 84be 5886 a8eb 1064 9cbf', '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf'],
    [REQ1, REQ2, REQ3],
    REQ_TABLES,
    REQ_SIZES,
  )
})

test('C.5: responses without Huffman on a 256-octet table: entries are evicted', () => {
  chain(
    256,
    [
      '4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
      '4803 3330 37c1 c0bf',
      '88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31',
    ],
    [RES1, RES2, RES3],
    RES_TABLES,
    RES_SIZES,
  )
})

test('C.6: the same responses with Huffman', () => {
  chain(
    256,
    [
      '4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3',
      '4883 640e ffc1 c0bf',
      '88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07',
    ],
    [RES1, RES2, RES3],
    RES_TABLES,
    RES_SIZES,
  )
})

test('the Huffman code is the one Appendix B prints', () => {
  // (symbol, code) pairs read from RFC 7541 Appendix B, across the code lengths.
  const printed: Array<[number, number]> = [
    [0, 0x1ff8],
    [32, 0x14],
    [48, 0x0],
    [97, 0x3],
    [126, 0x1ffd],
    [127, 0xffffffc],
    [128, 0xfffe6],
    [200, 0x3ffffe2],
    [255, 0x3ffffee],
    [256, 0x3fffffff],
  ]
  for (const [sym, code] of printed) assert.equal(HUFFMAN_CODES[sym], code, `symbol ${sym}`)
  const r = seededRandom(7)
  for (let i = 0; i < 200; i++) {
    const bytes = Buffer.from(Array.from({ length: Math.floor(r() * 40) }, () => Math.floor(r() * 256)))
    const coded = huffmanEncode(bytes)
    assert.deepEqual(huffmanDecode(coded, 0, coded.length), bytes)
  }
})

test('a table size update empties the table; updates above the allowed size, after a field, and bad indices are refused', () => {
  const decoder = new HpackDecoder()
  decoder.decode(hex('8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d'))
  assert.equal(decoder.entries().length, 1)
  assert.deepEqual(fields(decoder.decode(hex('20 82'))), [[':method', 'GET']])
  assert.equal(decoder.tableSize, 0)
  for (const bad of ['80', 'be', '3fe21f', '400a6375', '41', '8220', 'ff80808080808001', '008180']) {
    assert.throws(() => new HpackDecoder().decode(hex(bad)), HpackError, bad)
  }
  // Padding longer than 7 bits, or not all ones, and EOS itself.
  for (const bad of [[0x1f, 0xff], [0x00], [0xff, 0xff, 0xff, 0xff]]) assert.throws(() => huffmanDecode(Buffer.from(bad), 0, bad.length), HpackError)
})

test('the encoder: static indices and literals without indexing, which a decoder reads back and never adds to its table', () => {
  const sent: Array<[string, string]> = [
    [':method', 'POST'],
    [':scheme', 'http'],
    [':authority', '127.0.0.1:8080'],
    [':path', '/pkg.Svc/Call'],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
    ['x-long', 'v'.repeat(300)],
  ]
  const block = encodeBlock(sent)
  assert.equal(block[0], 0x83, ':method POST is static index 3')
  const decoder = new HpackDecoder()
  assert.deepEqual(fields(decoder.decode(block)), sent)
  assert.equal(decoder.tableSize, 0)
})

test('the generation moves only when the dynamic table changes, and a cached block is found only for the same octets at the same generation', () => {
  const decoder = new HpackDecoder()
  const cache = new BlockCache<string>(2)
  // Literal with incremental indexing of a new name: the table changes.
  const insert = (name: string, value: string): Buffer =>
    Buffer.concat([Buffer.from([0x40, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)])
  decoder.decode(insert('x-a', 'one'))
  const g1 = decoder.generation
  // Indexed (62: the newest dynamic entry) and a literal without indexing: the table does not change.
  const same = hex('be 0f0d 0133')
  assert.deepEqual(fields(decoder.decode(same)), [
    ['x-a', 'one'],
    ['content-length', '3'],
  ])
  assert.equal(decoder.generation, g1)
  const read = Buffer.concat([hex('ffff'), same, hex('ee')])
  cache.set(read, 2, 2 + same.length, g1, 'x-a: one')
  assert.equal(cache.get(Buffer.from(same), 0, same.length, g1), 'x-a: one', 'the same octets elsewhere in another read')
  assert.equal(cache.get(hex('be 0f0d 0134'), 0, 5, g1), undefined, 'other octets')
  read.fill(0) // a copy was kept, not a view of the read
  assert.equal(cache.get(same, 0, same.length, g1), 'x-a: one')
  // A new entry shifts the indices: the same octets now mean another field, and the cache no longer answers them.
  decoder.decode(insert('x-b', 'two'))
  assert.notEqual(decoder.generation, g1)
  assert.equal(cache.get(same, 0, same.length, decoder.generation), undefined)
  assert.deepEqual(fields(decoder.decode(same)), [
    ['x-b', 'two'],
    ['content-length', '3'],
  ])
  // A size update changes the table too; two more entries push out the oldest of a cache of two.
  const g2 = decoder.generation
  decoder.decode(hex('3fe11f'))
  assert.notEqual(decoder.generation, g2)
  cache.set(hex('82'), 0, 1, 7, 'a')
  cache.set(hex('83'), 0, 1, 7, 'b')
  assert.equal(cache.get(same, 0, same.length, g1), undefined, 'evicted')
  assert.equal(cache.get(hex('82'), 0, 1, 7), 'a')
  assert.equal(cache.get(hex('83'), 0, 1, 7), 'b')
})
