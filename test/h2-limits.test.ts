/**
 * The HTTP/2 client's parts that need no peer, in process: the limits'
 * words (engine/h2-limits.ts: the size a person reads, each error's kind,
 * GOAWAY code and message naming its flag), RFC 9113's error code names,
 * the frame reader's edges (a frame split across reads, one too large,
 * padding and priority fields), and an HPACK size update moving the
 * decoder's generation (the block cache's key).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { codeName, contentEnd, contentStart, Flag, FrameReader, H2Code } from '../src/engine/h2-frames.js'
import { continuationError, DEFAULT_H2_LIMITS, floodError, flowControlError, headerListError, octets } from '../src/engine/h2-limits.js'
import { HpackDecoder } from '../src/engine/hpack.js'

test('octets: whole KiB and MiB by their unit, anything else in octets', () => {
  assert.deepEqual([65_536, 1024, 1024 * 1024, 3 * 1024 * 1024, 1536 * 1024, 1000, 1025, 100, 1023].map(octets), [
    '64 KiB',
    '1 KiB',
    '1 MiB',
    '3 MiB',
    '1536 KiB',
    '1000 octets',
    '1025 octets',
    '100 octets',
    '1023 octets',
  ])
})

test("the limits' errors: the kind a report counts, the GOAWAY code, the flag that raises each", () => {
  const shown = (e: { code: string; h2Code: number; message: string }) => [e.code, e.h2Code, e.message]
  assert.deepEqual(shown(headerListError(65_536)), [
    'h2: header list over 64 KiB',
    H2Code.ENHANCE_YOUR_CALM,
    'h2: header list over 64 KiB (--h2-max-header-list raises it)',
  ])
  assert.deepEqual(shown(continuationError(8)), [
    'h2: more than 8 CONTINUATION frames',
    H2Code.ENHANCE_YOUR_CALM,
    'h2: more than 8 CONTINUATION frames in one header block (--h2-max-continuations raises it)',
  ])
  assert.deepEqual(shown(floodError('PING', 1000)), [
    'h2: PING flood',
    H2Code.ENHANCE_YOUR_CALM,
    'h2: PING flood (more than 1000 control frames owed while the server did not read; --h2-max-owed-frames raises it)',
  ])
  assert.deepEqual(shown(flowControlError('why')), ['h2: flow-control error', H2Code.FLOW_CONTROL_ERROR, 'why'])
  assert.deepEqual(DEFAULT_H2_LIMITS, { maxHeaderList: 65_536, headerTable: 4096, maxContinuations: 8, maxOwedFrames: 1000 })
})

test('codeName: every RFC 9113 error code by its name, an unknown one in hex', () => {
  assert.deepEqual(
    Array.from({ length: 15 }, (_, i) => codeName(i)),
    [
      'NO_ERROR',
      'PROTOCOL_ERROR',
      'INTERNAL_ERROR',
      'FLOW_CONTROL_ERROR',
      'SETTINGS_TIMEOUT',
      'STREAM_CLOSED',
      'FRAME_SIZE_ERROR',
      'REFUSED_STREAM',
      'CANCEL',
      'COMPRESSION_ERROR',
      'CONNECT_ERROR',
      'ENHANCE_YOUR_CALM',
      'INADEQUATE_SECURITY',
      'HTTP_1_1_REQUIRED',
      '0xe',
    ],
  )
})

/** The frames a reader hands over, as [type, flags, stream, payload as hex]. */
function framesOf(chunks: Buffer[], max?: number): Array<[number, number, number, string]> {
  const seen: Array<[number, number, number, string]> = []
  const reader = new FrameReader({ onFrame: (type, flags, id, buf, start, end) => seen.push([type, flags, id, buf.subarray(start, end).toString('hex')]) }, max)
  for (const c of chunks) reader.execute(c)
  return seen
}

const raw = (length: number, type: number, flags: number, stream: number, payload: string): Buffer =>
  Buffer.concat([Buffer.from([length >> 16, (length >> 8) & 0xff, length & 0xff, type, flags]), Buffer.from([0, 0, 0, stream]), Buffer.from(payload, 'hex')])

