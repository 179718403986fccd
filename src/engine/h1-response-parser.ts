/**
 * An HTTP/1.1 response parser for one connection (RFC 9112): the status
 * line and header block, then the body framed by Transfer-Encoding: chunked,
 * Content-Length, or the connection's close. It hands out views of the
 * bytes the socket read (header names and values, body chunks), never
 * copies, unless a header block or a chunk-size line is split across reads.
 *
 * Only what a load generator needs: 1xx answers are skipped (101 is an
 * error: no upgrades), no request pipelining (one response at a time), and
 * anything malformed is an error that ends the connection. Limits: a header
 * block of at most MAX_HEADER_BYTES, as undici's default maxHeaderSize.
 */

/** What the parser reports, in order: headers once, body chunks, then the end. */
export interface ResponseSink {
  /** Whether the answer's raw header views are wanted (else onResponseHeaders gets none: most answers are only counted). */
  wantsHeaders(status: number): boolean
  /** false: pause reading (the caller resumes the socket). */
  onResponseHeaders(status: number, rawHeaders: Buffer[], statusText: string): boolean
  onResponseBody(chunk: Buffer): boolean
  onResponseEnd(rawTrailers: Buffer[] | null): void
}

/** How the server framed the current response, and whether the connection outlives it. */
export interface ResponseFraming {
  /** The connection may carry another request after this response. */
  keepAlive: boolean
  /** From the server's Keep-Alive: timeout=N hint, ms; null if none. */
  keepAliveHintMs: number | null
}

export const MAX_HEADER_BYTES = 16 * 1024

const CR = 13
const LF = 10
const COLON = 58

const enum State {
  Idle,
  Head,
  Fixed,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
  /** The exchange was stopped mid-response: what is left of it is ignored until the connection goes. */
  Abandoned,
}

export class ParseError extends Error {}

export class ResponseParser implements ResponseFraming {
  keepAlive = true
  keepAliveHintMs: number | null = null
  #state = State.Idle
  #noBody = false
  /** Body bytes still to come (Fixed, ChunkData), or CRLF bytes (ChunkDataEnd). */
  #remaining = 0
  /** An incomplete header block or chunk-size/trailer line carried over from the last read. */
  #carry: Buffer | null = null
  #trailers: Buffer[] | null = null
  #lastReason = ''
  /** The header block's fields as offsets (name start, colon, value start, value end per field), reused: views are made only for a sink that wants them. */
  readonly #fields: number[] = []

  constructor(readonly sink: ResponseSink) {}

  /** A request was written: expect its response; `head` = it was a HEAD (no body). */
  expect(head: boolean): void {
    this.#state = State.Head
    this.#noBody = head
    this.#carry = null
    this.#trailers = null
    this.keepAlive = true
    this.keepAliveHintMs = null
  }

  /** Waiting for (part of) a response. */
  get busy(): boolean {
    return this.#state !== State.Idle && this.#state !== State.Done && this.#state !== State.Abandoned
  }

  /** The body runs until the connection closes (no length, not chunked). */
  get untilClose(): boolean {
    return this.#state === State.UntilClose
  }

  /** The headers of the current response have arrived. */
  get headersSeen(): boolean {
    return this.#state !== State.Head && this.#state !== State.Idle
  }

