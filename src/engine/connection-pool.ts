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
 * The interface is the part of undici's Agent the engine uses: `dispatch`,
 * `close`, `destroy` and a 'connect' event per new connection.
 */
import { EventEmitter } from 'node:events'
import { buildConnector, Client, type Dispatcher } from 'undici'
import { Deadline, DeadlineQueue, timeoutError } from './request-timeout.js'

export interface ConnectionPoolOptions {
  connectTimeoutMs: number
  keepAliveTimeout: number
  keepAliveMaxTimeout: number
  allowH2: boolean
  /**
   * A precise deadline per attempt (-t), from its dispatch to its last byte
   * (see request-timeout.ts); absent = only undici's own coarse timeouts.
   */
  attemptTimeoutMs?: number
  /** Opens the sockets; default undici's own connector (with connectTimeoutMs and allowH2). Tests slow it down. */
  connector?: buildConnector.connector
}

type Abort = (err?: Error) => void

/** undici's legacy handler protocol (what its core calls). */
interface LegacyHandler {
  onConnect(abort: Abort, context?: unknown): void
  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText: string): boolean
  onData(chunk: Buffer): boolean
  onComplete(trailers: string[] | null): void
  onError(err: Error): void
  onUpgrade?(statusCode: number, headers: Buffer[] | string[] | null, socket: unknown): void
  onResponseStarted?(): void
  onBodySent?(chunk: unknown): void
  onRequestSent?(): void
}

/**
 * One origin's connections. Each Client has one Lease for its whole life
 * (a Client carries one attempt at a time), and the free ones sit on a
 * stack that never shrinks: per attempt, no Lease object and no array
 * growth for the garbage collector (issue 14).
 */
/** A Lease's handler while it has no attempt: undici never calls it. */
const NO_HANDLER: LegacyHandler = {
  onConnect() {},
  onHeaders: () => true,
  onData: () => true,
  onComplete() {},
  onError() {},
}

class Origin {
  readonly #free: Lease[] = []
  #freeCount = 0
  readonly all: Client[] = []
  constructor(readonly url: string) {}

  takeFree(): Lease | undefined {
    return this.#freeCount > 0 ? this.#free[--this.#freeCount] : undefined
  }

  giveBack(lease: Lease): void {
    this.#free[this.#freeCount++] = lease
  }

  forgetFree(): void {
    this.#free.fill(undefined as unknown as Lease, 0, this.#freeCount)
    this.#freeCount = 0
  }
}

export class ConnectionPool extends EventEmitter {
  readonly #origins = new Map<string, Origin>()
  readonly #clientOptions: Client.Options
  readonly #deadlines: DeadlineQueue | null
  #closed = false

  constructor(options: ConnectionPoolOptions) {
    super()
    this.#clientOptions = {
      pipelining: 1,
      keepAliveTimeout: options.keepAliveTimeout,
      keepAliveMaxTimeout: options.keepAliveMaxTimeout,
      allowH2: options.allowH2,
      // One connector (and TLS session cache) for every connection.
      connect: options.connector ?? buildConnector({ timeout: options.connectTimeoutMs, allowH2: options.allowH2 }),
    }
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
      origin = new Origin(String(key))
      this.#origins.set(key, origin)
    }
    const lease = origin.takeFree() ?? this.#newClient(origin)
    // Its callers (Attempts) speak undici's legacy handler protocol.
    lease.hold(handler as unknown as LegacyHandler)
    if (this.#deadlines) this.#deadlines.add(lease)
    return lease.client.dispatch(opts, lease as unknown as Dispatcher.DispatchHandler)
  }

  #newClient(origin: Origin): Lease {
    const client = new Client(origin.url, this.#clientOptions)
    client.on('connect', this.#onConnect)
    origin.all.push(client)
    return new Lease(origin, client)
  }

  readonly #onConnect = (...args: unknown[]): void => {
    this.emit('connect', ...args)
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

  #clients(): Client[] {
    const all: Client[] = []
    for (const o of this.#origins.values()) {
      all.push(...o.all)
      o.forgetFree()
    }
    return all
  }
}

/**
 * A Client's hold by its current attempt, and the attempt's -t deadline:
 * forwards undici's callbacks to the attempt's handler, gives the Client
 * back at the last one (before the handler runs, so the caller's next
 * attempt can have it), and aborts the attempt with undici's own timeout
 * error if its deadline comes first. One object per Client, refilled by
 * `hold` for each attempt: undici makes no callback after the last one
 * (onComplete, onError), and the Client is free only from then on.
 */
class Lease extends Deadline implements LegacyHandler {
  #held = false
  #abort: Abort | null = null
  #headers = false
  #expired: Error | null = null
  inner: LegacyHandler = NO_HANDLER

  constructor(
    readonly origin: Origin,
    readonly client: Client,
  ) {
    super()
  }

  /** The Client is the attempt's until its last callback. */
  hold(inner: LegacyHandler): void {
    this.inner = inner
    this.#held = true
    this.#abort = null
    this.#headers = false
    this.#expired = null
  }

  expire(): void {
    this.#expired = timeoutError(this.#headers)
    this.#abort?.(this.#expired)
  }

  #release(): void {
    this.queue?.remove(this)
    if (!this.#held) return
    this.#held = false
    if (!this.client.destroyed && !this.client.closed) this.origin.giveBack(this)
  }

  onConnect(abort: Abort, context?: unknown): void {
    this.#abort = abort
    // Expired while waiting for a connection: stop before the headers are
    // written, and before the attempt is told it reached the wire (it would
    // count as sent, and the server's count would be one short).
    if (this.#expired) return abort(this.#expired)
    this.inner.onConnect(abort, context)
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText: string): boolean {
    if (statusCode >= 200) this.#headers = true
    return this.inner.onHeaders(statusCode, headers, resume, statusText)
  }

  onData(chunk: Buffer): boolean {
    return this.inner.onData(chunk)
  }

  onComplete(trailers: string[] | null): void {
    this.#release()
    this.inner.onComplete(trailers)
  }

  onError(err: Error): void {
    this.queue?.remove(this)
    // undici may be failing the Client's whole queue (a connection error):
    // give the Client back once that is over, not to an attempt dispatched
    // from inside this callback.
    queueMicrotask(() => this.#release())
    this.inner.onError(err)
  }

  onUpgrade(statusCode: number, headers: Buffer[] | string[] | null, socket: unknown): void {
    // The socket now belongs to the caller: this Client is not given back.
    this.queue?.remove(this)
    this.#held = false
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
}