test('FrameReader: frames split anywhere across reads come out whole and in order; the stream id without its reserved bit', () => {
  const two = Buffer.concat([raw(3, 0, 1, 1, 'aabbcc'), raw(0, 4, 1, 0, ''), raw(2, 0, 0, 3, 'ddee')])
  two[5] = 0x80 // the reserved bit of the first frame's stream id
  const whole = framesOf([two])
  assert.deepEqual(whole, [
    [0, 1, 1, 'aabbcc'],
    [4, 1, 0, ''],
    [0, 0, 3, 'ddee'],
  ])
  for (let cut = 1; cut < two.length; cut++) assert.deepEqual(framesOf([two.subarray(0, cut), two.subarray(cut)]), whole, `cut at ${cut}`)
  assert.deepEqual(framesOf([...two].map((b) => Buffer.from([b]))), whole)
})

test('FrameReader: a frame above the size we allow is a FRAME_SIZE_ERROR as soon as its header is read; one at it is taken', () => {
  assert.deepEqual(framesOf([raw(4, 0, 0, 1, 'aabbccdd')], 4), [[0, 0, 1, 'aabbccdd']])
  assert.throws(
    () => framesOf([raw(5, 0, 0, 1, '')], 4),
    (e: { h2Code: number; message: string }) => e.h2Code === H2Code.FRAME_SIZE_ERROR && e.message === 'frame of 5 octets above 4',
  )
})

test('contentStart / contentEnd: the pad length octet, the priority fields (HEADERS only), the padding, at their edges', () => {
  const buf = Buffer.from([2, 9, 9, 9, 9, 9, 0xaa, 0xbb, 0, 0])
  // Neither flag: the whole frame.
  assert.deepEqual([contentStart(0, 10, 0, true), contentEnd(buf, 0, 10, 0, true)], [0, 10])
  // PADDED: after the pad length, before its 2 octets of padding.
  assert.deepEqual([contentStart(0, 10, Flag.PADDED, false), contentEnd(buf, 0, 10, Flag.PADDED, false)], [1, 8])
  // PADDED and PRIORITY on HEADERS: 5 more octets skipped; on DATA the priority flag means nothing.
  assert.deepEqual([contentStart(0, 10, Flag.PADDED | Flag.PRIORITY, true), contentEnd(buf, 0, 10, Flag.PADDED | Flag.PRIORITY, true)], [6, 8])
  assert.deepEqual([contentStart(0, 10, Flag.PRIORITY, false), contentEnd(buf, 0, 10, Flag.PRIORITY, false)], [0, 10])
  assert.deepEqual([contentStart(0, 5, Flag.PRIORITY, true), contentEnd(buf, 0, 5, Flag.PRIORITY, true)], [5, 5])
  // Padding that fills the frame exactly, and one octet more.
  assert.equal(contentEnd(Buffer.from([1, 0]), 0, 2, Flag.PADDED, false), 1)
  assert.throws(() => contentEnd(Buffer.from([2, 0]), 0, 2, Flag.PADDED, false), /padding longer than the frame/)
  assert.throws(() => contentStart(3, 3, Flag.PADDED, false), /padded frame without a pad length/)
  assert.equal(contentStart(3, 4, Flag.PADDED, false), 4)
})

test("HPACK: a size update moves the decoder's generation, as an insertion does; a block of indexed fields does not", () => {
  const d = new HpackDecoder()
  const g0 = d.generation
  d.decode(Buffer.from([0x88]))
  assert.equal(d.generation, g0)
  d.decode(Buffer.from([0x3f, 0xe1, 0x1f, 0x88])) // size update to 4,096, then :status 200
  assert.equal(d.generation, g0 + 1)
  assert.throws(() => new HpackDecoder(100).decode(Buffer.from([0x3f, 70])), { message: 'dynamic table size 101 above 100' })
  assert.throws(() => d.decode(Buffer.from([0x88, 0x20])), { message: 'dynamic table size update after a field' })
})
