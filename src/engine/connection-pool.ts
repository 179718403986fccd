/**
 * The engine's connections, per origin, one pool per transport behind one
 * `Connection` (connection.ts): HTTP/1.1 connections, one exchange each
 * (h1-pool.ts), and shared h2 sessions (h2-pool.ts). With `allowH2`, every
 * connection is hedgebench's own H2Client: h2c with prior knowledge on
 * http://, h2 by ALPN on https://. Without it, each attempt gets an HTTP/1.1
 * connection of its own (never pipelining). The hot path skips undici's Agent -> Pool -> Client layers
 * for one Map lookup and a pop.
 *
 * What the transports share is here: the origins, the lease each attempt
 * holds on its connection (given back at its last callback, before its
 * handler runs, so the caller's next attempt can have it), the -t deadlines,
 * and the events that say what the connections cost: 'connect' per new
 * connection, 'cancel-close' per connection closed because the attempt on it
 * was cancelled (HTTP/1.1), 'stream-reset' per cancelled attempt on a shared
 * h2 session (its stream is reset, the connection stays), and
 * 'stream-resent' per h2c stream a GOAWAY or REFUSED_STREAM left unprocessed
 * and H2Client sent again.
 *
 * After an error the connection is given back on the next microtask: undici
 * may be failing its whole queue (a connection error), and must not find a
 * new attempt in it while it does. A connection given back at an attempt's
 * last callback may still be finishing that response; the next attempt on it
 * waits in its queue, as it would in undici's Pool.
 *
 * The interface is the part of undici's Agent the engine uses: `dispatch`,
 * `close`, `destroy` and the events above.
 */
import { EventEmitter } from 'node:events'
import { buildConnector, type Dispatcher } from 'undici'
import type { Connection, PooledConnection } from './connection.js'
import { H1Pool, closesOnCancel, openH1 } from './h1-pool.js'
import { H2Pool } from './h2-pool.js'
import type { H2Limits } from './h2-limits.js'
import { tlsTrust, type TlsSettings } from './tls-options.js'
import { Deadline, DeadlineQueue, timeoutError } from './request-timeout.js'
import { HedgeCancelledError } from '../hedging/errors.js'
import { wantsHeaders, type Abort, type LegacyHandler } from './forwarding-handler.js'

export interface ConnectionPoolOptions {
  connectTimeoutMs: number
  keepAliveTimeout: number
  keepAliveMaxTimeout: number
  /** HTTP/2 on every connection, attempts sharing sessions: h2c with prior knowledge on http://, ALPN on https://. */
  allowH2: boolean
  /**
   * A precise deadline per attempt (-t), from its dispatch to its last byte
   * (see request-timeout.ts); absent = only undici's own coarse timeouts.
   */
  attemptTimeoutMs?: number
  /** Opens the sockets; default undici's own connector (with connectTimeoutMs, allowH2 and `tls`). Tests slow it down. */
  connector?: buildConnector.connector
  /** -k, --cacert, --cert/--key, --cname: how the default connector makes TLS connections. */
  tls?: TlsSettings
  /**
   * Per origin, the streams its server takes at once on one h2 session
   * (SETTINGS_MAX_CONCURRENT_STREAMS, read by the preflight): a session
   * carries no more, and a further attempt opens another session. Node
   * would otherwise queue it inside the client, counted as sent though no
   * server saw it. Absent: STREAMS_PER_SESSION.
   */
  streamLimits?: Readonly<Record<string, number>>
  /** h2: the sessions each origin's attempts are spread over (see above); absent: one, and another only when its streams are all in use. */
  connections?: number
  /** h2: what a server may make a connection hold; absent: DEFAULT_H2_LIMITS. */
  h2Limits?: H2Limits
}

/** One origin's connections: HTTP/1.1 ones, and h2 sessions when the run may speak h2. */
class Origin {
  readonly h1 = new H1Pool()
  readonly all: PooledConnection[] = []
  constructor(
    readonly url: string,
    /** null: HTTP/1.1 only (no allowH2). */
    readonly h2: H2Pool | null,
  ) {}

  /** A connection this attempt may use now, or null (open another). */
  take(): PooledConnection | null {
    return this.h2?.take() ?? this.h1.take()
  }

  /** The attempt on `c` made its last callback. */
  give(c: PooledConnection): void {
    c.inFlight--
    this.h1.give(c)
  }
}

