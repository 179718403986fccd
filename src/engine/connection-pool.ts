/**
 * The engine's connections: per origin, a free list of undici `Client`s
 * (pipelining 1, one connection each). Every attempt takes a Client that has
 * no attempt of its own in flight (or a new one), and gives it back when
 * undici makes the attempt's last callback. So a hedge always gets a
 * connection of its own (it never queues behind the original on a
 * pipelining-1 connection), and the hot path skips the Agent -> Pool ->
 * Client layers (an origin lookup, a scan of the pool's clients, two more
 * DispatcherBase.dispatch calls) for one Map lookup and a pop.
 *
 * After an error the Client is given back on the next microtask: undici may
 * be failing its whole queue (a connection error), and must not find a new
 * attempt in it while it does.
 *
 * A Client taken back at an attempt's last callback may still be finishing
 * that response (undici frees the socket on the next turn); the next attempt
 * on it waits in its queue and is written when the socket is free, as it
 * would in undici's Pool. An attempt aborted on the wire (a cancelled hedge,
 * a timeout) destroys its socket; the Client reconnects for its next attempt.
 *
 * HTTP/2 connections are shared instead, as a real h2 client shares them:
 * every attempt to an origin is a stream on an h2 session (a Client with up
 * to STREAMS_PER_SESSION streams; a further session only when those are all
 * busy). A cancelled attempt is then a stream reset (RST_STREAM) and the
 * session lives on. With `allowH2`, an http:// origin speaks h2c with prior
 * knowledge (known to be h2 before it connects) on hedgebench's own
 * H2Client (h2-client.ts); an https:// connection (undici's Client) is
 * h2 only if ALPN says so, and is shared from then on: until then, and for
 * a server that only speaks HTTP/1.1, each attempt gets a connection of its
 * own as above (never HTTP/1.1 pipelining).
 *
 * With `connections` (--connections, ghz's), an origin's attempts are
 * spread over exactly that many h2 sessions instead: its first attempts open
 * them, and each later one goes to the session with the fewest streams in
 * flight (ties take turns), where it waits, not yet sent, while that session
 * is at its server's limit. An https:// origin is shared from its first
 * attempt then, as h2c is: the run's pre-run check has refused any whose ALPN
 * did not choose h2, so its first attempts need not each open a connection
 * while the handshake is under way.
 *
 * The interface is the part of undici's Agent the engine uses: `dispatch`,
 * `close`, `destroy` and events that say what the connections cost:
 * 'connect' per new connection, 'cancel-close' per connection closed
 * because the attempt on it was cancelled (HTTP/1.1: undici destroys the
 * socket), 'stream-reset' per cancelled attempt on a shared h2 session
 * (its stream is reset, the connection stays), and 'stream-resent' per h2c
 * stream a GOAWAY or REFUSED_STREAM left unprocessed and H2Client sent again.
 */
import { EventEmitter } from 'node:events'
import { buildConnector, Client, type Dispatcher } from 'undici'
import { markConnectionOpened } from './attempt-timing.js'
import { H1Client } from './h1-client.js'
import { H2Client } from './h2-client.js'
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
}

/**
 * Streams one h2 session carries at once, as undici's Client allows by
 * default (and Node's h2 server's usual peer limit); a further session opens
 * only when every session is that busy.
 */
const STREAMS_PER_SESSION = 100

/** What the pool needs of one connection: an undici Client (h2, ALPN), or an H1Client (HTTP/1.1). */
interface Connection {
  readonly destroyed: boolean
  readonly closed: boolean
  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean
  close(): Promise<unknown>
  destroy(err?: Error | null): Promise<unknown>
  on(event: 'connect' | 'disconnect', listener: (...args: unknown[]) => void): unknown
}

/** What a connection carries for the pool: attempts in flight, its protocol, and whether its last attempt was cancelled. */
interface PooledClient extends Connection {
  inFlight: number
  /** Speaks h2 (prior knowledge, or ALPN chose it): attempts share it. */
  h2: boolean
  cancelledLast: boolean
  /**
   * undici is failing this Client's queue (a connection error) until the
   * next microtask: no attempt may join it meanwhile. An h2 session is
   * shared, so an attempt re-dispatched from an error callback would
   * otherwise land in the very queue undici is emptying, and undici's
   * `assert(client[kSize] === 0)` throws out of a socket event (the process
   * dies; seen with h2c against an HTTP/1.1 server).
   */
  failing: boolean
  /**
   * hedgebench's own h2c connection (H2Client): it says itself which cancels
   * reset a stream ('stream-reset') and which streams a GOAWAY sent again
   * ('stream-resent'), and never fails a queue from under a callback.
   */
  ownStreams?: boolean
}

