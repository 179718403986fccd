/**
 * Why a replica was ejected, as every report says it. In a mix (--targets)
 * the phase's targets share the replicas' health, so the failures in a row
 * may be several targets': the cause is led by whose they were, "POST /c:"
 * when one target's, "4 on POST /c, 1 on GET /a:" when several; outside a
 * mix, the cause alone.
 */
import type { EjectionEvent } from '../results/run-result.js'

export function ejectionCause(e: EjectionEvent): string {
  const targets = e.targets ?? []
  if (targets.length === 0) return e.cause
  const whose = targets.length === 1 ? targets[0]!.target : targets.map((t) => `${t.failures} on ${t.target}`).join(', ')
  return `${whose}: ${e.cause}`
}