export class ConnectionPool extends EventEmitter {
  readonly #origins = new Map<string, Origin>()
  readonly #keepAlive: { keepAliveTimeout: number; keepAliveMaxTimeout: number }
  /** Opens a socket: undici's connector (TLS with ALPN when allowH2), or the caller's. */
  readonly #connect: buildConnector.connector
  readonly #allowH2: boolean
  readonly #streamLimits: Readonly<Record<string, number>> | undefined
  readonly #connections: number | null
  readonly #deadlines: DeadlineQueue | null
  readonly #h2Limits: H2Limits | undefined
  /** Connections a cancel is closing that have not closed yet. */
  #closing = 0
  #closed = false

  constructor(options: ConnectionPoolOptions) {
    super()
    const h2 = options.allowH2
    this.#keepAlive = { keepAliveTimeout: options.keepAliveTimeout, keepAliveMaxTimeout: options.keepAliveMaxTimeout }
    // One connector (and TLS session cache) for every connection.
    this.#connect = options.connector ?? tlsConnector(options.tls ?? {}, options.connectTimeoutMs, h2)
    this.#allowH2 = h2
    this.#streamLimits = options.streamLimits
    this.#connections = h2 && options.connections !== undefined ? options.connections : null
    this.#deadlines = options.attemptTimeoutMs === undefined ? null : new DeadlineQueue(options.attemptTimeoutMs)
    this.#h2Limits = options.h2Limits
  }

