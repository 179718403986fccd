/**
 * Why a replica was ejected, as every report says it: in a mix (--targets)
 * the target whose failures did it comes first ("POST /c: 5 failures in a
 * row (last: HTTP 503)"), since each target's lane ejects on its own
 * failures and the phase's list holds all of them; outside a mix, the cause.
 */
import type { EjectionEvent } from '../results/run-result.js'

export function ejectionCause(e: EjectionEvent): string {
  return e.target === undefined ? e.cause : `${e.target}: ${e.cause}`
}