class Origin {
  /** HTTP/1.1 Clients with no attempt in flight. */
  readonly free: PooledClient[] = []
  /** h2 sessions, shared by attempts. */
  readonly shared: PooledClient[] = []
  readonly all: PooledClient[] = []
  /** Streams one h2 session of this origin carries at once: the server's limit, at most STREAMS_PER_SESSION. */
  readonly streams: number
  /** Where the next look for the least busy session starts (--connections): ties take turns. */
  #turn = 0
  constructor(
    readonly url: string,
    serverLimit: number | undefined,
    /** --connections: the sessions its attempts are spread over; null: one, and another when it is full. */
    readonly connections: number | null,
  ) {
    this.streams = Math.max(1, Math.min(STREAMS_PER_SESSION, serverLimit ?? STREAMS_PER_SESSION))
  }

  /** A Client this attempt may use now, or null (open another). */
  take(): PooledClient | null {
    if (this.connections !== null) return this.#spread(this.connections)
    for (const c of this.shared) if (c.inFlight < this.streams && !c.failing && !c.destroyed && !c.closed) return c
    return this.free.pop() ?? null
  }

  /**
   * --connections: null while fewer than `n` sessions are open (the caller
   * opens one), else the one with the fewest attempts in flight, looked for
   * from a start that moves on each time, so that equally busy sessions take
   * turns. A full one still takes it: the attempt waits there, unsent.
   */
  #spread(n: number): PooledClient | null {
    const all = this.shared
    let open = 0
    let best: PooledClient | null = null
    for (let k = 0; k < all.length; k++) {
      const c = all[(this.#turn + k) % all.length]!
      if (c.destroyed || c.closed) continue
      open++
      if (!c.failing && (best === null || c.inFlight < best.inFlight)) best = c
    }
    this.#turn = all.length === 0 ? 0 : (this.#turn + 1) % all.length
    return open < n ? null : best
  }

  /** The attempt on `client` made its last callback. */
  give(client: PooledClient): void {
    client.inFlight--
    if (!client.h2 && !client.destroyed && !client.closed) this.free.push(client)
  }

  /** `client` speaks h2 from now on: streams on it, up to the session's limit. */
  share(client: PooledClient): void {
    if (client.h2) return
    client.h2 = true
    if (client instanceof Client) client.pipelining = this.streams
    this.shared.push(client)
  }
}

export class ConnectionPool extends EventEmitter {
  readonly #origins = new Map<string, Origin>()
  readonly #clientOptions: Client.Options
  /** Opens a socket: undici's connector (TLS with ALPN when allowH2), or the caller's. */
  readonly #connect: buildConnector.connector
  readonly #allowH2: boolean
  readonly #streamLimits: Readonly<Record<string, number>> | undefined
  readonly #connections: number | null
  readonly #deadlines: DeadlineQueue | null
  /** Connections a cancel is closing that have not closed yet. */
  #closing = 0
  #closed = false

  constructor(options: ConnectionPoolOptions) {
    super()
    const h2 = options.allowH2
    this.#clientOptions = {
      // One attempt per HTTP/1.1 connection; an h2 session takes more once it is known to be one (Origin.share).
      pipelining: 1,
      ...(h2 ? { maxConcurrentStreams: STREAMS_PER_SESSION } : {}),
      keepAliveTimeout: options.keepAliveTimeout,
      keepAliveMaxTimeout: options.keepAliveMaxTimeout,
      allowH2: h2,
    }
    // One connector (and TLS session cache) for every connection.
    this.#connect = options.connector ?? tlsConnector(options.tls ?? {}, options.connectTimeoutMs, h2)
    this.#allowH2 = h2
    this.#streamLimits = options.streamLimits
    this.#connections = h2 && options.connections !== undefined ? options.connections : null
    this.#deadlines = options.attemptTimeoutMs === undefined ? null : new DeadlineQueue(options.attemptTimeoutMs)
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
      origin = new Origin(String(key), this.#streamLimits?.[String(key)], this.#connections)
      this.#origins.set(key, origin)
    }
    const client = origin.take() ?? this.#newClient(origin)
    client.inFlight++
    // Its callers (Attempts) speak undici's legacy handler protocol.
    const lease = new Lease(this, origin, client, handler as unknown as LegacyHandler)
    if (this.#deadlines) this.#deadlines.add(lease)
    return client.dispatch(opts, lease as unknown as Dispatcher.DispatchHandler)
  }

