/**
 * One connection as the pool (connection-pool.ts) sees it, whatever it
 * speaks: hedgebench's HTTP/1.1 connection (h1-client.ts) or its HTTP/2
 * one (h2-client.ts, h2c and TLS). The part of undici's Client the pool
 * uses, and no more.
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
  /** Its last attempt was cancelled, and closing the connection is what that cost (HTTP/1.1). */
  cancelledLast = false
  /**
   * It said 'connect' and has not yet written a request since (cleared at
   * the next microtask in any case): the attempt it writes next opened it.
   */
  justOpened = false

  constructor(
    readonly conn: Connection,
    /**
     * An HTTP/2 connection (H2Client), shared by attempts: it says itself
     * which cancels reset a stream ('stream-reset') and which streams a
     * GOAWAY sent again ('stream-resent'), and never fails a queue from
     * under a callback.
     */
    readonly h2: boolean,
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
