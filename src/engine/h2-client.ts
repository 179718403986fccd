/**
 * hedgebench's own HTTP/2 client for h2c (prior knowledge) and gRPC over
 * it: the pool's connection for http:// origins with --http2 and grpc://
 * (connection-pool.ts), in place of undici's h2 Client, and the same over
 * TLS once ALPN chose h2 (https:// with --http2, grpcs://).
 *
 * Why not undici's (or Node's) h2 client: both run every stream through
 * Node's http2 core (nghttp2 behind a C++ binding, a Http2Stream object
 * with its streams machinery, header objects built per response). A run
 * measured 130-265 µs of client CPU per request against h2load's 5-11 µs,
 * 23 garbage collections per 20,000 requests with pauses up to 220 ms, and
 * so reported the client's tail as the target's (issue 28). This client
 * does only what a load generator sends and reads, as h1-client.ts does
 * for HTTP/1.1: 21-26 µs per request on the same set-up (133-144 µs with
 * undici's there, h2load 4-5 µs), one collection per 20,000 requests
 * (docs/http2.md; `npm run bench`).
 *
 * What it speaks (RFC 9113): the preface and SETTINGS (push off, a large
 * stream window) with a connection WINDOW_UPDATE, so that reading never
 * waits for flow control; HEADERS with the request's block built once per
 * dispatch options object (hpack.ts: static table and literals) and
 * CONTINUATION when a block exceeds the server's frame size; DATA within
 * the server's windows; SETTINGS ACK, PING ACK, WINDOW_UPDATE as the
 * windows drain. It honours the server's SETTINGS_MAX_CONCURRENT_STREAMS:
 * a request beyond it waits here, before its handler is told it is on the
 * wire (onConnect), so it is not counted as sent.
 *
 * What a request costs here is kept to what the protocol needs, since a
 * load generator sends the same request and reads the same answer all run
 * long: the HEADERS frame is built once per dispatch options object and
 * each stream copies it, with its id, into the session's output buffer
 * (one Buffer and one write per flush, not a Buffer per frame then a
 * concat); frames are read as ranges of the socket read, with a view made
 * only for the DATA a handler is given; and a response header block that
 * changed nothing in the dynamic table is not decoded again when the same
 * octets come back (hpack.ts BlockCache): its status and fields are shared,
 * frozen, by every response that carries it. Together about a quarter fewer bytes
 * allocated per request (docs/benchmarks.md).
 *
 * What it gets right that the undici path did not (issue 28):
 * - A GOAWAY is not a failure: streams above its last-stream-id, and
 *   streams refused with REFUSED_STREAM, were not processed by the server
 *   (RFC 9113 8.7). Their handlers hear onRequestRefused (the attempt is
 *   no longer counted as sent), and they are sent again on a new
 *   connection, heard in onConnect once more and reported as
 *   'stream-resent' when rewritten: an attempt cancelled meanwhile is never
 *   counted as sent, as the server never saw it. Streams at or below the id finish on
 *   the old connection, which closes when they have.
 * - A cancel (the attempt's abort) is RST_STREAM with CANCEL (0x8), and is
 *   reported as 'stream-reset' only when a RST_STREAM was written for a
 *   stream the server had not ended.
 *
 * Towards the pool and the attempts it speaks undici's legacy handler
 * protocol exactly as h1-client.ts does (onConnect right before the
 * HEADERS are written, onHeaders, onData, onComplete with the trailers as
 * raw Buffers, onError, onRequestSent) and emits 'connect' per connection
 * it opens. Streams are never paused: their window is large and a load
 * generator does not hold bodies back.
 */
import { EventEmitter } from 'node:events'
import type { Socket } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { errors, type buildConnector, type Dispatcher } from 'undici'
import type { Abort, LegacyHandler } from './forwarding-handler.js'
import type { Connection } from './connection.js'
import { bodyBuffer, headerPairs } from './h1-request.js'
import {
  CLIENT_PREFACE,
  codeName,
  contentEnd,
  contentStart,
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  Flag,
  frame,
  FRAME_HEADER,
  FrameReader,
  FrameType,
  goawayFrame,
  H2Code,
  H2ProtocolError,
  MAX_WINDOW,
  rstStreamFrame,
  Setting,
  SETTINGS_ACK,
  settingsFrame,
  windowUpdateFrame,
  writeFrameHeader,
  type FrameSink,
} from './h2-frames.js'
import { BlockCache, encodeBlock, HpackDecoder, HpackError } from './hpack.js'
import { continuationError, DEFAULT_H2_LIMITS, floodError, flowControlError, headerListError, type H2Limits } from './h2-limits.js'
import { openSocket } from './open-socket.js'
import { StreamTable } from './stream-table.js'
import { HedgeCancelledError } from '../hedging/errors.js'

export interface H2ClientOptions {
  /** Opens the socket (undici's connector). */
  connect: buildConnector.connector
  /** Streams one connection carries at once until the server's SETTINGS say otherwise (the preflight read them). */
  maxStreams: number
  /** What a server may make it hold (h2-limits.ts); absent: DEFAULT_H2_LIMITS. */
  limits?: H2Limits
}

