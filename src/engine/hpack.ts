/**
 * HPACK (RFC 7541) as a load generator's HTTP/2 client needs it
 * (h2-client.ts). The encoder uses only the static table and literals
 * "without indexing", never Huffman: valid for any server, and a request's
 * block is built once per dispatch options object and reused. The decoder
 * is complete (dynamic table with eviction and size updates, Huffman),
 * because servers use both. Decoded fields are raw Buffers as undici hands
 * them over ([name, value, ...]); an entry of either table is one Buffer
 * shared by every block that refers to it, so an indexed field costs no
 * allocation; and a block that changes nothing in the dynamic table, seen
 * again, need not be decoded again (BlockCache).
 */

import { headerListError } from './h2-limits.js'

/** A block that does not follow RFC 7541: the connection cannot go on (COMPRESSION_ERROR). */
export class HpackError extends Error {
  readonly code = 'HTTP2_COMPRESSION_ERROR'
}

const STATIC: ReadonlyArray<readonly [string, string]> = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
]

/** A table entry: name and value as Buffers, and its RFC size (octets + 32). */
interface Entry {
  readonly name: Buffer
  readonly value: Buffer
  readonly size: number
}

const entry = (name: Buffer, value: Buffer): Entry => ({ name, value, size: name.length + value.length + 32 })
const STATIC_ENTRIES: readonly Entry[] = STATIC.map(([n, v]) => entry(Buffer.from(n, 'latin1'), Buffer.from(v, 'latin1')))

// ---- encoding ----

/** Static index of a full field, and of a name (first occurrence). */
const STATIC_FIELD = new Map(STATIC.map(([n, v], i) => [`${n}\0${v}`, i + 1] as const))
const STATIC_NAME = new Map<string, number>()
STATIC.forEach(([n], i) => {
  if (!STATIC_NAME.has(n)) STATIC_NAME.set(n, i + 1)
})

/** One header block for `fields` ([name, value] with lower-case names): static indices and literals without indexing. */
export function encodeBlock(fields: ReadonlyArray<readonly [string, string]>): Buffer {
  const out: number[] = []
  for (const [name, value] of fields) {
    const full = STATIC_FIELD.get(`${name}\0${value}`)
    if (full !== undefined) {
      writeInt(out, full, 7, 0x80)
      continue
    }
    const index = STATIC_NAME.get(name)
    // Literal without indexing (0000xxxx): a name from the static table, or a literal name.
    writeInt(out, index ?? 0, 4, 0x00)
    if (index === undefined) writeString(out, name)
    writeString(out, value)
  }
  return Buffer.from(out)
}

function writeInt(out: number[], value: number, prefixBits: number, first: number): void {
  const max = (1 << prefixBits) - 1
  if (value < max) {
    out.push(first | value)
    return
  }
  out.push(first | max)
  let rest = value - max
  while (rest >= 128) {
    out.push((rest & 0x7f) | 0x80)
    rest = Math.floor(rest / 128)
  }
  out.push(rest)
}

function writeString(out: number[], s: string): void {
  const bytes = Buffer.from(s, 'latin1')
  writeInt(out, bytes.length, 7, 0x00)
  for (const b of bytes) out.push(b)
}

// ---- decoding ----

export class HpackDecoder {
  /** Newest first. */
  readonly #dynamic: Entry[] = []
  #size = 0
  /** Moves on at every change of the dynamic table (an insertion, a size update): what a cached block's fields depend on. */
  #generation = 0
  /** The table size the decoder's peer may use at most (what we announced: SETTINGS_HEADER_TABLE_SIZE). */
  readonly #maxAllowed: number
  /** The size the peer chose with its last size update. */
  #max: number

  constructor(maxTableSize = 4096) {
    this.#maxAllowed = maxTableSize
    this.#max = maxTableSize
  }

  /** The dynamic table's state: a block that left it unchanged decodes the same way while this stays the same (BlockCache). */
  get generation(): number {
    return this.#generation
  }

  /** The dynamic table's size in RFC octets. */
  get tableSize(): number {
    return this.#size
  }

  /** The dynamic table, newest first, as text. */
  entries(): Array<[string, string]> {
    return this.#dynamic.map((e) => [e.name.toString('latin1'), e.value.toString('latin1')])
  }

