/**
 * An HTTP/1.1 response parser for one connection (RFC 9112): the status
 * line and header block, then the body framed by Transfer-Encoding: chunked,
 * Content-Length, or the connection's close. It hands out views of the
 * bytes the socket read (header names and values, body chunks), never
 * copies, unless a header block or a chunk-size line is split across reads.
 *
 * Only what a load generator needs: 1xx answers are skipped (101 is an
 * error: no upgrades), no request pipelining (one response at a time), and
 * anything malformed is an error that ends the connection, raised as soon as
 * the bytes show it (never left for -t to end). What a client must accept by
 * RFC 9112 is accepted: bare LF line ends, obs-fold (unfolded to spaces in
 * place), chunk sizes with leading zeros.
 *
 * Memory per connection is bounded whatever the server sends: a header block
 * of at most MAX_HEADER_BYTES (undici's default maxHeaderSize) however its
 * bytes are split across reads, the same for a chunk-size line and for the
 * whole trailer section; bodies are handed on, never kept.
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
const SP = 32
const HTAB = 9
const COLON = 58
const SEMICOLON = 59

/** RFC 9110 tchar, by byte: what a field name is made of. */
const TOKEN = new Uint8Array(256)
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TOKEN[c.charCodeAt(0)] = 1

/** What an obs-fold in a trailer becomes. */
const FOLD = Buffer.from(' ')

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

/**
 * Why an answer could not be parsed: a closed set, so that reports can count
 * parser errors by reason (a server's bytes never become a name of their own).
 */
export type ParseReason =
  | 'malformed status line'
  | 'malformed header line'
  | 'whitespace before a header colon'
  | 'control character in a header'
  | 'header block too large'
  | 'invalid content-length'
  | 'malformed chunk size'
  | 'chunk-size line too long'
  | 'chunk data not followed by CRLF'
  | 'malformed trailer line'
  | 'trailer section too large'
  | 'upgrade not supported'
  | 'data after the response'
  | 'data after a response without a body'

export class ParseError extends Error {
  /** `detail`: what the bytes were, for a person reading one error (never counted by). */
  constructor(
    readonly reason: ParseReason,
    readonly detail?: string,
  ) {
    super(detail === undefined ? reason : `${reason}: ${detail}`)
  }
}

export class ResponseParser implements ResponseFraming {
  keepAlive = true
  keepAliveHintMs: number | null = null
  #state = State.Idle
  #noBody = false
  /** The last answer on this connection had no body by its status or method (HEAD, 204, 304). */
  #afterNoBody = false
  /** Body bytes still to come (Fixed, ChunkData), or CRLF bytes (ChunkDataEnd). */
  #remaining = 0
  /** An incomplete header block or chunk-size/trailer line carried over from the last read. */
  #carry: Buffer | null = null
  #trailers: Buffer[] | null = null
  /** Bytes of the trailer section so far: bounded as a header block is. */
  #trailerBytes = 0
  #lastReason = ''
  /** The header block's fields as offsets (name start, colon, value start, value end per field), reused: views are made only for a sink that wants them. */
  readonly #fields: number[] = []

  constructor(readonly sink: ResponseSink) {}

  /** A new connection: nothing was read on it yet. */
  reset(): void {
    this.#state = State.Idle
    this.#afterNoBody = false
    this.#carry = null
  }

