/** Errors the hedging machinery creates, with stable codes for error counts. */

/** Reason given to losing attempts we abort. */
export class HedgeCancelledError extends Error {
  override name = 'HedgeCancelledError'
  readonly code = 'HEDGE_CANCELLED'
}

/** The per-request deadline passed before an acceptable answer. */
export class DeadlineExceededError extends Error {
  override name = 'DeadlineExceededError'
  readonly code = 'HEDGE_DEADLINE_EXCEEDED'
}

/**
 * Runs `cancel` with stack traces off. Cancelling a loser is control flow,
 * not a failure: its error's stack says nothing, yet capturing it (ours, and
 * undici's InformationalError for the socket it destroys, whose stack Node's
 * stream destroy() formats at once) was about 5 % of the CPU of a run that
 * hedges most requests.
 */
export function withoutStackTraces(cancel: () => void): void {
  const limit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    cancel()
  } finally {
    Error.stackTraceLimit = limit
  }
}