  #newClient(origin: Origin): PooledClient {
    const h2c = this.#allowH2 && origin.url.startsWith('http:')
    const client = h2c ? this.#h2Client(origin) : this.#allowH2 ? this.#undiciClient(origin) : (new H1Client(origin.url, { connect: this.#connect, keepAliveTimeout: this.#clientOptions.keepAliveTimeout!, keepAliveMaxTimeout: this.#clientOptions.keepAliveMaxTimeout! }) as unknown as PooledClient)
    client.inFlight = 0
    client.h2 = false
    client.cancelledLast = false
    client.failing = false
    // Prior knowledge (h2c), or --connections over TLS (the pre-run check saw ALPN choose h2): share it before it has even connected.
    if (h2c || origin.connections !== null) origin.share(client)
    client.on('connect', this.#onConnect)
    client.on('disconnect', () => this.#onDisconnect(client))
    origin.all.push(client)
    return client
  }

  /** h2c (prior knowledge): hedgebench's own HTTP/2 connection, which counts its resets and resent streams itself. */
  #h2Client(origin: Origin): PooledClient {
    const client = new H2Client(origin.url, { connect: this.#connect, maxStreams: origin.streams })
    client.on('stream-reset', this.#onStreamReset)
    client.on('stream-resent', this.#onStreamResent)
    return Object.assign(client, { ownStreams: true }) as unknown as PooledClient
  }

  readonly #onStreamReset = (): void => {
    this.emit('stream-reset')
  }

  readonly #onStreamResent = (): void => {
    this.emit('stream-resent')
  }

  /** An undici Client on https:// that speaks h2 if ALPN chooses it. */
  #undiciClient(origin: Origin): PooledClient {
    const connect = this.#connect
    // Each socket says which protocol ALPN chose: an h2 one is shared.
    const client = new Client(origin.url, {
      ...this.#clientOptions,
      connect: (opts, callback) =>
        connect(opts, (...args: buildConnector.CallbackArgs) => {
          const socket = args[1] as { alpnProtocol?: string | false } | null
          if (socket?.alpnProtocol === 'h2') origin.share(client)
          callback(...args)
        }),
    }) as unknown as PooledClient
    return client
  }

  readonly #onConnect = (...args: unknown[]): void => {
    // The connection's first request is written right after this, in the same call (undici's Client and H1Client alike).
    markConnectionOpened()
    this.emit('connect', ...args)
  }

  /** A connection closed: because the attempt on it was cancelled (undici destroys an HTTP/1.1 socket to stop it)? */
  #onDisconnect(client: PooledClient): void {
    if (!client.cancelledLast) return
    client.cancelledLast = false
    this.#closing--
    this.emit('cancel-close')
  }

  /** Every connection a cancel is closing has closed (and been counted): a phase may end. */
  settled(): boolean {
    return this.#closing === 0
  }

  /** A cancelled attempt (the loser of a race) left its connection: count what it cost. */
  attemptCancelled(client: PooledClient, sent: boolean): void {
    if (client.ownStreams) return // it counts the streams it really reset
    if (!client.h2) {
      // undici destroys an HTTP/1.1 socket to stop the attempt on it: counted when it has closed.
      if (!client.cancelledLast) this.#closing++
      client.cancelledLast = true
      return
    }
    if (sent) this.emit('stream-reset') // aborted before its headers: no stream to reset
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
      all.push(...o.all)
      o.free.length = 0
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
  /** Inside the attempt's onConnect: an abort now stops it before its headers are written. */
  #connecting = false
  /** The attempt's handler already heard its end (expired while waiting for a connection). */
  #told = false

  constructor(
    readonly pool: ConnectionPool,
    readonly origin: Origin,
    readonly client: PooledClient,
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
    // Expired while waiting for a connection: stop before the headers are
    // written, and before the attempt is told it reached the wire (it would
    // count as sent, and the server's count would be one short).
    if (this.#expired) return abort(this.#expired)
    this.#connecting = true
    this.inner.onConnect(abort, context)
    this.#connecting = false
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
    if (err instanceof HedgeCancelledError) this.pool.attemptCancelled(this.client, !this.#connecting)
    // undici may be failing the Client's whole queue (a connection error):
    // give the Client back once that is over, not to an attempt dispatched
    // from inside this callback (a shared h2 session is not given back, so
    // it is marked failing until then). A cancel or our own deadline only
    // ends this attempt: the session stays usable.
    const own = err instanceof HedgeCancelledError || err === this.#expired || this.client.ownStreams === true
    if (!own) this.client.failing = true
    queueMicrotask(() => {
      if (!own) this.client.failing = false
      this.#release()
    })
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
