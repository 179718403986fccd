/**
 * Outlier ejection: which replicas may be picked right now. A replica that
 * fails `consecutiveFailures` attempts in a row (a transport error or a 5xx)
 * is taken out of rotation for a back-off that doubles with each ejection,
 * then readmitted on probation: its first outcome decides whether it stays
 * or is ejected again at once. This is Envoy's consecutive-5xx outlier
 * detection (base_ejection_time × number of ejections) with gRPC
 * round_robin's habit of not picking a subchannel in TRANSIENT_FAILURE:
 * without it, originals keep going round-robin to a dead replica and a hedge
 * budget cannot cover a third of the traffic.
 *
 * Never ejects the last replica standing (Envoy's max_ejection_percent):
 * with every replica failing, the errors are the target's, not the picker's.
 */
import type { EjectionConfig } from '../results/run-result.js'

/** Failures in a row that eject a replica; the first ejection's length, ms (doubling with each further one); the longest. */
export type EjectionPolicy = EjectionConfig

export const DEFAULT_EJECTION: EjectionPolicy = { consecutiveFailures: 5, baseEjectionMs: 1000, maxEjectionMs: 10_000 }

/** Who hears about ejections (the phase statistics, which time and count them). */
export interface EjectionListener {
  replicaEjected(origin: string, cause: string, forMs: number): void
  replicaReadmitted(origin: string): void
}

interface ReplicaState {
  failures: number
  ejections: number
  /** performance.now() until which the replica is out, or 0 when it is in. */
  ejectedUntil: number
  /** Readmitted and not yet answered: one failure ejects it again. */
  probation: boolean
  lastCause: string
}

export class ReplicaHealth {
  readonly #states = new Map<string, ReplicaState>()
  #ejected = 0

  constructor(
    readonly origins: readonly string[],
    readonly policy: EjectionPolicy,
    readonly listener: EjectionListener | null = null,
    readonly now: () => number = () => performance.now(),
  ) {
    for (const origin of origins) this.#states.set(origin, { failures: 0, ejections: 0, ejectedUntil: 0, probation: false, lastCause: '' })
  }

  /** May `origin` be picked now? Readmits it when its back-off has passed. */
  isAvailable(origin: string): boolean {
    const s = this.#states.get(origin)
    if (!s || s.ejectedUntil === 0) return true
    if (this.now() < s.ejectedUntil) return false
    s.ejectedUntil = 0
    s.failures = 0 // failures of attempts sent before the ejection do not count against probation
    s.probation = true
    this.#ejected--
    this.listener?.replicaReadmitted(origin)
    return true
  }

  /** An attempt on `origin` ended: `failure` names what went wrong (an error code or "HTTP 503"), or is null. */
  record(origin: string, failure: string | null): void {
    const s = this.#states.get(origin)
    if (!s) return
    if (failure === null) {
      s.failures = 0
      s.probation = false
      return
    }
    if (s.ejectedUntil !== 0) return // answers still arriving from before the ejection
    s.failures++
    s.lastCause = failure
    if (s.probation || s.failures >= this.policy.consecutiveFailures) this.#eject(origin, s)
  }

  #eject(origin: string, s: ReplicaState): void {
    if (this.#ejected >= this.origins.length - 1) return
    const forMs = Math.min(this.policy.maxEjectionMs, this.policy.baseEjectionMs * 2 ** s.ejections)
    s.ejections++
    s.ejectedUntil = this.now() + forMs
    this.#ejected++
    const cause = `${s.failures} failure${s.failures === 1 ? '' : 's'} in a row (last: ${s.lastCause})`
    s.failures = 0
    this.listener?.replicaEjected(origin, cause, forMs)
  }
}
