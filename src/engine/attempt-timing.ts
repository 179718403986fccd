/**
 * Where an attempt's time went, as hey's "Details" breaks it down: the
 * timestamps an Attempt stamps (three performance.now() readings, no
 * allocation), and whether it opened the connection it was written on.
 *
 * A connection says 'connect' (the pool marks it here) and then,
 * synchronously in the same call, writes the request that was waiting for
 * it (its handler's onConnect). So an attempt whose onConnect runs while
 * the mark is set opened the connection; the mark is cleared at the next microtask in
 * any case, so a connection with no request written never marks a later one.
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

let connectedMark = false
const clearMark = (): void => {
  connectedMark = false
}

/** A connection was just opened; its first request is written next, in the same call (the pool's 'connect'). */
export function markConnectionOpened(): void {
  connectedMark = true
  queueMicrotask(clearMark)
}

/** True once, for the first attempt written on a connection that was just opened. */
export function takeConnectionMark(): boolean {
  if (!connectedMark) return false
  connectedMark = false
  return true
}
