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
