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
 * Every session is hedgebench's own H2Client, which counts the streams it
 * resets and resends itself: h2c with prior knowledge on http://, and h2
 * over TLS on https:// (ALPN must choose h2: the pre-run check refused an
 * origin whose server would not, and a connection whose server does not
 * fails its streams).
 */
import { H2Client, type H2ClientOptions } from './h2-client.js'
import { PooledConnection } from './connection.js'

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
    for (const c of this.#sessions) if (c.inFlight < this.streams && !c.conn.destroyed && !c.conn.closed) return c
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
      if (best === null || c.inFlight < best.inFlight) best = c
    }
    this.#turn = all.length === 0 ? 0 : (this.#turn + 1) % all.length
    return open < n ? null : best
  }

  /**
   * hedgebench's own HTTP/2 connection (h2c or TLS), shared before it has
   * even connected. It says which cancels reset a stream and which streams
   * a GOAWAY sent again: `told` hears both.
   */
  open(url: string, options: Omit<H2ClientOptions, 'maxStreams'>, told: (event: 'stream-reset' | 'stream-resent') => void): PooledConnection {
    const client = new H2Client(url, { ...options, maxStreams: this.streams })
    client.on('stream-reset', () => told('stream-reset'))
    client.on('stream-resent', () => told('stream-resent'))
    const c = new PooledConnection(client, true)
    this.#sessions.push(c)
    return c
  }
}