  /**
   * Decodes one complete header block to [name, value, ...] in the order
   * sent; throws HpackError when it is malformed, and the header-list error
   * once its fields add up to more than `maxList` (RFC 9113 6.5.2's size:
   * a block of one-octet references to a large entry is small on the wire
   * and huge decoded).
   */
  decode(block: Buffer, maxList = Number.POSITIVE_INFINITY): Buffer[] {
    const raw: Buffer[] = []
    const cursor = { at: 0 }
    const end = block.length
    let fieldsSeen = false
    let listSize = 0
    while (cursor.at < end) {
      const b = block[cursor.at]!
      let name: Buffer
      let value: Buffer
      if (b & 0x80) {
        const e = this.#entry(readInt(block, cursor, 7))
        name = e.name
        value = e.value
      } else if (b & 0x40) {
        const index = readInt(block, cursor, 6)
        name = index === 0 ? readString(block, cursor) : this.#entry(index).name
        value = readString(block, cursor)
        this.#insert(entry(name, value))
      } else if (b & 0x20) {
        // A size update must come before any field of the block (RFC 7541 4.2).
        if (fieldsSeen) throw new HpackError('dynamic table size update after a field')
        const max = readInt(block, cursor, 5)
        if (max > this.#maxAllowed) throw new HpackError(`dynamic table size ${max} above ${this.#maxAllowed}`)
        this.#max = max
        this.#evict(0)
        this.#generation++
        continue
      } else {
        // Literal without indexing (0000) or never indexed (0001): the same to a decoder.
        const index = readInt(block, cursor, 4)
        name = index === 0 ? readString(block, cursor) : this.#entry(index).name
        value = readString(block, cursor)
      }
      fieldsSeen = true
      listSize += name.length + value.length + 32
      if (listSize > maxList) throw headerListError(maxList)
      raw.push(name, value)
    }
    return raw
  }

  #entry(index: number): Entry {
    if (index === 0) throw new HpackError('index 0')
    if (index <= STATIC_ENTRIES.length) return STATIC_ENTRIES[index - 1]!
    const e = this.#dynamic[index - STATIC_ENTRIES.length - 1]
    if (e === undefined) throw new HpackError(`index ${index} beyond the tables`)
    return e
  }

  #insert(e: Entry): void {
    this.#generation++
    // An entry larger than the table empties it and is not added (RFC 7541 4.4).
    this.#evict(e.size)
    if (e.size > this.#max) return
    // Copied: the block it came from is a view of a socket read, which must not be kept alive by the table.
    this.#dynamic.unshift({ name: Buffer.from(e.name), value: Buffer.from(e.value), size: e.size })
    this.#size += e.size
  }

  /** Evicts the oldest entries until `room` more octets fit. */
  #evict(room: number): void {
    const d = this.#dynamic
    while (d.length > 0 && this.#size + room > this.#max) this.#size -= d.pop()!.size
  }
}

/**
 * The last few header blocks that changed nothing in a decoder's dynamic
 * table (only indexed fields and literals without indexing), by their
 * octets: such a block decodes to the same fields for as long as the table
 * stays as it was (HpackDecoder.generation). A load generator reads the
 * same one or two blocks over and over (nghttpd's answer, after its first,
 * is ten octets of indices and a content-length; a gRPC server's headers
 * and trailers), so most blocks cost a comparison of a few octets and no
 * allocation instead of a decode and an array of fields.
 */
export class BlockCache<T> {
  readonly #entries: Array<{ readonly bytes: Buffer; readonly generation: number; readonly value: T }> = []
  #next = 0

  constructor(
    readonly size = 4,
    /** Longer blocks are not kept (nor compared). */
    readonly maxBytes = 256,
  ) {}

  /** What was stored for the octets buf[start, end) at this generation of the table, if anything. */
  get(buf: Buffer, start: number, end: number, generation: number): T | undefined {
    const n = end - start
    const entries = this.#entries
    for (let k = 0; k < entries.length; k++) {
      const e = entries[k]!
      if (e.generation !== generation || e.bytes.length !== n) continue
      const bytes = e.bytes
      let i = 0
      while (i < n && bytes[i] === buf[start + i]) i++
      if (i === n) return e.value
    }
    return undefined
  }

