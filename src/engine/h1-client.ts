/**
 * One HTTP/1.1 connection, one exchange at a time: the pool's connection for
 * HTTP/1.1 targets (connection-pool.ts), in place of an undici `Client`.
 *
 * Why not undici's Client here: at -c 40 against a 20 ms target every
 * answer wakes the process on its own, and undici's per-exchange work
 * (a Request object, the kQueue bookkeeping, a setImmediate before each
 * reuse of a socket, llhttp through WebAssembly callbacks) made the
 * generator's own time per answer 2-3x a raw socket's. Answers that arrive
 * together wait for each other in the event loop, so that time lands in the
 * tail: p99 +3 to +6 ms over wrk with undici, within 1 ms of wrk with this
 * client (docs/benchmarks.md, `npm run bench`). HTTP/2 and gRPC stay on
 * undici; this speaks only what a load generator sends and reads.
 *
 * It speaks undici's legacy handler protocol to its callers (onConnect
 * right before the request is written, onHeaders, onData, onComplete,
 * onError, onRequestSent), raises undici's own error classes, opens its
 * socket with undici's connector (TLS, -k and connect timeouts as before)
 * and emits 'connect' and 'disconnect' as a Client does, so the pool and
 * the attempts cannot tell the two apart. As undici's Client does, it
 * closes the connection when an exchange is stopped before its end (the only
 * way to stop an HTTP/1.1 response) and after `connection: close`.
 *
 * The next request is written as soon as the previous answer has been read,
 * in the same turn of the event loop; a connection idle for longer than
 * the server's Keep-Alive hint (less a second) or keepAliveTimeout is
 * replaced before it is used, so a request is not written to a socket the
 * server is closing.
 */
import { EventEmitter } from 'node:events'
import type { Socket } from 'node:net'
import { errors, type buildConnector, type Dispatcher } from 'undici'
import { wantsHeaders, type LegacyHandler } from './forwarding-handler.js'
import { ParseError, ResponseParser, type ResponseSink } from './h1-response-parser.js'
import { requestBytes, type WireRequest } from './h1-request.js'
import { openSocket } from './open-socket.js'
import type { Connection } from './connection.js'
// Node 20's global `performance` is a lazy getter run at every use; the module's own object is read directly (several clock reads per request).
import { performance } from 'node:perf_hooks'

export interface H1ClientOptions {
  /** Opens the socket (undici's connector: TCP, or TLS with ALPN http/1.1). */
  connect: buildConnector.connector
  /** How long an idle connection may be reused without a hint from the server, ms. */
  keepAliveTimeout: number
  /** The longest a server's Keep-Alive hint may keep it, ms. */
  keepAliveMaxTimeout: number
}

/** undici's margin below the server's keep-alive hint. */
const KEEP_ALIVE_THRESHOLD_MS = 1000

interface Queued {
  opts: Dispatcher.DispatchOptions
  handler: LegacyHandler
}

export class H1Client extends EventEmitter implements ResponseSink, Connection {
  destroyed = false
  closed = false
  readonly #url: URL
  /** The host header's default (the URL's host, port included unless the default). */
  readonly #host: string
  readonly #options: H1ClientOptions
  readonly #parser = new ResponseParser(this)
  readonly #queue: Queued[] = []
  #socket: Socket | null = null
  /** Sockets attached and not yet closed (the current one, and any being dropped). */
  #sockets = 0
  #connecting = false
  /** The exchange on the wire, and what it asked of the connection. */
  #handler: LegacyHandler | null = null
  #closeAfter = false
  /** Inside a parser callback: a request dispatched now waits until the read is parsed. */
  #parsing = false
  #idleSince = 0
  #idleLimitMs: number
  #closeWaiters: Array<() => void> = []