  /** A request was written: expect its response; `head` = it was a HEAD (no body). */
  expect(head: boolean): void {
    this.#state = State.Head
    this.#noBody = head
    this.#carry = null
    this.#trailers = null
    this.#trailerBytes = 0
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
          throw new ParseError(this.#afterNoBody ? 'data after a response without a body' : 'data after the response')
        case State.Head: {
          // Only MAX_HEADER_BYTES are searched: the limit is the block's, however its bytes arrive.
          const limit = length - at > MAX_HEADER_BYTES ? at + MAX_HEADER_BYTES : length
          const end = headerBlockEnd(buf, at, limit)
          if (end < 0) {
            if (limit < length) throw new ParseError('header block too large', `over ${MAX_HEADER_BYTES} bytes`)
            // Bytes that cannot begin an answer (HTTP/0.9, another protocol) fail now, not at -t.
            if (!startsLikeStatus(buf, at, length)) throw this.#notAnAnswer(buf, at, length)
            return this.#keep(buf, at)
          }
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
          const trailers = this.#state === State.Trailers
          const room = trailers ? MAX_HEADER_BYTES - this.#trailerBytes : MAX_HEADER_BYTES
          const limit = length - at > room ? at + room : length
          const eol = indexOfByte(buf, LF, at, limit)
          if (eol < 0) {
            if (limit < length) throw new ParseError(trailers ? 'trailer section too large' : 'chunk-size line too long', `over ${MAX_HEADER_BYTES} bytes`)
            return this.#keep(buf, at)
          }
          const stop = eol > at && buf[eol - 1] === CR ? eol - 1 : eol
          if (trailers) {
            this.#trailerBytes += eol + 1 - at
            this.#trailerLine(buf, at, stop, eol)
          } else this.#chunkSize(buf, at, stop)
          at = eol + 1
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

  /** An incomplete line or block (its size checked by the caller), kept for the next read. */
  #keep(buf: Buffer, at: number): boolean {
    // A copy: the socket's buffer is not ours to hold across reads.
    this.#carry = Buffer.from(buf.subarray(at))
    return true
  }

  /** The error for bytes where a status line should start: named for the answer before when it had no body (its server sent one anyway). */
  #notAnAnswer(buf: Buffer, at: number, to: number): ParseError {
    const shown = JSON.stringify(buf.toString('latin1', at, Math.min(to, at + 40)))
    return new ParseError(this.#afterNoBody && !startsLikeStatus(buf, at, to) ? 'data after a response without a body' : 'malformed status line', shown)
  }

  /**
   * Parses the header block from `at` to its last LF (`end`) and chooses the
   * body's framing (RFC 9112 6.3); returns where the body starts, or -1 if
   * the sink paused.
   */
  #head(buf: Buffer, at: number, end: number): number {
    // The empty line that ends the block (CRLF, or a bare LF): an LF always comes before it.
    const blank = buf[end - 1] === CR ? end - 1 : end
    const lineEnd = indexOfByte(buf, LF, at, blank)
    const lineStop = lineEnd > at && buf[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd
    const status = statusCode(buf, at, lineStop)
    if (status < 0) throw this.#notAnAnswer(buf, at, lineStop)
    const http10 = buf[at + 7] === 48
    const statusText = this.#reason(buf, at + 13, lineStop)
    const fields = this.#fields
    let count = 0 // fields' entries in use: never `fields.length = 0`, a call into V8's runtime per answer (perf)
    let contentLength = -1
    let transferEncoding = false
    let chunked = false
    let connection = -1 // where the Connection value starts, and ends (connectionEnd)
    let connectionEnd = -1
    let line = lineEnd + 1
    if (line < blank && (buf[line] === SP || buf[line] === HTAB)) throw new ParseError('malformed header line', 'whitespace before the first header')
    while (line < blank) {
      let colon = line
      while (TOKEN[buf[colon]!] === 1) colon++
      if (colon === line || buf[colon] !== COLON) throw badFieldName(buf, line, colon)
      const eol = fieldValueEnd(buf, colon + 1, blank)
      const stop = buf[eol - 1] === CR ? eol - 1 : eol
      let v = colon + 1
      while (v < stop && (buf[v] === SP || buf[v] === HTAB)) v++
      let w = stop
      while (w > v && (buf[w - 1] === SP || buf[w - 1] === HTAB)) w--
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
          if (named(buf, 'transfer-encoding', line)) {
            transferEncoding = true
            chunked = endsWithChunked(buf, v, w) // the last field's final coding, as the fields would be joined
          }
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
    const bodyStart = end + 1
    if (status < 200) {
      if (status === 101) throw new ParseError('upgrade not supported', '101 Switching Protocols')
      return bodyStart // an informational answer: the real one follows
    }
    this.keepAlive =
      connection < 0
        ? !http10
        : http10
          ? indexOfWord(buf, 'keep-alive', connection, connectionEnd) >= 0
          : indexOfWord(buf, 'close', connection, connectionEnd) < 0
    // Framing a server may use to smuggle an answer (Transfer-Encoding beside Content-Length, or in HTTP/1.0: RFC 9112 6.1, 6.3),
    // and a 204 that announces a body it may then send (RFC 9110 8.6, 9112 6.1): the answer is read, the connection not reused.
    if (transferEncoding && (contentLength >= 0 || http10)) this.keepAlive = false
    if (status === 204 && (transferEncoding || contentLength > 0)) this.keepAlive = false
    const noBody = this.#noBody || status === 204 || status === 304
    this.#afterNoBody = noBody
    this.#state = State.Done // until the framing below says otherwise
    const sink = this.sink
    const ok = sink.onResponseHeaders(status, sink.wantsHeaders(status) ? rawHeaders(buf, fields, count) : NO_HEADERS, statusText)
    if ((this.#state as State) === State.Abandoned) return buf.length // stopped on its headers
    if (noBody) this.#end(null)
    else if (chunked) this.#state = State.ChunkSize
    else if (transferEncoding || contentLength < 0) {
      // No length, or a final coding other than chunked (RFC 9112 6.3): the body runs until the server closes.
      this.#state = State.UntilClose
      this.keepAlive = false
    } else if (contentLength > 0) {
      this.#state = State.Fixed
      this.#remaining = contentLength
    } else this.#end(null)
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

  /** A chunk-size line in buf[from, to): 1*HEXDIG (leading zeros allowed, RFC 9112 7.1), then nothing or extensions after `;`. */
  #chunkSize(buf: Buffer, from: number, to: number): void {
    let size = 0
    let i = from
    while (i < to) {
      const d = hexDigit(buf[i]!)
      if (d < 0) break
      size = size * 16 + d
      i++
    }
    let rest = i
    while (rest < to && (buf[rest] === SP || buf[rest] === HTAB)) rest++
    if (i === from || size > Number.MAX_SAFE_INTEGER || (rest < to && buf[rest] !== SEMICOLON)) {
      throw new ParseError('malformed chunk size', JSON.stringify(buf.toString('latin1', from, Math.min(to, from + 40))))
    }
    if (size === 0) {
      this.#state = State.Trailers
      return
    }
    this.#state = State.ChunkData
    this.#remaining = size
  }

  /** One line of the trailer section in buf[from, stop) (its LF at eol); the empty line ends the answer. */
  #trailerLine(buf: Buffer, from: number, stop: number, eol: number): void {
    if (stop === from) return this.#end(this.#trailers)
    const trailers = (this.#trailers ??= [])
    const folded = buf[from] === SP || buf[from] === HTAB
    let colon = from
    if (!folded) {
      while (TOKEN[buf[colon]!] === 1) colon++
      if (colon === from || buf[colon] !== COLON) throw new ParseError('malformed trailer line')
    } else if (trailers.length === 0) throw new ParseError('malformed trailer line')
    fieldValueEnd(buf, folded ? from : colon + 1, eol + 1) // checks the value's bytes (no fold can follow: one line at a time)
    let v = folded ? from : colon + 1
    while (v < stop && (buf[v] === SP || buf[v] === HTAB)) v++
    let w = stop
    while (w > v && (buf[w - 1] === SP || buf[w - 1] === HTAB)) w--
    // Copies: the lines come from several reads.
    if (folded) trailers[trailers.length - 1] = Buffer.concat([trailers[trailers.length - 1]!, FOLD, buf.subarray(v, w)])
    else trailers.push(Buffer.from(buf.subarray(from, colon)), Buffer.from(buf.subarray(v, w)))
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

/**
 * The last LF of the header block that starts at `from`, within buf[from, to),
 * or -1: the LF of an empty line, CRLF or a bare LF (RFC 9112 2.2 lets a
 * recipient take a bare LF as a line end). A loop in JS, as indexOfByte.
 */
function headerBlockEnd(buf: Buffer, from: number, to: number): number {
  for (let i = from + 1; i < to; i++) {
    if (buf[i] !== LF) continue
    const before = buf[i - 1]
    if (before === LF || (before === CR && i - 2 >= from && buf[i - 2] === LF)) return i
  }
  return -1
}

/**
 * Where the field value from `from` ends (its line's LF), checking its bytes
 * (no control characters but HTAB: RFC 9110 5.5) and unfolding obs-fold in
 * place: a line break followed by SP or HTAB (before `blank`, the block's
 * empty line) continues the value and becomes spaces, as RFC 9112 5.2 asks
 * of a user agent. The read is ours to write: nothing else holds it.
 */
function fieldValueEnd(buf: Buffer, from: number, blank: number): number {
  for (let i = from; ; i++) {
    const c = buf[i]!
    if (c >= 32 ? c !== 127 : c === HTAB) continue
    if (c === CR && buf[i + 1] === LF) continue
    if (c !== LF) throw new ParseError('control character in a header', `byte ${c}`)
    const next = i + 1
    if (next >= blank || (buf[next] !== SP && buf[next] !== HTAB)) return i
    // obs-fold = OWS CRLF RWS: the line break and the whitespace after it become spaces.
    if (buf[i - 1] === CR) buf[i - 1] = SP
    buf[i] = SP
    for (; buf[i + 1] === SP || buf[i + 1] === HTAB; i++) buf[i + 1] = SP
  }
}

/** A field line whose name is not a token followed by a colon: `Content-Length : 5` (RFC 9112 5.1) is named as such. */
function badFieldName(buf: Buffer, line: number, stop: number): ParseError {
  let i = stop
  while (buf[i] === SP || buf[i] === HTAB) i++
  return new ParseError(stop > line && i > stop && buf[i] === COLON ? 'whitespace before a header colon' : 'malformed header line')
}

/** Whether buf[at, to) can be the start of `HTTP/1.` (as much of it as has arrived). */
function startsLikeStatus(buf: Buffer, at: number, to: number): boolean {
  const n = Math.min(to - at, STATUS_PREFIX.length)
  for (let i = 0; i < n; i++) if (buf[at + i] !== STATUS_PREFIX[i]) return false
  return true
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

/** A hex digit's value, or -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48
  const l = c | 0x20
  return l >= 97 && l <= 102 ? l - 87 : -1
}

/** Whether the codings in b[from, to) end with `chunked` (the token itself, not `xchunked`). */
function endsWithChunked(b: Buffer, from: number, to: number): boolean {
  const start = to - 7
  if (start < from || !named(b, 'chunked', start)) return false
  let i = start - 1
  while (i >= from && (b[i] === SP || b[i] === HTAB)) i--
  return i < from || b[i] === 44
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