  /** Keeps `value` for a copy of buf[start, end), in place of the oldest entry when full. */
  set(buf: Buffer, start: number, end: number, generation: number, value: T): void {
    if (end - start > this.maxBytes) return
    const e = { bytes: Buffer.from(buf.subarray(start, end)), generation, value }
    if (this.#entries.length < this.size) this.#entries.push(e)
    else {
      this.#entries[this.#next] = e
      this.#next = (this.#next + 1) % this.size
    }
  }
}

function readInt(buf: Buffer, cursor: { at: number }, prefixBits: number): number {
  const max = (1 << prefixBits) - 1
  let value = buf[cursor.at++]! & max
  if (value < max) return value
  let shift = 0
  for (;;) {
    if (cursor.at >= buf.length) throw new HpackError('integer runs past the block')
    const b = buf[cursor.at++]!
    value += (b & 0x7f) * 2 ** shift
    shift += 7
    if ((b & 0x80) === 0) break
    if (shift > 28) throw new HpackError('integer too large')
  }
  if (value > 0x7fffffff) throw new HpackError('integer too large')
  return value
}

function readString(buf: Buffer, cursor: { at: number }): Buffer {
  if (cursor.at >= buf.length) throw new HpackError('string runs past the block')
  const huffman = (buf[cursor.at]! & 0x80) !== 0
  const length = readInt(buf, cursor, 7)
  const start = cursor.at
  const end = start + length
  if (end > buf.length) throw new HpackError('string runs past the block')
  cursor.at = end
  return huffman ? huffmanDecode(buf, start, end) : buf.subarray(start, end)
}

// ---- Huffman (RFC 7541 Appendix B) ----

/**
 * Code lengths of symbols 0-255 and EOS (256), from RFC 7541 Appendix B.
 * The code is canonical (codes of one length are consecutive, in symbol
 * order, and each length continues from the last), so the lengths define it.
 */
const CODE_LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11,
  10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7,
  8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23,
  22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23,
  23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26,
  27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27,
  27, 27, 26, 30,
]
const EOS = 256
const MAX_CODE_BITS = 30

/** Canonical decoding tables: per length, the first code, and where its symbols start in SYMBOLS. */
const FIRST_CODE = new Array<number>(MAX_CODE_BITS + 1).fill(0)
const COUNT = new Array<number>(MAX_CODE_BITS + 1).fill(0)
const OFFSET = new Array<number>(MAX_CODE_BITS + 1).fill(0)
const SYMBOLS: number[] = []
/** The code of each symbol (tests check it against the RFC's). */
export const HUFFMAN_CODES: readonly number[] = (() => {
  const order = CODE_LENGTHS.map((len, sym) => ({ len, sym })).sort((a, b) => a.len - b.len || a.sym - b.sym)
  const codes = new Array<number>(CODE_LENGTHS.length)
  let code = 0
  let prevLen = order[0]!.len
  order.forEach(({ len, sym }, i) => {
    if (i > 0) code = (code + 1) * 2 ** (len - prevLen)
    prevLen = len
    codes[sym] = code
    if (COUNT[len] === 0) {
      FIRST_CODE[len] = code
      OFFSET[len] = SYMBOLS.length
    }
    COUNT[len]!++
    SYMBOLS.push(sym)
  })
  return codes
})()

/**
 * Decodes a Huffman string bit by bit against the canonical tables. The
 * padding must be fewer than 8 bits, all ones (a prefix of EOS); EOS itself
 * may not appear (RFC 7541 5.2).
 */
export function huffmanDecode(buf: Buffer, start: number, end: number): Buffer {
  const out = Buffer.allocUnsafe(Math.ceil(((end - start) * 8) / 5))
  let n = 0
  let code = 0
  let len = 0
  for (let i = start; i < end; i++) {
    const byte = buf[i]!
    for (let bit = 7; bit >= 0; bit--) {
      code = code * 2 + ((byte >> bit) & 1)
      len++
      const index = code - FIRST_CODE[len]!
      if (COUNT[len]! > 0 && index >= 0 && index < COUNT[len]!) {
        const sym = SYMBOLS[OFFSET[len]! + index]!
        if (sym === EOS) throw new HpackError('EOS in a Huffman string')
        out[n++] = sym
        code = 0
        len = 0
      } else if (len >= MAX_CODE_BITS) throw new HpackError('invalid Huffman code')
    }
  }
  if (len > 7 || code !== 2 ** len - 1) throw new HpackError('invalid Huffman padding')
  return out.subarray(0, n)
}

/** Huffman-encodes `s` (tests, to build blocks a server would send). */
export function huffmanEncode(bytes: Buffer): Buffer {
  const out: number[] = []
  let acc = 0
  let bits = 0
  for (const b of bytes) {
    const len = CODE_LENGTHS[b]!
    const code = HUFFMAN_CODES[b]!
    for (let i = len - 1; i >= 0; i--) {
      acc = (acc << 1) | (Math.floor(code / 2 ** i) & 1)
      if (++bits === 8) {
        out.push(acc)
        acc = 0
        bits = 0
      }
    }
  }
  if (bits > 0) out.push((acc << (8 - bits)) | ((1 << (8 - bits)) - 1))
  return Buffer.from(out)
}
