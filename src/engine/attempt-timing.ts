/**
 * Where an attempt's time went, as hey's "Details" breaks it down: the
 * timestamps an Attempt stamps (three performance.now() readings, no
 * allocation), and whether it opened the connection it was written on.
 *
 * Whether it opened its connection comes on its lease (connection-pool.ts):
 * a connection says 'connect' and then, synchronously in the same call,
 * writes the request that was waiting for it, so the pool marks that
 * connection (connection.ts) and the lease of the next attempt written on
 * it tells the attempt (`onConnectionOpened`, just before its onConnect).
 */

/** What an attempt stamps; -1 = never reached. */
export interface AttemptTimes {
  /** Dispatched (the attempt's launch). */
  readonly launchedAt: number
  /** undici is about to write the headers: a connection is ready. */
  connectedAt: number
  /** The request (headers and body) was handed to the socket. */
  requestSentAt: number
  /** The response headers arrived. */
  firstByteAt: number
  /** This attempt waited for a connection that was opened for it. */
  openedConnection: boolean
}