/** Our receive windows: large, so that the server never waits for a WINDOW_UPDATE (h2load uses the same). */
const RECEIVE_WINDOW = 2 ** 30 - 1
/** A WINDOW_UPDATE goes out once half of a window has been consumed. */
const WINDOW_REFILL = 2 ** 29
/** A stream refused this often (REFUSED_STREAM or GOAWAY) fails instead of being sent again. */
const MAX_RESENDS = 5
/** Client stream ids are odd and never reused: a connection this far along is replaced. */
const LAST_STREAM_ID = 2 ** 31 - 1

/**
 * Reading stops while more than this waits to leave, until it has (a server
 * that floods us and reads nothing cannot make us hold more). Well above
 * what maxOwedFrames control frames take, so that such a flood is still
 * seen and named before reading stops.
 */
const WRITE_BACKLOG = 1024 * 1024

/** A session's last frame is written; the socket is destroyed if it has not finished after this (a server that does not read never lets it). */
const END_GRACE_MS = 1000

/** The preface, our SETTINGS (the limits HTTP/2 has a setting for among them) and the connection's WINDOW_UPDATE. */
function connectionStart(limits: H2Limits): Buffer {
  const settings = settingsFrame([
    [Setting.HEADER_TABLE_SIZE, limits.headerTable],
    [Setting.ENABLE_PUSH, 0],
    [Setting.INITIAL_WINDOW_SIZE, RECEIVE_WINDOW],
    [Setting.MAX_HEADER_LIST_SIZE, limits.maxHeaderList],
  ])
  return Buffer.concat([CLIENT_PREFACE, settings, windowUpdateFrame(0, RECEIVE_WINDOW - DEFAULT_WINDOW)])
}

const noop = (): void => {}

/** A request's HEADERS block and body, built once per dispatch options object (a run reuses one per origin). */
interface WireRequest {
  readonly block: Buffer
  readonly body: Buffer | null
  /**
   * The whole HEADERS frame (stream id 0, flags set) when the block fits in
   * one frame of any server (DEFAULT_MAX_FRAME): each stream copies it and
   * writes its id, instead of building a frame.
   */
  readonly headersFrame: Buffer | null
}
const built = new WeakMap<Dispatcher.DispatchOptions, WireRequest>()

/** Connection-specific headers HTTP/2 forbids (RFC 9113 8.2.2): left out, as undici does. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host', 'content-length'])

function wireRequest(opts: Dispatcher.DispatchOptions, scheme: string, authority: string): WireRequest {
  let wire = built.get(opts)
  if (wire !== undefined) return wire
  const method = opts.method ?? 'GET'
  if (method === 'CONNECT' || opts.upgrade) throw new errors.NotSupportedError('CONNECT and upgrades are not supported')
  let host = authority
  const rest: Array<[string, string]> = []
  for (const [name, value] of headerPairs(opts.headers)) {
    const key = name.toLowerCase()
    if (/[\r\n\0]/.test(value)) throw new errors.InvalidArgumentError(`invalid ${key} header`)
    if (key === 'host') host = value
    if (CONNECTION_HEADERS.has(key) || (key === 'te' && value !== 'trailers')) continue
    rest.push([key, value])
  }
  const body = bodyBuffer(opts.body)
  if (body !== null && body.length > 0) rest.push(['content-length', String(body.length)])
  const fields: Array<[string, string]> = [[':method', method], [':scheme', scheme], [':authority', host], [':path', opts.path], ...rest]
  const block = encodeBlock(fields)
  const sent = body !== null && body.length > 0 ? body : null
  const headersFrame = block.length <= DEFAULT_MAX_FRAME ? frame(FrameType.HEADERS, (sent === null ? Flag.END_STREAM : 0) | Flag.END_HEADERS, 0, block) : null
  wire = { block, body: sent, headersFrame }
  built.set(opts, wire)
  return wire
}

/** One request, from dispatch to its end; the same object across a resend. */
class Stream {
  id = 0
  session: Session | null = null
  /** Its handler heard its end (onComplete or onError). */
  done = false
  /** The final (non-1xx) response headers arrived. */
  answered = false
  resends = 0
  sendWindow = 0
  /** Octets of the body written so far. */
  bodyAt = 0
  /** Octets received since the last WINDOW_UPDATE for this stream. */
  unacked = 0
  readonly abort: Abort

  constructor(
    readonly client: H2Client,
    readonly handler: LegacyHandler,
    readonly wire: WireRequest,
  ) {
    this.abort = (err?: Error) => client.abortStream(this, err ?? new errors.RequestAbortedError())
  }
}

export class H2Client extends EventEmitter implements Connection {
  destroyed = false
  closed = false
  readonly #url: URL
  readonly #authority: string
  /** 'http' (h2c) or 'https' (TLS, ALPN h2). */
  readonly #scheme: string
  readonly #options: H2ClientOptions
  readonly #limits: H2Limits
  /** The connection new streams go on; null until one is open (or after it went away). */
  #current: Session | null = null
  /** Every open connection: the current one and any finishing its streams after a GOAWAY. */
  readonly #sessions = new Set<Session>()
  #connecting = false
  /** Streams waiting for a connection or for a free stream slot (resent ones first). */
  #queue: Stream[] = []
  #closeWaiters: Array<() => void> = []