  constructor(origin: string, options: H1ClientOptions) {
    super()
    this.#url = new URL(origin)
    this.#host = this.#url.host
    this.#options = options
    this.#idleLimitMs = options.keepAliveTimeout
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const h = handler as unknown as LegacyHandler
    if (this.closed) {
      h.onError(this.destroyed ? new errors.ClientDestroyedError() : new errors.ClientClosedError())
      return false
    }
    this.#queue.push({ opts, handler: h })
    if (!this.#parsing) this.#next()
    return true
  }

  /** Waits for the exchanges in flight and queued, then closes the connection. */
  close(): Promise<void> {
    this.closed = true
    return this.#whenDone()
  }

  /** Fails what is in flight and queued (with `err`) and closes the connection now. */
  destroy(err?: Error | null): Promise<void> {
    this.closed = true
    this.destroyed = true
    const e = err ?? new errors.ClientDestroyedError()
    for (const q of this.#queue.splice(0)) q.handler.onError(e)
    const h = this.#handler
    if (h !== null) this.#stop(h, e)
    return this.#whenDone()
  }

  // ---- the request side ----

  /** Writes the next queued request, opening a connection first if there is none (or only a stale one). */
  #next(): void {
    if (this.#handler !== null || this.#queue.length === 0) {
      this.#closeIfDone()
      return
    }
    let socket = this.#socket
    if (socket !== null && performance.now() - this.#idleSince > this.#idleLimitMs) {
      this.#drop(socket)
      socket = null
    }
    if (socket === null) {
      if (!this.#connecting) this.#open()
      return
    }
    const { opts, handler } = this.#queue.shift()!
    let wire: WireRequest
    try {
      wire = requestBytes(opts, this.#host)
    } catch (err) {
      handler.onError(err as Error)
      return this.#next()
    }
    this.#handler = handler
    this.#closeAfter = wire.close
    handler.onConnect((err?: Error) => this.#abort(handler, err))
    if (this.#handler !== handler) return // stopped in onConnect: never written
    this.#parser.expect(wire.head)
    socket.write(wire.bytes)
    handler.onRequestSent?.()
  }

  /** An attempt stops its own exchange (a cancel, a deadline): as undici does, the connection goes with it. */
  #abort(handler: LegacyHandler, err?: Error): void {
    if (this.#handler !== handler) return // already over
    this.#stop(handler, err ?? new errors.RequestAbortedError())
  }

  #stop(handler: LegacyHandler, err: Error): void {
    this.#handler = null
    this.#parser.abandon()
    const socket = this.#socket
    handler.onError(err)
    if (socket !== null) this.#drop(socket)
  }

  // ---- the connection ----

  #open(): void {
    this.#connecting = true
    const url = this.#url
    openSocket(this.#options.connect, url, (err, socket) => {
      this.#connecting = false
      if (err !== null) return this.#connectFailed(err)
      if (this.destroyed) {
        socket!.destroy()
        return this.#closeIfDone()
      }
      this.#attach(socket!)
      this.emit('connect', url, [this])
      this.#next()
    })
  }

  /** As undici's Client: every request waiting for this connection fails with the connector's error. */
  #connectFailed(err: Error): void {
    for (const q of this.#queue.splice(0)) q.handler.onError(err)
    this.emit('connectionError', this.#url, [this], err)
    this.#closeIfDone()
  }

  #attach(socket: Socket): void {
    this.#socket = socket
    this.#parser.reset()
    this.#sockets++
    this.#idleSince = performance.now()
    this.#idleLimitMs = this.#options.keepAliveTimeout
    let error: Error | null = null
    socket.on('data', (chunk: Buffer) => this.#feed(socket, chunk))
    socket.on('error', (err: Error) => {
      error = err
    })
    socket.on('close', () => this.#closed(socket, error))
  }

  /** Parses what `socket` read (or, with null, what a pause left over), then writes a request dispatched meanwhile. */
  #feed(socket: Socket, chunk: Buffer | null): void {
    if (socket !== this.#socket) return
    this.#parsing = true
    try {
      const more = chunk === null ? this.#parser.resume() : this.#parser.execute(chunk)
      if (!more) socket.pause()
      else if (socket.isPaused()) socket.resume()
    } catch (err) {
      const h = this.#handler
      if (h !== null) this.#stop(h, err instanceof ParseError ? parserError(err) : (err as Error))
      else this.#drop(socket) // bytes nobody asked for: the connection cannot be trusted
    } finally {
      this.#parsing = false
    }
    this.#next()
  }

  readonly #resume = (): void => {
    const socket = this.#socket
    if (socket !== null) this.#feed(socket, null)
  }

  #closed(socket: Socket, error: Error | null): void {
    this.#sockets--
    if (socket === this.#socket) {
      this.#socket = null
      const h = this.#handler
      // A body that runs until the connection closes ends here; anything else was cut off.
      if (h !== null && !this.#parser.finish()) this.#stop(h, error ?? new errors.SocketError('other side closed'))
    }
    this.emit('disconnect', this.#url, [this], error ?? new errors.SocketError('closed'))
    if (!this.destroyed) this.#next()
    this.#closeIfDone()
  }

  #drop(socket: Socket): void {
    if (this.#socket === socket) this.#socket = null
    socket.destroy()
  }

  // ---- the parser's callbacks (ResponseSink) ----

  wantsHeaders(status: number): boolean {
    const h = this.#handler
    return h !== null && wantsHeaders(h, status)
  }

  onResponseHeaders(status: number, rawHeaders: Buffer[], statusText: string): boolean {
    const h = this.#handler
    return h === null ? true : h.onHeaders(status, rawHeaders, this.#resume, statusText)
  }

  onResponseBody(chunk: Buffer): boolean {
    const h = this.#handler
    return h === null ? true : h.onData(chunk)
  }

  onResponseEnd(rawTrailers: Buffer[] | null): void {
    const h = this.#handler
    if (h === null) return
    this.#handler = null
    const parser = this.#parser
    const socket = this.#socket
    if (socket !== null && (this.#closeAfter || !parser.keepAlive)) this.#drop(socket)
    else {
      this.#idleSince = performance.now()
      const hint = parser.keepAliveHintMs
      this.#idleLimitMs = hint === null ? this.#options.keepAliveTimeout : Math.min(hint - KEEP_ALIVE_THRESHOLD_MS, this.#options.keepAliveMaxTimeout)
    }
    h.onComplete(rawTrailers)
  }

  // ---- closing ----

  #whenDone(): Promise<void> {
    return new Promise((resolve) => {
      this.#closeWaiters.push(resolve)
      this.#closeIfDone()
    })
  }

  /** Closed and nothing left to do: drop the connection, and tell close()/destroy() once it is gone. */
  #closeIfDone(): void {
    if (!this.closed || this.#handler !== null || this.#queue.length > 0 || this.#connecting) return
    const socket = this.#socket
    if (socket !== null) this.#drop(socket) // its 'close' comes back here
    if (this.#sockets > 0) return
    const waiters = this.#closeWaiters.splice(0)
    for (const w of waiters) w()
  }
}

/** undici's error class, its message the parser's reason alone (reports count by it), what the bytes were as its data. */
function parserError(err: ParseError): Error {
  const e = new errors.HTTPParserError(err.reason) as Error & { data?: string }
  if (err.detail !== undefined) e.data = err.detail
  return e
}
