/**
 * One connection as the pool (connection-pool.ts) sees it, whatever it
 * speaks: hedgebench's HTTP/1.1 connection (h1-client.ts), its h2c client
 * (h2-client.ts), or undici's Client for h2 over TLS (undici-connection.ts).
 * The part of undici's Client the pool uses, and no more.
 */
import type { Dispatcher } from 'undici'

export interface Connection {
  readonly destroyed: boolean
  readonly closed: boolean
  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean
  close(): Promise<unknown>
  destroy(err?: Error | null): Promise<unknown>
  /** 'connect' per socket opened (its first request is written next, in the same call); 'disconnect' per socket closed. */
  on(event: 'connect' | 'disconnect', listener: (...args: unknown[]) => void): unknown
}

/** What the pool keeps beside each connection: attempts in flight, its protocol, and what its attempts cost. */
export class PooledConnection {
  inFlight = 0
  /** Speaks h2 (prior knowledge, or ALPN chose it): attempts share it. */
  h2 = false
  /** Its last attempt was cancelled, and closing the connection is what that cost (HTTP/1.1). */
  cancelledLast = false
  /**
   * undici is failing this connection's queue (a connection error) until
   * the next microtask: no attempt may join it meanwhile. An h2 session is
   * shared, so an attempt re-dispatched from an error callback would
   * otherwise land in the very queue undici is emptying, and undici's
   * `assert(client[kSize] === 0)` throws out of a socket event (the process
   * dies; seen with h2c against an HTTP/1.1 server).
   */
  failing = false
  /**
   * It said 'connect' and has not yet written a request since (cleared at
   * the next microtask in any case): the attempt it writes next opened it.
   */
  justOpened = false

  constructor(
    readonly conn: Connection,
    /**
     * hedgebench's own h2c connection (H2Client): it says itself which
     * cancels reset a stream ('stream-reset') and which streams a GOAWAY
     * sent again ('stream-resent'), and never fails a queue from under a
     * callback.
     */
    readonly ownStreams: boolean,
  ) {}

  /** A socket of this connection just opened: its next request is written in the same call. */
  opened(): void {
    this.justOpened = true
    queueMicrotask(this.#clearOpened)
  }

  readonly #clearOpened = (): void => {
    this.justOpened = false
  }

  /** True once, for the first attempt written on a socket just opened. */
  takeOpened(): boolean {
    if (!this.justOpened) return false
    this.justOpened = false
    return true
  }
}
