/**
 * One origin's HTTP/1.1 connections: one exchange per connection, never
 * pipelining. An attempt takes an idle connection (or the pool opens one)
 * and gives it back at its last callback, so a hedge never queues behind the
 * original. Stopping an HTTP/1.1 exchange means closing its connection: a
 * cancelled attempt costs one, counted ('cancel-close') once it has closed.
 *
 * An https:// connection with ALPN starts here too, until its socket says h2
 * (h2-pool.ts): `give` keeps only the connections that still speak HTTP/1.1.
 */
import { H1Client, type H1ClientOptions } from './h1-client.js'
import { PooledConnection } from './connection.js'

export class H1Pool {
  /** Connections with no attempt in flight. */
  readonly #idle: PooledConnection[] = []

  /** An idle connection, or null (open another). */
  take(): PooledConnection | null {
    return this.#idle.pop() ?? null
  }

  /** The attempt on `c` made its last callback. */
  give(c: PooledConnection): void {
    if (!c.h2 && !c.conn.destroyed && !c.conn.closed) this.#idle.push(c)
  }

  /** The pool is closing: nothing is handed out again. */
  clear(): void {
    this.#idle.length = 0
  }
}

/** hedgebench's own HTTP/1.1 connection to `url`. */
export function openH1(url: string, options: H1ClientOptions): PooledConnection {
  return new PooledConnection(new H1Client(url, options), false)
}

/**
 * A cancelled attempt left `c`: the connection is closed to stop it. True
 * when that is a close to wait for (and count once it happens); a second
 * cancel on a connection already closing is not.
 */
export function closesOnCancel(c: PooledConnection): boolean {
  const first = !c.cancelledLast
  c.cancelledLast = true
  return first
}