  /**
   * Parses what the socket read. Returns false if the sink asked to pause
   * (the rest of `data` is kept and parsed on `resume`). Throws ParseError
   * on malformed input, or on bytes with no request waiting for them.
   */
  execute(data: Buffer): boolean {
    let buf = data
    let at = 0
    if (this.#carry !== null) {
      buf = Buffer.concat([this.#carry, data])
      this.#carry = null
    }
    // The length read once: a socket's Buffer has another map than one made in JS, and its
    // `length` (a prototype getter) was a generic LoadIC per read of it (perf), in every loop test.
    const length = buf.length
    while (at < length) {
      switch (this.#state) {
        case State.Abandoned:
          return true
        case State.Idle:
        case State.Done:
          throw new ParseError('data after the response (or with no request in flight)')
        case State.Head: {
          const end = headerBlockEnd(buf, at, length)
          if (end < 0) return this.#keep(buf, at, 'response header block')
          at = this.#head(buf, at, end)
          if (at < 0) return false
          break
        }
        case State.Fixed:
        case State.ChunkData: {
          const n = Math.min(this.#remaining, length - at)
          const chunk = n === length ? buf : buf.subarray(at, at + n)
          at += n
          this.#remaining -= n
          const more = n === 0 || this.sink.onResponseBody(chunk)
          if (this.#remaining === 0 && this.#state === State.Fixed) this.#end(null)
          else if (this.#remaining === 0 && this.#state === State.ChunkData) {
            this.#state = State.ChunkDataEnd
            this.#remaining = 2
          }
          if (!more) return this.#pause(buf, at)
          break
        }
        case State.ChunkDataEnd: {
          const expected = this.#remaining === 2 ? CR : LF
          if (buf[at] !== expected) throw new ParseError('chunk data not followed by CRLF')
          at++
          if (--this.#remaining === 0) this.#state = State.ChunkSize
          break
        }
        case State.ChunkSize:
        case State.Trailers: {
          const eol = indexOfByte(buf, LF, at, length)
          if (eol < 0) return this.#keep(buf, at, 'chunk-size line')
          const line = buf.subarray(at, eol > at && buf[eol - 1] === CR ? eol - 1 : eol)
          at = eol + 1
          if (this.#state === State.ChunkSize) this.#chunkSize(line)
          else this.#trailerLine(line)
          break
        }
        case State.UntilClose: {
          const chunk = at === 0 ? buf : buf.subarray(at)
          at = length
          if (!this.sink.onResponseBody(chunk)) return false
          break
        }
      }
    }
    return true
  }

  /** The connection closed: ends a body that runs until close; true if that completed the response. */
  finish(): boolean {
    if (this.#state !== State.UntilClose) return false
    this.#end(null)
    return true
  }

  #pause(buf: Buffer, at: number): boolean {
    if (at < buf.length) this.#carry = buf.subarray(at)
    return false
  }

  #keep(buf: Buffer, at: number, what: string): boolean {
    if (buf.length - at > MAX_HEADER_BYTES) throw new ParseError(`${what} longer than ${MAX_HEADER_BYTES} bytes`)
    // A copy: the socket's buffer is not ours to hold across reads.
    this.#carry = Buffer.from(buf.subarray(at))
    return true
  }

  /** Parses the header block [at, end) and chooses the body's framing; returns where the body starts, or -1 if the sink paused. */
  #head(buf: Buffer, at: number, end: number): number {
    const lineEnd = indexOfByte(buf, LF, at, end + 2)
    const lineStop = lineEnd > at && buf[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd
    const status = statusCode(buf, at, lineStop)
    if (status < 0) throw new ParseError(`malformed status line: ${JSON.stringify(buf.toString('latin1', at, Math.min(lineStop, at + 80)))}`)
    const http10 = buf[at + 7] === 48
    const statusText = this.#reason(buf, at + 13, lineStop)
    const fields = this.#fields
    let count = 0 // fields' entries in use: never `fields.length = 0`, a call into V8's runtime per answer (perf)
    let contentLength = -1
    let chunked = false
    let connection = -1 // where the Connection value starts, and ends (connectionEnd)
    let connectionEnd = -1
    let line = lineEnd + 1
    while (line < end + 2) {
      let eol = indexOfByte(buf, LF, line, end + 2)
      if (eol < 0) eol = end + 2
      const stop = buf[eol - 1] === CR ? eol - 1 : eol
      const colon = indexOfByte(buf, COLON, line, stop)
      if (colon <= line) throw new ParseError('malformed header line')
      let v = colon + 1
      while (v < stop && (buf[v] === 32 || buf[v] === 9)) v++
      let w = stop
      while (w > v && (buf[w - 1] === 32 || buf[w - 1] === 9)) w--
      fields[count] = line
      fields[count + 1] = colon
      fields[count + 2] = v
      fields[count + 3] = w
      count += 4
      switch (colon - line) {
        case 14:
          if (named(buf, 'content-length', line)) {
            const n = parseDecimal(buf, v, w)
            if (n < 0 || (contentLength >= 0 && n !== contentLength)) throw new ParseError('invalid content-length')
            contentLength = n
          }
          break
        case 17:
          if (named(buf, 'transfer-encoding', line)) chunked = buf.toString('latin1', v, w).toLowerCase().trim().endsWith('chunked')
          break
        case 10:
          if (named(buf, 'connection', line)) {
            connection = v
            connectionEnd = w
          } else if (named(buf, 'keep-alive', line)) this.keepAliveHintMs = keepAliveHint(buf, v, w)
          break
      }
      line = eol + 1
    }
    const bodyStart = end + 4
    if (status < 200) {
      if (status === 101) throw new ParseError('101 Switching Protocols: upgrades are not supported')
      return bodyStart // an informational answer: the real one follows
    }
    this.keepAlive = connection < 0 ? !http10 : http10 ? indexOfWord(buf, 'keep-alive', connection, connectionEnd) >= 0 : indexOfWord(buf, 'close', connection, connectionEnd) < 0
    this.#state = State.Done // until the framing below says otherwise
    const sink = this.sink
    const ok = sink.onResponseHeaders(status, sink.wantsHeaders(status) ? rawHeaders(buf, fields, count) : NO_HEADERS, statusText)
    if ((this.#state as State) === State.Abandoned) return buf.length // stopped on its headers
    if (this.#noBody || status === 204 || status === 304) this.#end(null)
    else if (chunked) this.#state = State.ChunkSize
    else if (contentLength > 0) {
      this.#state = State.Fixed
      this.#remaining = contentLength
    } else if (contentLength === 0) this.#end(null)
    else {
      this.#state = State.UntilClose
      this.keepAlive = false
    }
    if (ok) return bodyStart
    this.#carry = bodyStart < buf.length ? buf.subarray(bodyStart) : null
    return -1
  }

  /** The reason phrase: the last one again when the bytes are the same ("OK" on every answer), so no string per answer. */
  #reason(buf: Buffer, from: number, to: number): string {
    const last = this.#lastReason
    if (to - from === last.length) {
      let same = true
      for (let i = 0; i < last.length && same; i++) same = buf[from + i] === last.charCodeAt(i)
      if (same) return last
    }
    return (this.#lastReason = from < to ? buf.toString('latin1', from, to) : '')
  }

  #chunkSize(line: Buffer): void {
    const text = line.toString('latin1', 0, line.length)
    const semi = text.indexOf(';')
    const hex = (semi < 0 ? text : text.slice(0, semi)).trim()
    if (!/^[0-9a-fA-F]{1,8}$/.test(hex)) throw new ParseError(`malformed chunk size: ${JSON.stringify(text.slice(0, 40))}`)
    const size = parseInt(hex, 16)
    if (size === 0) {
      this.#state = State.Trailers
      return
    }
    this.#state = State.ChunkData
    this.#remaining = size
  }

  #trailerLine(line: Buffer): void {
    if (line.length === 0) return this.#end(this.#trailers)
    const colon = line.indexOf(58)
    if (colon <= 0) throw new ParseError('malformed trailer line')
    ;(this.#trailers ??= []).push(Buffer.from(line.subarray(0, colon)), Buffer.from(line.toString('latin1', colon + 1, line.length).trim(), 'latin1'))
  }

  #end(trailers: Buffer[] | null): void {
    this.#state = State.Done
    this.sink.onResponseEnd(trailers)
  }

  /** The exchange was stopped: ignore the rest of its bytes (the connection is being closed). */
  abandon(): void {
    this.#state = State.Abandoned
    this.#carry = null
  }

  /** Resumes parsing what a pause left over. */
  resume(): boolean {
    const rest = this.#carry
    this.#carry = null
    return rest === null ? true : this.execute(rest)
  }
}

const STATUS_PREFIX = Buffer.from('HTTP/1.')

/** What a sink that does not want header views gets. */
const NO_HEADERS: Buffer[] = Object.freeze([]) as unknown as Buffer[]

/** undici's raw form (name, value, name, value, ... as views of the read) of the first `count` fields' offsets. */
function rawHeaders(buf: Buffer, fields: readonly number[], count: number): Buffer[] {
  const raw: Buffer[] = []
  for (let i = 0; i < count; i += 4) raw.push(buf.subarray(fields[i]!, fields[i + 1]!), buf.subarray(fields[i + 2]!, fields[i + 3]!))
  return raw
}

/**
 * The first `byte` in buf[from, to), or -1. A loop in JS, not Buffer#indexOf:
 * header lines are tens of bytes, and each indexOf is a call into C++ through
 * two JS wrappers (a Node server's typical answer took 2.6-4.5 µs to parse
 * with them, 1.0-2.1 µs without: bench/parse-bench.ts).
 */
function indexOfByte(buf: Buffer, byte: number, from: number, to: number): number {
  for (let i = from; i < to; i++) if (buf[i] === byte) return i
  return -1
}

/** Where the CRLF CRLF that ends a header block starts in buf[from, length), or -1 (as indexOf would, in JS: see indexOfByte). */
function headerBlockEnd(buf: Buffer, from: number, length: number): number {
  for (let i = from + 3; i < length; i++) {
    if (buf[i] === LF && buf[i - 1] === CR && buf[i - 2] === LF && buf[i - 3] === CR) return i - 3
  }
  return -1
}

/** The status of `HTTP/1.x SSS[ reason]` in buf[at, stop), or -1 if the line is not one. */
function statusCode(buf: Buffer, at: number, stop: number): number {
  if (stop - at < 12) return -1
  for (let i = 0; i < 7; i++) if (buf[at + i] !== STATUS_PREFIX[i]) return -1
  const minor = buf[at + 7]
  if ((minor !== 48 && minor !== 49) || buf[at + 8] !== 32 || (stop > at + 12 && buf[at + 12] !== 32)) return -1
  let code = 0
  for (let i = at + 9; i < at + 12; i++) {
    const d = buf[i]! - 48
    if (d < 0 || d > 9) return -1
    code = code * 10 + d
  }
  return code
}

/** `b` (from `from`) spells `lowercase` in any case (ASCII): no string per header on the hot path. */
function named(b: Buffer, lowercase: string, from = 0): boolean {
  for (let i = 0; i < lowercase.length; i++) {
    const c = b[from + i]!
    if ((c >= 65 && c <= 90 ? c | 0x20 : c) !== lowercase.charCodeAt(i)) return false
  }
  return true
}

/** A Content-Length value in b[from, to): digits only, or -1. */
function parseDecimal(b: Buffer, from: number, to: number): number {
  if (to === from || to - from > 15) return -1
  let n = 0
  for (let i = from; i < to; i++) {
    const d = b[i]! - 48
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}

/** `Keep-Alive: timeout=5, max=100` in b[from, to) -> 5000 (read from the bytes: it comes with every answer of a Node server). */
function keepAliveHint(b: Buffer, from: number, to: number): number | null {
  const at = indexOfWord(b, 'timeout=', from, to)
  if (at < 0) return null
  let seconds = 0
  let digits = 0
  for (let i = at + 8; i < to && b[i]! >= 48 && b[i]! <= 57 && digits < 9; i++, digits++) seconds = seconds * 10 + b[i]! - 48
  return digits > 0 ? seconds * 1000 : null
}

/** Where `lowercase` starts in b[from, to), in any case (ASCII), or -1. */
function indexOfWord(b: Buffer, lowercase: string, from: number, to: number): number {
  const first = lowercase.charCodeAt(0)
  for (let i = from; i + lowercase.length <= to; i++) {
    if ((b[i]! | 0x20) === first && named(b, lowercase, i)) return i
  }
  return -1
}
