/**
 * The error hedgebench aborts its own in-flight requests with when a run is
 * interrupted (Ctrl-C, after the grace period). Such a request did not fail
 * at the target: it is counted as `interrupted`, outside every latency and
 * error figure, so the abort times never enter the percentiles.
 */
export const INTERRUPTED_CODE = 'HEDGEBENCH_INTERRUPTED'

export class InterruptedError extends Error {
  override name = 'InterruptedError' as const
  readonly code = INTERRUPTED_CODE

  constructor() {
    super('interrupted: aborted by hedgebench after the run was stopped')
  }
}

/** Is this error (or what it wraps) hedgebench's own abort after an interruption? */
export function isInterruption(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if ((e as { code?: unknown }).code === INTERRUPTED_CODE) return true
  }
  return false
}
