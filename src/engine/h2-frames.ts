/**
 * HTTP/2 frames (RFC 9113 section 4 and 6) for h2-client.ts: a reader that
 * cuts a byte stream into frames without copying (a frame split across
 * socket reads is the only copy), and the few frames a client writes.
 *
 * The reader hands each frame over as a range of the read (buffer, start,
 * end), not as a Buffer view: a view is an object per frame, and the
 * frames of a load generator's answers (a HEADERS block the client has
 * seen before, an empty DATA that ends a stream) mostly need none.
 */

export const FRAME_HEADER = 9
export const enum FrameType {
  DATA = 0x0,
  HEADERS = 0x1,
  PRIORITY = 0x2,
  RST_STREAM = 0x3,
  SETTINGS = 0x4,
  PUSH_PROMISE = 0x5,
  PING = 0x6,
  GOAWAY = 0x7,
  WINDOW_UPDATE = 0x8,
  CONTINUATION = 0x9,
}
export const enum Flag {
  END_STREAM = 0x1,
  ACK = 0x1,
  END_HEADERS = 0x4,
  PADDED = 0x8,
  PRIORITY = 0x20,
}
export const enum Setting {
  HEADER_TABLE_SIZE = 0x1,
  ENABLE_PUSH = 0x2,
  MAX_CONCURRENT_STREAMS = 0x3,
  INITIAL_WINDOW_SIZE = 0x4,
  MAX_FRAME_SIZE = 0x5,
  MAX_HEADER_LIST_SIZE = 0x6,
}
/** RFC 9113 section 7. */
export const enum H2Code {
  NO_ERROR = 0x0,
  PROTOCOL_ERROR = 0x1,
  INTERNAL_ERROR = 0x2,
  FLOW_CONTROL_ERROR = 0x3,
  FRAME_SIZE_ERROR = 0x6,
  REFUSED_STREAM = 0x7,
  CANCEL = 0x8,
  COMPRESSION_ERROR = 0x9,
  ENHANCE_YOUR_CALM = 0xb,
}

const CODE_NAMES = [
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
]

/** An error code's name as RFC 9113 gives it (unknown codes in hex). */
export function codeName(code: number): string {
  return CODE_NAMES[code] ?? `0x${code.toString(16)}`
}

export const CLIENT_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1')
export const DEFAULT_WINDOW = 65_535
export const DEFAULT_MAX_FRAME = 16_384
export const MAX_WINDOW = 0x7fffffff

/**
 * A frame the peer sent that breaks the protocol or one of our limits: the
 * connection (or, for a stream error, the stream) ends with `h2Code`.
 * `code` is the kind its requests' errors are counted under: the protocol's
 * one, or a limit's own name (h2-limits.ts), so a report says which.
 */
export class H2ProtocolError extends Error {
  constructor(
    message: string,
    readonly h2Code: number = H2Code.PROTOCOL_ERROR,
    readonly code: string = 'HTTP2_PROTOCOL_ERROR',
  ) {
    super(message)
  }
}

/** Receives each frame; its payload is buf[start, end), valid only during the call. */
export interface FrameSink {
  onFrame(type: number, flags: number, streamId: number, buf: Buffer, start: number, end: number): void
}

/** Cuts what a socket reads into frames, and refuses frames larger than we allow. */
export class FrameReader {
  #rest: Buffer | null = null

  constructor(
    readonly sink: FrameSink,
    readonly maxFrameSize: number = DEFAULT_MAX_FRAME,
  ) {}

  execute(chunk: Buffer): void {
    let buf = chunk
    if (this.#rest !== null) {
      buf = Buffer.concat([this.#rest, chunk])
      this.#rest = null
    }
    let at = 0
    const end = buf.length
    while (end - at >= FRAME_HEADER) {
      const length = (buf[at]! << 16) | (buf[at + 1]! << 8) | buf[at + 2]!
      if (length > this.maxFrameSize) throw new H2ProtocolError(`frame of ${length} octets above ${this.maxFrameSize}`, H2Code.FRAME_SIZE_ERROR)
      if (end - at - FRAME_HEADER < length) break
      const type = buf[at + 3]!
      const flags = buf[at + 4]!
      const streamId = buf.readUInt32BE(at + 5) & 0x7fffffff
      const start = at + FRAME_HEADER
      at = start + length
      this.sink.onFrame(type, flags, streamId, buf, start, at)
    }
    if (at < end) this.#rest = buf.subarray(at)
  }
}

/** A frame's 9-octet header written at `at` of `buf`. */
export function writeFrameHeader(buf: Buffer, at: number, length: number, type: number, flags: number, streamId: number): void {
  buf[at] = length >>> 16
  buf[at + 1] = (length >>> 8) & 0xff
  buf[at + 2] = length & 0xff
  buf[at + 3] = type
  buf[at + 4] = flags
  buf.writeUInt32BE(streamId, at + 5)
}

export function frame(type: number, flags: number, streamId: number, payload: Buffer | null): Buffer {
  const length = payload === null ? 0 : payload.length
  const buf = Buffer.allocUnsafe(FRAME_HEADER + length)
  writeFrameHeader(buf, 0, length, type, flags, streamId)
  if (payload !== null) payload.copy(buf, FRAME_HEADER)
  return buf
}

export function settingsFrame(settings: ReadonlyArray<readonly [number, number]>): Buffer {
  const payload = Buffer.allocUnsafe(settings.length * 6)
  settings.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6)
    payload.writeUInt32BE(value, i * 6 + 2)
  })
  return frame(FrameType.SETTINGS, 0, 0, payload)
}

export const SETTINGS_ACK = frame(FrameType.SETTINGS, Flag.ACK, 0, null)

export function windowUpdateFrame(streamId: number, increment: number): Buffer {
  const payload = Buffer.allocUnsafe(4)
  payload.writeUInt32BE(increment, 0)
  return frame(FrameType.WINDOW_UPDATE, 0, streamId, payload)
}

export function rstStreamFrame(streamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(4)
  payload.writeUInt32BE(code, 0)
  return frame(FrameType.RST_STREAM, 0, streamId, payload)
}

export function goawayFrame(lastStreamId: number, code: number): Buffer {
  const payload = Buffer.allocUnsafe(8)
  payload.writeUInt32BE(lastStreamId, 0)
  payload.writeUInt32BE(code, 4)
  return frame(FrameType.GOAWAY, 0, 0, payload)
}

/** Where the content of a DATA or HEADERS frame at [start, end) of a read begins: after its pad length (and, for HEADERS, its priority fields). */
export function contentStart(start: number, end: number, flags: number, priority: boolean): number {
  if ((flags & (Flag.PADDED | Flag.PRIORITY)) === 0) return start
  let at = start
  if (flags & Flag.PADDED) {
    if (end - start < 1) throw new H2ProtocolError('padded frame without a pad length')
    at++
  }
  if (priority && flags & Flag.PRIORITY) at += 5
  return at
}

/** Where it ends: before its padding. Throws when the padding (or the priority fields) do not fit in the frame. */
export function contentEnd(buf: Buffer, start: number, end: number, flags: number, priority: boolean): number {
  if ((flags & (Flag.PADDED | Flag.PRIORITY)) === 0) return end
  const from = contentStart(start, end, flags, priority)
  const to = flags & Flag.PADDED ? end - buf[start]! : end
  if (to < from) throw new H2ProtocolError('padding longer than the frame')
  return to
}