  constructor(origin: string, options: H2ClientOptions) {
    super()
    this.#url = new URL(origin)
    this.#authority = this.#url.host
    this.#scheme = this.#url.protocol === 'https:' ? 'https' : 'http'
    this.#options = options
    this.#limits = options.limits ?? DEFAULT_H2_LIMITS
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const h = handler as unknown as LegacyHandler
    if (this.closed) {
      h.onError(this.destroyed ? new errors.ClientDestroyedError() : new errors.ClientClosedError())
      return false
    }
    let wire: WireRequest
    try {
      wire = wireRequest(opts, this.#scheme, this.#authority)
    } catch (err) {
      h.onError(err as Error)
      return false
    }
    this.#queue.push(new Stream(this, h, wire))
    this.pump()
    return true
  }

  /** Waits for the streams in flight and queued, then closes every connection. */
  close(): Promise<void> {
    this.closed = true
    return this.#whenDone()
  }

  /** Fails every stream (with `err`) and closes every connection now. */
  destroy(err?: Error | null): Promise<void> {
    this.closed = true
    this.destroyed = true
    const e = err ?? new errors.ClientDestroyedError()
    for (const st of this.#queue.splice(0)) this.#fail(st, e)
    for (const s of [...this.#sessions]) s.destroy(e)
    return this.#whenDone()
  }

  /** Puts queued streams on the current connection while it has room, opening one when there is none. */
  pump(): void {
    const queue = this.#queue
    if (queue.length === 0) return this.#closeIfDone()
    const s = this.#current
    if (s === null || !s.open) {
      if (!this.#connecting && !this.destroyed) this.#open()
      return
    }
    s.cork()
    try {
      while (queue.length > 0 && s.hasRoom()) s.start(queue.shift()!)
    } finally {
      s.uncork()
    }
    // It ran out of stream ids: the rest go on a new connection.
    if (queue.length > 0 && !s.open) this.pump()
  }

  /** The abort an attempt holds (a cancel, a deadline): RST_STREAM CANCEL if its stream is still open on the wire; 'stream-reset' for a cancel. */
  abortStream(st: Stream, err: Error): void {
    if (st.done) return
    const s = st.session
    if (s === null) {
      // Queued (or being written: inside onConnect): nothing of it is on the wire.
      const at = this.#queue.indexOf(st)
      if (at >= 0) this.#queue.splice(at, 1)
    } else {
      const lost = err instanceof HedgeCancelledError
      s.cancel(st, lost)
      // What a cancel cost (the loser of a race); a deadline's or a caller's abort resets its stream too, but is no cancel.
      if (lost) this.emit('stream-reset')
      // Its slot is free: a stream waiting for one must not wait for this session's next read, which may never
      // come (every stream on it reset; --connections puts attempts on a full session). Once the caller's own
      // callback is over, not inside it.
      this.#pumpSoon()
    }
    this.#fail(st, err)
  }

  #pumpScheduled = false

  #pumpSoon(): void {
    if (this.#pumpScheduled || this.#queue.length === 0) return
    this.#pumpScheduled = true
    queueMicrotask(() => {
      this.#pumpScheduled = false
      if (!this.destroyed) this.pump()
    })
  }

  /**
   * The server did not process these (above a GOAWAY's last-stream-id, or
   * REFUSED_STREAM): their handlers take them back as not sent, and they go
   * again, first in line, each heard in onConnect once more when rewritten.
   */
  resend(streams: Stream[]): void {
    const again: Stream[] = []
    for (const st of streams) {
      st.session = null
      st.id = 0
      st.bodyAt = 0
      st.unacked = 0
      st.handler.onRequestRefused?.()
      if (st.done) continue // stopped while taken back
      if (++st.resends > MAX_RESENDS)
        this.#fail(st, streamError(`refused ${st.resends} times by the server (REFUSED_STREAM or GOAWAY)`, 'HTTP2_REFUSED_STREAM'))
      else again.push(st)
    }
    this.#queue.unshift(...again)
  }

  /** A stream ended (answered, reset or failed): its handler is told once. */
  finish(st: Stream, trailers: Buffer[] | null): void {
    if (st.done) return
    st.done = true
    st.handler.onComplete(trailers)
  }

  fail(st: Stream, err: Error): void {
    this.#fail(st, err)
  }

  #fail(st: Stream, err: Error): void {
    if (st.done) return
    st.done = true
    st.handler.onError(err)
  }

  // ---- connections ----

  #open(): void {
    this.#connecting = true
    openSocket(this.#options.connect, this.#url, (err, socket) => {
      this.#connecting = false
      if (err !== null) return this.#connectFailed(err)
      if (this.destroyed) {
        socket!.destroy()
        return this.#closeIfDone()
      }
      const refused = this.#scheme === 'https' ? notH2(socket as TLSSocket) : null
      if (refused !== null) {
        socket!.destroy()
        return this.#connectFailed(refused)
      }
      const session = new Session(this, socket!, this.#options.maxStreams, this.#limits)
      this.#sessions.add(session)
      this.#current = session
      this.emit('connect', this.#url, [this])
      this.pump()
    })
  }

  /** As undici's Client: every stream waiting for this connection fails with the connector's error. */
  #connectFailed(err: Error): void {
    for (const st of this.#queue.splice(0)) this.#fail(st, err)
    this.emit('connectionError', this.#url, [this], err)
    this.#closeIfDone()
  }

  /** A connection's socket closed. */
  sessionClosed(session: Session, error: Error | null): void {
    this.#sessions.delete(session)
    if (this.#current === session) this.#current = null
    this.emit('disconnect', this.#url, [this], error ?? new errors.SocketError('closed'))
    if (!this.destroyed) this.pump()
    this.#closeIfDone()
  }

  #whenDone(): Promise<void> {
    return new Promise((resolve) => {
      this.#closeWaiters.push(resolve)
      this.#closeIfDone()
    })
  }

  /** Closed and nothing left to do: close the idle connections, and tell close()/destroy() once they are gone. */
  #closeIfDone(): void {
    if (!this.closed || this.#queue.length > 0 || this.#connecting) return
    for (const s of this.#sessions) if (s.streams.size === 0) s.end()
    if (this.#sessions.size > 0) return
    for (const w of this.#closeWaiters.splice(0)) w()
  }
}

/** One connection (socket) of an H2Client, and the frames on it. */
class Session implements FrameSink {
  readonly streams = new StreamTable<Stream>()
  readonly #reader: FrameReader = new FrameReader(this)
  readonly #decoder: HpackDecoder
  #nextId = 1
  /** The server's SETTINGS_MAX_CONCURRENT_STREAMS, at most the client's own limit. */
  #maxStreams: number
  #peerInitialWindow = DEFAULT_WINDOW
  #sendWindow = DEFAULT_WINDOW
  #maxFrame = DEFAULT_MAX_FRAME
  /** Octets received on the connection since its last WINDOW_UPDATE. */
  #unacked = 0
  /** Streams whose body waits for a window. */
  readonly #blocked = new Set<Stream>()
  /** Race losers reset before an answer, by stream id, while a GOAWAY could still refuse them (#keepLost). */
  readonly #lost = new Map<number, Stream>()
  /** The highest stream id the server has answered on: the last id of any GOAWAY it sends is at least this. */
  #highestAnswered = 0
  /** A GOAWAY came (or we are ending it): no new streams. */
  #goingAway = false
  #goawayReceived = false
  #goawayCode: number = H2Code.NO_ERROR
  #ended = false
  /** Frames waiting for the end of a cork (see #send): #out[0, #outLength). */
  #out: Buffer = Buffer.allocUnsafeSlow(OUT_INITIAL)
  #outLength = 0
  #corked = 0
  /** Header blocks seen before that left the dynamic table as it was: their status and fields, without a decode. */
  readonly #blocks = new BlockCache<ResponseBlock>()
  /** A header block being assembled from HEADERS + CONTINUATION: its stream, parts and END_STREAM. */
  #blockStream = 0
  #blockParts: Buffer[] | null = null
  #blockEndStream = false
  /** Its octets so far (the header list limit, before decoding) and its CONTINUATION frames. */
  #blockBytes = 0
  #continuations = 0
  /** Control frames owed to the server since our writes last left in full (h2-limits.ts maxOwedFrames). */
  #owed = 0

  constructor(
    readonly client: H2Client,
    readonly socket: Socket,
    readonly clientLimit: number,
    readonly limits: H2Limits,
  ) {
    this.#maxStreams = clientLimit
    this.#decoder = new HpackDecoder(limits.headerTable)
    let error: Error | null = null
    socket.on('data', (chunk: Buffer) => this.#feed(chunk))
    socket.on('error', (err: Error) => {
      error = err
    })
    socket.on('close', () => this.#closed(error))
    // Reading stops while our writes are backed up (#feed, WRITE_BACKLOG), and goes on once they have left.
    socket.on('drain', () => {
      this.#owed = 0
      socket.resume()
    })
    socket.write(connectionStart(limits))
  }

  /** New streams may go on it. */
  get open(): boolean {
    return !this.#goingAway && !this.#ended && this.#nextId < LAST_STREAM_ID
  }

  hasRoom(): boolean {
    return this.open && this.streams.size < this.#maxStreams
  }

  /** Frames written from now until uncork() leave in one socket write. */
  cork(): void {
    this.#corked++
  }

  uncork(): void {
    if (--this.#corked === 0) this.#flush()
  }

  /**
   * Queues a frame; written at once unless corked. Frames are copied into
   * one buffer and leave as one write per flush: Node's writev costs per
   * chunk, a read that completes 40 streams writes 40 HEADERS frames, and a
   * Buffer per frame (then a concat) was an allocation and a copy more per
   * request.
   */
  #send(buf: Buffer): void {
    // #reserve may replace #out with a larger buffer: read it after.
    const at = this.#reserve(buf.length)
    copyInto(buf, this.#out, at)
    if (this.#corked === 0) this.#flush()
  }

  /** Room for `n` more octets at the end of #out: where they go. */
  #reserve(n: number): number {
    const at = this.#outLength
    if (at + n > this.#out.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(2 * this.#out.length, at + n))
      this.#out.copy(bigger, 0, 0, at)
      this.#out = bigger
    }
    this.#outLength = at + n
    return at
  }

  #flush(): void {
    const n = this.#outLength
    if (n === 0) return
    this.#outLength = 0
    if (this.socket.destroyed) return
    // The socket may hold the chunk until the kernel takes it: a copy, so that #out can be filled again at once.
    const chunk = Buffer.allocUnsafe(n)
    this.#out.copy(chunk, 0, 0, n)
    // A large body grew it: not kept for the small frames that follow.
    if (this.#out.length > OUT_KEEP) this.#out = Buffer.allocUnsafeSlow(OUT_INITIAL)
    this.socket.write(chunk)
    // The kernel took it all: nothing is owed any more.
    if (this.socket.writableLength === 0) this.#owed = 0
  }

  /** Writes `st`'s HEADERS (and body); its handler hears onConnect first (a resend too: a refused stream was taken back). */
  start(st: Stream): void {
    st.handler.onConnect(st.abort)
    if (st.done) return // stopped in onConnect: never written
    const id = this.#nextId
    this.#nextId += 2
    st.id = id
    st.session = this
    st.sendWindow = this.#peerInitialWindow
    this.streams.set(st)
    this.#writeHeaders(st)
    if (st.wire.body !== null) this.#sendBody(st)
    st.handler.onRequestSent?.()
    if (st.resends > 0) this.client.emit('stream-resent')
  }

  #writeHeaders(st: Stream): void {
    const ready = st.wire.headersFrame
    if (ready !== null) {
      const at = this.#reserve(ready.length)
      const out = this.#out
      copyInto(ready, out, at)
      const id = st.id
      out[at + 5] = id >>> 24
      out[at + 6] = (id >>> 16) & 0xff
      out[at + 7] = (id >>> 8) & 0xff
      out[at + 8] = id & 0xff
      if (this.#corked === 0) this.#flush()
      return
    }
    const block = st.wire.block
    const endStream = st.wire.body === null ? Flag.END_STREAM : 0
    const max = this.#maxFrame
    if (block.length <= max) {
      const buf = Buffer.allocUnsafe(FRAME_HEADER + block.length)
      writeFrameHeader(buf, 0, block.length, FrameType.HEADERS, endStream | Flag.END_HEADERS, st.id)
      block.copy(buf, FRAME_HEADER)
      this.#send(buf)
      return
    }
    // Larger than a frame: HEADERS then CONTINUATIONs, nothing in between (written in one go).
    const parts: Buffer[] = []
    for (let at = 0; at < block.length; at += max) {
      const last = at + max >= block.length
      const type = at === 0 ? FrameType.HEADERS : FrameType.CONTINUATION
      parts.push(frame(type, (at === 0 ? endStream : 0) | (last ? Flag.END_HEADERS : 0), st.id, block.subarray(at, at + max)))
    }
    this.#send(Buffer.concat(parts))
  }

  /** Writes as much of `st`'s body as the windows allow; the rest waits for a WINDOW_UPDATE. */
  #sendBody(st: Stream): void {
    const body = st.wire.body!
    while (st.bodyAt < body.length) {
      const n = Math.min(body.length - st.bodyAt, this.#sendWindow, st.sendWindow, this.#maxFrame)
      if (n <= 0) {
        this.#blocked.add(st)
        return
      }
      const last = st.bodyAt + n === body.length
      this.#send(frame(FrameType.DATA, last ? Flag.END_STREAM : 0, st.id, body.subarray(st.bodyAt, st.bodyAt + n)))
      st.bodyAt += n
      this.#sendWindow -= n
      st.sendWindow -= n
    }
    if (this.#blocked.size > 0) this.#blocked.delete(st)
  }

  /** Our cancel: RST_STREAM CANCEL; whatever the server still sends on it is read and dropped. */
  /** `lost`: it lost a race, and a later GOAWAY may yet say the server never processed it (#goaway). */
  cancel(st: Stream, lost = false): void {
    this.#forget(st)
    this.#send(rstStreamFrame(st.id, H2Code.CANCEL))
    if (lost && !st.answered) this.#keepLost(st)
    this.#endIfDrained()
  }

  /**
   * A race's loser reset before any answer. A GOAWAY that comes after the
   * reset may put it above the last stream the server processed: the
   * server never saw it, and its attempt is taken back then. One at or
   * below a stream the server has answered can never be (the last id is at
   * least that), so it is forgotten: the set stays as small as the streams
   * in flight.
   */
  #keepLost(st: Stream): void {
    for (const id of this.#lost.keys()) if (id <= this.#highestAnswered) this.#lost.delete(id)
    this.#lost.set(st.id, st)
  }

  #forget(st: Stream): void {
    this.streams.delete(st.id)
    // Almost always empty (a body waiting for a window): not a hash lookup per stream.
    if (this.#blocked.size > 0) this.#blocked.delete(st)
  }

  // ---- reading ----

  #feed(chunk: Buffer): void {
    if (this.#ended) return
    // Every frame written while this read is handled (ACKs, the next requests its answers trigger) leaves in one write.
    this.cork()
    try {
      this.#reader.execute(chunk)
      this.client.pump()
    } catch (err) {
      this.#connectionError(err as Error)
    } finally {
      this.uncork()
    }
    if (this.socket.writableLength > WRITE_BACKLOG) this.socket.pause()
  }

  /** A control frame the server's frames call for: bounded while our writes wait to leave (its flood ends the connection). */
  #owe(reply: Buffer, kind: string): void {
    if (++this.#owed > this.limits.maxOwedFrames) throw floodError(kind, this.limits.maxOwedFrames)
    this.#send(reply)
  }

  onFrame(type: number, flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (this.#blockParts !== null && type !== FrameType.CONTINUATION) throw new H2ProtocolError('a frame inside a header block')
    switch (type) {
      case FrameType.DATA:
        return this.#data(flags, id, buf, start, end)
      case FrameType.HEADERS:
        return this.#headers(flags, id, buf, start, end)
      case FrameType.CONTINUATION:
        return this.#continuation(flags, id, buf.subarray(start, end))
      case FrameType.RST_STREAM:
        return this.#rstStream(id, buf.subarray(start, end))
      case FrameType.SETTINGS:
        return this.#settings(flags, id, buf.subarray(start, end))
      case FrameType.PING:
        if (id !== 0) throw new H2ProtocolError('PING on a stream')
        if (end - start !== 8) throw new H2ProtocolError('PING of other than 8 octets', H2Code.FRAME_SIZE_ERROR)
        if ((flags & Flag.ACK) === 0) this.#owe(frame(FrameType.PING, Flag.ACK, 0, buf.subarray(start, end)), 'PING')
        return
      case FrameType.GOAWAY:
        return this.#goaway(id, buf.subarray(start, end))
      case FrameType.WINDOW_UPDATE:
        return this.#windowUpdate(id, buf.subarray(start, end))
      case FrameType.PUSH_PROMISE:
        throw new H2ProtocolError('PUSH_PROMISE with push disabled')
      default:
        return // PRIORITY and unknown frame types are ignored (RFC 9113 5.5)
    }
  }

  #data(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (id === 0) throw new H2ProtocolError('DATA on stream 0')
    const length = end - start
    // Flow control counts the whole frame, padding included, for streams we reset too.
    this.#unacked += length
    if (this.#unacked >= WINDOW_REFILL) {
      this.#send(windowUpdateFrame(0, this.#unacked))
      this.#unacked = 0
    }
    const st = this.streams.get(id)
    if (st === undefined) return this.#unknownStream(id)
    const from = contentStart(start, end, flags, false)
    const to = contentEnd(buf, start, end, flags, false)
    if (!st.answered) return this.#streamError(st, 'DATA before the response headers')
    st.unacked += length
    if (st.unacked >= WINDOW_REFILL && (flags & Flag.END_STREAM) === 0) {
      this.#send(windowUpdateFrame(id, st.unacked))
      st.unacked = 0
    }
    if (to > from) st.handler.onData(buf.subarray(from, to))
    // A handler that aborted in onData (a gRPC message over --max-recv-size) has already reset the stream.
    if (flags & Flag.END_STREAM && !st.done) this.#streamEnded(st, null)
  }

  #headers(flags: number, id: number, buf: Buffer, start: number, end: number): void {
    if (id === 0) throw new H2ProtocolError('HEADERS on stream 0')
    const from = contentStart(start, end, flags, true)
    const to = contentEnd(buf, start, end, flags, true)
    const endStream = (flags & Flag.END_STREAM) !== 0
    this.#blockBytes = to - from
    if (this.#blockBytes > this.limits.maxHeaderList) throw headerListError(this.limits.maxHeaderList)
    if (flags & Flag.END_HEADERS) return this.#block(id, endStream, buf, from, to)
    this.#blockStream = id
    // Copied: a view would keep the whole socket read alive until the block ends.
    this.#blockParts = [Buffer.from(buf.subarray(from, to))]
    this.#blockEndStream = endStream
    this.#continuations = 0
  }

  /** A header block's next fragment: counted and measured before it is kept, so a flood of them holds at most the limits. */
  #continuation(flags: number, id: number, payload: Buffer): void {
    const parts = this.#blockParts
    if (parts === null || id !== this.#blockStream) throw new H2ProtocolError('CONTINUATION without its HEADERS')
    if (++this.#continuations > this.limits.maxContinuations) throw continuationError(this.limits.maxContinuations)
    this.#blockBytes += payload.length
    if (this.#blockBytes > this.limits.maxHeaderList) throw headerListError(this.limits.maxHeaderList)
    parts.push(Buffer.from(payload))
    if ((flags & Flag.END_HEADERS) === 0) return
    this.#blockParts = null
    const block = Buffer.concat(parts)
    this.#block(id, this.#blockEndStream, block, 0, block.length)
  }

  /** A complete header block, buf[start, end): decoded whatever its stream's state, or the dynamic table would go out of step. */
  #block(id: number, endStream: boolean, buf: Buffer, start: number, end: number): void {
    const decoded = this.#blocks.get(buf, start, end, this.#decoder.generation) ?? this.#decode(buf, start, end)
    const st = this.streams.get(id)
    if (st === undefined) return this.#unknownStream(id)
    const status = decoded.status
    const raw = decoded.fields
    if (st.answered) {
      if (!endStream) return this.#streamError(st, 'trailers without END_STREAM')
      if (status > 0 || decoded.pseudo) return this.#streamError(st, 'a pseudo-header in trailers')
      return this.#streamEnded(st, raw)
    }
    if (decoded.pseudo) return this.#streamError(st, 'an unexpected pseudo-header in a response')
    if (status >= 100 && status < 200) {
      if (endStream) this.#streamError(st, 'an informational response ended the stream')
      return
    }
    if (status < 200) return this.#streamError(st, 'response headers without a valid :status')
    st.answered = true
    if (st.id > this.#highestAnswered) this.#highestAnswered = st.id
    st.handler.onHeaders(status, raw, noop, '')
    if (endStream) this.#streamEnded(st, null)
  }

  /**
   * Decodes a block; one that left the dynamic table unchanged is kept, so
   * that the same octets later are not decoded again. Its fields are shared
   * by every response that carries it, so they are copies (not views of this
   * read) and frozen: handlers only read them.
   */
  #decode(buf: Buffer, start: number, end: number): ResponseBlock {
    const generation = this.#decoder.generation
    const raw = this.#decoder.decode(buf.subarray(start, end), this.limits.maxHeaderList)
    // A response's first field is :status (pseudo-headers come first, and a response has only this one).
    const status = raw.length >= 2 && raw[0]!.equals(STATUS) ? statusOf(raw[1]!) : -1
    const fields = status > 0 ? raw.slice(2) : raw
    if (this.#decoder.generation !== generation || end - start > this.#blocks.maxBytes) return { status, fields, pseudo: hasPseudo(fields, 0) }
    const kept = Object.freeze(fields.map((b) => Buffer.from(b))) as Buffer[]
    const decoded = { status, fields: kept, pseudo: hasPseudo(kept, 0) }
    this.#blocks.set(buf, start, end, generation, decoded)
    return decoded
  }

  /** The server ended the stream: the answer is complete. */
  #streamEnded(st: Stream, trailers: Buffer[] | null): void {
    this.#forget(st)
    // A server may answer before it has read the whole body: the rest is not sent (RFC 9113 8.1), and the stream closed.
    if (st.wire.body !== null && st.bodyAt < st.wire.body.length) this.#send(rstStreamFrame(st.id, H2Code.NO_ERROR))
    this.client.finish(st, trailers)
    this.#endIfDrained()
  }

  #rstStream(id: number, payload: Buffer): void {
    if (id === 0 || payload.length !== 4) throw new H2ProtocolError('malformed RST_STREAM', H2Code.FRAME_SIZE_ERROR)
    const st = this.streams.get(id)
    if (st === undefined) return
    this.#forget(st)
    const code = payload.readUInt32BE(0)
    // REFUSED_STREAM: not processed (RFC 9113 8.7), so it may go again.
    if (code === H2Code.REFUSED_STREAM && !st.answered) this.client.resend([st])
    else this.client.fail(st, streamError(`Stream closed with error code NGHTTP2_${codeName(code)}`, 'ERR_HTTP2_STREAM_ERROR'))
    this.#endIfDrained()
  }

  #settings(flags: number, id: number, payload: Buffer): void {
    if (id !== 0) throw new H2ProtocolError('SETTINGS on a stream')
    if (flags & Flag.ACK) {
      if (payload.length !== 0) throw new H2ProtocolError('SETTINGS ACK with a payload', H2Code.FRAME_SIZE_ERROR)
      return
    }
    if (payload.length % 6 !== 0) throw new H2ProtocolError('SETTINGS length not a multiple of 6', H2Code.FRAME_SIZE_ERROR)
    for (let at = 0; at < payload.length; at += 6) {
      const value = payload.readUInt32BE(at + 2)
      switch (payload.readUInt16BE(at)) {
        case Setting.MAX_CONCURRENT_STREAMS:
          this.#maxStreams = Math.min(this.clientLimit, value)
          break
        case Setting.INITIAL_WINDOW_SIZE: {
          if (value > MAX_WINDOW) throw flowControlError('INITIAL_WINDOW_SIZE above 2^31-1')
          const delta = value - this.#peerInitialWindow
          this.#peerInitialWindow = value
          for (const st of this.streams.values()) {
            st.sendWindow += delta
            if (st.sendWindow > MAX_WINDOW) throw flowControlError(`INITIAL_WINDOW_SIZE took stream ${st.id}'s window past 2^31-1`)
          }
          break
        }
        case Setting.ENABLE_PUSH:
          // A server never sets it to 1 (RFC 9113 6.5.2), and no other value than 0 or 1 is valid.
          if (value !== 0) throw new H2ProtocolError(`ENABLE_PUSH ${value} from a server`)
          break
        case Setting.MAX_FRAME_SIZE:
          if (value < DEFAULT_MAX_FRAME || value > 0xffffff) throw new H2ProtocolError('MAX_FRAME_SIZE out of range')
          this.#maxFrame = value
          break
        default: // HEADER_TABLE_SIZE bounds an encoder table we never use; unknown settings are ignored
      }
    }
    this.#owe(SETTINGS_ACK, 'SETTINGS')
    this.#flushBodies()
  }

  #goaway(id: number, payload: Buffer): void {
    if (id !== 0 || payload.length < 8) throw new H2ProtocolError('malformed GOAWAY', H2Code.FRAME_SIZE_ERROR)
    const lastId = payload.readUInt32BE(0) & 0x7fffffff
    this.#goingAway = true
    this.#goawayReceived = true
    this.#goawayCode = payload.readUInt32BE(4)
    // Streams above the last id were not processed: they go again on a new connection, in the order they were sent.
    const refused: Stream[] = []
    for (const st of this.streams.values()) if (st.id > lastId) refused.push(st)
    for (const st of refused) this.#forget(st)
    if (refused.length > 0) this.client.resend(refused)
    for (const [sid, st] of this.#lost) if (sid > lastId) st.handler.onRequestRefused?.()
    this.#lost.clear()
    this.#endIfDrained()
  }

  #windowUpdate(id: number, payload: Buffer): void {
    if (payload.length !== 4) throw new H2ProtocolError('malformed WINDOW_UPDATE', H2Code.FRAME_SIZE_ERROR)
    const increment = payload.readUInt32BE(0) & 0x7fffffff
    if (id === 0) {
      if (increment === 0) throw new H2ProtocolError('WINDOW_UPDATE of 0')
      this.#sendWindow += increment
      if (this.#sendWindow > MAX_WINDOW) throw flowControlError('WINDOW_UPDATE took the connection window past 2^31-1')
    } else {
      const st = this.streams.get(id)
      if (st === undefined) return
      if (increment === 0) return this.#streamError(st, 'WINDOW_UPDATE of 0')
      st.sendWindow += increment
      if (st.sendWindow > MAX_WINDOW) return this.#streamError(st, 'WINDOW_UPDATE took the stream window past 2^31-1', H2Code.FLOW_CONTROL_ERROR)
    }
    this.#flushBodies()
  }

  #flushBodies(): void {
    for (const st of [...this.#blocked]) this.#sendBody(st)
  }

  /** A frame for a stream we do not have: one we reset or that ended (ignored), or one never opened (a protocol error). */
  #unknownStream(id: number): void {
    if (id >= this.#nextId || id % 2 === 0) throw new H2ProtocolError(`a frame on stream ${id}, never opened`)
  }

  /** One stream broke the protocol: reset it (with `code`) and fail it; the connection goes on. */
  #streamError(st: Stream, why: string, code: number = H2Code.PROTOCOL_ERROR): void {
    this.#forget(st)
    this.client.fail(st, code === H2Code.FLOW_CONTROL_ERROR ? flowControlError(why) : new H2ProtocolError(why, code))
    this.#owe(rstStreamFrame(st.id, code), 'RST_STREAM')
    this.#endIfDrained()
  }

  /** The server broke the protocol: GOAWAY with the reason, and every stream on it fails with that error. */
  #connectionError(err: Error): void {
    const code = err instanceof H2ProtocolError ? err.h2Code : err instanceof HpackError ? H2Code.COMPRESSION_ERROR : H2Code.INTERNAL_ERROR
    this.#fail(err)
    this.#endWith(goawayFrame(0, code))
  }

  /** Ends the connection now: every stream still on it fails with `err`. */
  destroy(err: Error): void {
    this.#fail(err)
    this.socket.destroy()
  }

  /** No more streams on it, and every one still on it fails with `err`. */
  #fail(err: Error): void {
    this.#goingAway = true
    this.#ended = true
    this.#blocked.clear()
    this.#outLength = 0
    const streams = this.streams.values()
    this.streams.clear()
    for (const st of streams) this.client.fail(st, err)
  }

  /** After a GOAWAY, once its last stream ended: close it. */
  #endIfDrained(): void {
    if (this.#goingAway && this.streams.size === 0) this.end()
  }

  /** Closes an idle connection. */
  end(): void {
    if (this.#ended) return
    this.#ended = true
    this.#goingAway = true
    this.#flush()
    this.#endWith(goawayFrame(0, H2Code.NO_ERROR))
  }

  /** Writes a last frame and closes: once it is flushed, not when the server closes its side (Node's h2 server may never). */
  #endWith(last: Buffer): void {
    const socket = this.socket
    socket.once('finish', () => socket.destroy())
    const grace = setTimeout(() => socket.destroy(), END_GRACE_MS)
    socket.once('close', () => clearTimeout(grace))
    socket.end(last)
  }

  #closed(error: Error | null): void {
    this.#ended = true
    this.#goingAway = true
    const streams = this.streams.values()
    this.streams.clear()
    if (streams.length > 0) {
      const err = this.#goawayReceived
        ? streamError(`the server sent GOAWAY (${codeName(this.#goawayCode)}) and closed the connection before the stream ended`, 'HTTP2_GOAWAY')
        : (error ?? new errors.SocketError('other side closed'))
      for (const st of streams) this.client.fail(st, err)
    }
    this.client.sessionClosed(this, error)
  }
}

const STATUS = Buffer.from(':status')

/** Frames waiting for a flush go into a buffer of this size, grown when a cork holds more (a body), and not kept larger than OUT_KEEP. */
const OUT_INITIAL = 16 * 1024
const OUT_KEEP = 256 * 1024

/** A decoded response header block (or trailers): its :status (-1 without one), the other fields, and whether any of them is a pseudo-header. */
interface ResponseBlock {
  readonly status: number
  readonly fields: Buffer[]
  readonly pseudo: boolean
}

/** Copies `src` into `dst` at `at`: a frame of a few dozen octets by hand, which costs less than Buffer#copy's checks. */
function copyInto(src: Buffer, dst: Buffer, at: number): void {
  const n = src.length
  if (n > 64) {
    src.copy(dst, at)
    return
  }
  for (let i = 0; i < n; i++) dst[at + i] = src[i]!
}

/** A :status value as a number; -1 unless three digits 100-999. */
function statusOf(value: Buffer): number {
  if (value.length !== 3) return -1
  const a = value[0]! - 48
  const b = value[1]! - 48
  const c = value[2]! - 48
  return a >= 1 && a <= 9 && b >= 0 && b <= 9 && c >= 0 && c <= 9 ? a * 100 + b * 10 + c : -1
}

/** Any field name from `from` on that starts with ':'. */
function hasPseudo(raw: Buffer[], from: number): boolean {
  for (let i = from; i < raw.length; i += 2) if (raw[i]![0] === 0x3a) return true
  return false
}

/** A TLS socket whose ALPN did not choose h2: the server would read our frames as HTTP/1.1. */
function notH2(socket: TLSSocket): Error | null {
  const chosen = socket.alpnProtocol
  return chosen === 'h2' ? null : streamError(`ALPN chose ${chosen || 'no protocol'}, not h2`, 'HTTP2_ALPN')
}

function streamError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code })
}