  /** Connections made so far (every Client, idle or not). */
  get size(): number {
    let n = 0
    for (const o of this.#origins.values()) n += o.all.length
    return n
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const key = opts.origin as string
    let origin = this.#origins.get(key)
    if (origin === undefined) {
      if (this.#closed) {
        ;(handler as unknown as LegacyHandler).onError(new Error('the connection pool is closed'))
        return false
      }
      origin = new Origin(String(key), this.#allowH2 ? new H2Pool(this.#streamLimits?.[String(key)], this.#connections) : null)
      this.#origins.set(key, origin)
    }
    const c = origin.take() ?? this.#open(origin)
    c.inFlight++
    // Its callers (Attempts) speak undici's legacy handler protocol.
    const lease = new Lease(this, origin, c, handler as unknown as LegacyHandler)
    if (this.#deadlines) this.#deadlines.add(lease)
    return c.conn.dispatch(opts, lease as unknown as Dispatcher.DispatchHandler)
  }

  /** A new connection to `origin`, in the transport's pool it speaks. */
  #open(origin: Origin): PooledConnection {
    const h2 = origin.h2
    const c =
      h2 === null
        ? openH1(origin.url, { connect: this.#connect, ...this.#keepAlive })
        : h2.open(origin.url, { connect: this.#connect, ...(this.#h2Limits ? { limits: this.#h2Limits } : {}) }, this.#told)
    c.conn.on('connect', (...args: unknown[]) => {
      // The connection's first request is written right after this, in the same call (every Connection alike): that attempt opened it.
      c.opened()
      this.emit('connect', ...args)
    })
    c.conn.on('disconnect', () => this.#onDisconnect(c))
    origin.all.push(c)
    return c
  }

  readonly #told = (event: 'stream-reset' | 'stream-resent'): void => {
    this.emit(event)
  }

  /** A connection closed: because the attempt on it was cancelled (undici destroys an HTTP/1.1 socket to stop it)? */
  #onDisconnect(c: PooledConnection): void {
    if (!c.cancelledLast) return
    c.cancelledLast = false
    this.#closing--
    this.emit('cancel-close')
  }

  /** Every connection a cancel is closing has closed (and been counted): a phase may end. */
  settled(): boolean {
    return this.#closing === 0
  }

  /** A cancelled attempt (the loser of a race) left its connection: count what it cost. */
  attemptCancelled(c: PooledConnection): void {
    // An h2 connection counts the streams it really reset; an HTTP/1.1 socket is closed to stop the attempt on it, counted when it has closed.
    if (!c.h2 && closesOnCancel(c)) this.#closing++
  }

  /** Waits for in-flight attempts, then closes every connection. */
  async close(): Promise<void> {
    this.#closed = true
    const all = this.#clients()
    await Promise.all(all.map((c) => c.close()))
  }

  /** Aborts whatever is in flight and closes every connection now. */
  async destroy(err?: Error): Promise<void> {
    this.#closed = true
    await Promise.all(this.#clients().map((c) => c.destroy(err ?? null)))
  }

  #clients(): Connection[] {
    const all: Connection[] = []
    for (const o of this.#origins.values()) {
      for (const c of o.all) all.push(c.conn)
      o.h1.clear()
    }
    return all
  }
}

/** undici's connector with the run's TLS settings (its defaults when there are none). */
function tlsConnector(s: TlsSettings, timeoutMs: number, allowH2: boolean): buildConnector.connector {
  const connect = buildConnector({ timeout: timeoutMs, allowH2, ...tlsTrust(s) } as buildConnector.BuildOptions)
  const servername = s.servername
  if (servername === undefined) return connect
  // undici takes the server's name from a request's Host header (or :authority) when there is one; the run's name wins.
  return (opts, callback) => connect({ ...opts, servername }, callback)
}

/**
 * One attempt's hold on a Client, and its -t deadline: forwards undici's
 * callbacks to the attempt's handler, gives the Client back at the last one
 * (before the handler runs, so the caller's next attempt can have it), and
 * aborts the attempt with undici's own timeout error if its deadline comes
 * first. One wrapper object per attempt does both.
 */
class Lease extends Deadline implements LegacyHandler {
  #held = true
  #abort: Abort | null = null
  #headers = false
  #expired: Error | null = null
  /** The attempt's handler already heard its end (expired while waiting for a connection). */
  #told = false

  constructor(
    readonly pool: ConnectionPool,
    readonly origin: Origin,
    readonly client: PooledConnection,
    readonly inner: LegacyHandler,
  ) {
    super()
  }

  expire(): void {
    this.#expired = timeoutError(this.#abort === null ? 'connect' : this.#headers ? 'body' : 'headers')
    if (this.#abort) return this.#abort(this.#expired)
    // Still waiting for its connection (a slow connect, a full pool): the
    // caller hears of it now, at -t, not when the connection comes (that
    // took up to the connect timeout; seen: 368 ms for -t 300ms). The
    // connection stops the attempt when it calls onConnect, before anything
    // is written, and that error is not passed on a second time.
    this.#told = true
    this.inner.onError(this.#expired)
  }

  #release(): void {
    this.queue?.remove(this)
    if (!this.#held) return
    this.#held = false
    this.origin.give(this.client)
  }

  onConnect(abort: Abort, context?: unknown): void {
    this.#abort = abort
    // The first attempt written on a socket just opened waited for that connection (the Details' connect time).
    if (this.client.takeOpened()) this.inner.onConnectionOpened?.()
    // Expired while waiting for a connection: stop before the headers are
    // written, and before the attempt is told it reached the wire (it would
    // count as sent, and the server's count would be one short).
    if (this.#expired) return abort(this.#expired)
    this.inner.onConnect(abort, context)
  }

  wantsHeaders(statusCode: number): boolean {
    return wantsHeaders(this.inner, statusCode)
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText?: string): boolean {
    if (statusCode >= 200) this.#headers = true
    return this.inner.onHeaders(statusCode, headers, resume, statusText)
  }

  onData(chunk: Buffer): boolean {
    return this.inner.onData(chunk)
  }

  onComplete(trailers: string[] | Buffer[] | null): void {
    this.#release()
    this.inner.onComplete(trailers)
  }

  onError(err: Error): void {
    this.queue?.remove(this)
    if (err instanceof HedgeCancelledError) this.pool.attemptCancelled(this.client)
    // Given back once this callback is over: not to an attempt dispatched from inside it.
    queueMicrotask(() => this.#release())
    if (!this.#told) this.inner.onError(err)
  }

  onUpgrade(statusCode: number, headers: Buffer[] | string[] | null, socket: unknown): void {
    // The socket now belongs to the caller: this Client is not given back.
    this.queue?.remove(this)
    this.#held = false
    this.client.inFlight--
    this.inner.onUpgrade?.(statusCode, headers, socket)
  }

  onResponseStarted(): void {
    this.inner.onResponseStarted?.()
  }

  onBodySent(chunk: unknown): void {
    this.inner.onBodySent?.(chunk)
  }

  onRequestSent(): void {
    this.inner.onRequestSent?.()
  }

  onRequestRefused(): void {
    this.inner.onRequestRefused?.()
  }
}
