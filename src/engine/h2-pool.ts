/**
 * One origin's h2 sessions, shared as a real h2 client shares them: every
 * attempt is a stream on a session, up to the server's stream limit; a
 * further session opens only when those are all busy. A cancelled attempt is
 * a stream reset (RST_STREAM) and the session lives on.
 *
 * With `connections` (--connections, ghz's), the origin's attempts are
 * spread over exactly that many sessions instead: its first attempts open
 * them, and each later one goes to the session with the fewest streams in
 * flight (ties take turns), where it waits, not yet sent, while that session
 * is at its server's limit.
 *
 * h2c (prior knowledge) is hedgebench's own H2Client, which counts the
 * streams it resets and resends itself; h2 over TLS is undici's Client,
 * shared once ALPN chose h2 (until then it is an HTTP/1.1 connection of
 * h1-pool.ts).
 */
import type { buildConnector, Client } from 'undici'
import { H2Client } from './h2-client.js'
import { PooledConnection } from './connection.js'
import { UndiciConnection } from './undici-connection.js'

/**
 * Streams one h2 session carries at once, as undici's Client allows by
 * default (and Node's h2 server's usual peer limit); a further session opens
 * only when every session is that busy.
 */
export const STREAMS_PER_SESSION = 100

export class H2Pool {
  /** Sessions, shared by attempts. */
  readonly #sessions: PooledConnection[] = []
  /** Streams one session carries at once: the server's limit, at most STREAMS_PER_SESSION. */
  readonly streams: number
  /** Where the next look for the least busy session starts (--connections): ties take turns. */
  #turn = 0

  constructor(
    serverLimit: number | undefined,
    /** --connections: the sessions attempts are spread over; null: one, and another when it is full. */
    readonly connections: number | null,
  ) {
    this.streams = Math.max(1, Math.min(STREAMS_PER_SESSION, serverLimit ?? STREAMS_PER_SESSION))
  }

  /** A session this attempt may use now, or null (open another, or take an HTTP/1.1 connection). */
  take(): PooledConnection | null {
    if (this.connections !== null) return this.#spread(this.connections)
    for (const c of this.#sessions) if (c.inFlight < this.streams && !c.failing && !c.conn.destroyed && !c.conn.closed) return c
    return null
  }

  /**
   * --connections: null while fewer than `n` sessions are open (the caller
   * opens one), else the one with the fewest attempts in flight, looked for
   * from a start that moves on each time, so that equally busy sessions take
   * turns. A full one still takes it: the attempt waits there, unsent.
   */
  #spread(n: number): PooledConnection | null {
    const all = this.#sessions
    let open = 0
    let best: PooledConnection | null = null
    for (let k = 0; k < all.length; k++) {
      const c = all[(this.#turn + k) % all.length]!
      if (c.conn.destroyed || c.conn.closed) continue
      open++
      if (!c.failing && (best === null || c.inFlight < best.inFlight)) best = c
    }
    this.#turn = all.length === 0 ? 0 : (this.#turn + 1) % all.length
    return open < n ? null : best
  }

  /** `c` speaks h2 from now on: streams on it, up to the session's limit. */
  share(c: PooledConnection): void {
    if (c.h2) return
    c.h2 = true
    if (c.conn instanceof UndiciConnection) c.conn.share(this.streams)
    this.#sessions.push(c)
  }

  /**
   * h2c with prior knowledge: hedgebench's own HTTP/2 connection, shared
   * before it has even connected. It says which cancels reset a stream and
   * which streams a GOAWAY sent again: `told` hears both.
   */
  openH2c(url: string, connect: buildConnector.connector, told: (event: 'stream-reset' | 'stream-resent') => void): PooledConnection {
    const client = new H2Client(url, { connect, maxStreams: this.streams })
    client.on('stream-reset', () => told('stream-reset'))
    client.on('stream-resent', () => told('stream-resent'))
    const c = new PooledConnection(client, true)
    this.share(c)
    return c
  }

  /**
   * h2 over TLS: undici's Client, shared once a socket's ALPN chose h2, or at
   * once with --connections (the pre-run check refused any origin whose ALPN
   * did not choose h2, so its first attempts need not each open a connection
   * while the handshake is under way).
   */
  openTls(url: string, options: Client.Options, connect: buildConnector.connector): PooledConnection {
    let c: PooledConnection | null = null
    const conn = new UndiciConnection(url, options, connect, () => {
      if (c !== null) this.share(c)
    })
    c = new PooledConnection(conn, false)
    if (this.connections !== null) this.share(c)
    return c
  }
}
