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
import type { EjectionConfig, TargetFailures } from '../results/run-result.js'

/** Failures in a row that eject a replica; the first ejection's length, ms (doubling with each further one); the longest. */
export type EjectionPolicy = EjectionConfig

export const DEFAULT_EJECTION: EjectionPolicy = { consecutiveFailures: 5, baseEjectionMs: 1000, maxEjectionMs: 10_000 }

/**
 * Who hears about ejections (the phase statistics, which time and count
 * them). `targets`: in a mix, whose failures the ones in a row were, most
 * first; null outside a mix.
 */
export interface EjectionListener {
  replicaEjected(origin: string, cause: string, forMs: number, targets: TargetFailures[] | null): void
  replicaReadmitted(origin: string): void
}

/** What a lane's policy and picker ask of outlier ejection. */
export interface ReplicaGate {
  /** May `origin` be picked now? Readmits it when its back-off has passed. */
  isAvailable(origin: string): boolean
  /** An attempt on `origin` ended: `failure` names what went wrong (an error code or "HTTP 503"), or is null. */
  record(origin: string, failure: string | null): void
}

/** Where failures come from: a lane, heard by its listener; in a mix, named by its target. */
interface Source {
  listener: EjectionListener | null
  target: string | null
}

interface ReplicaState {
  failures: number
  ejections: number
  /** performance.now() until which the replica is out, or 0 when it is in. */
  ejectedUntil: number
  /** Readmitted and not yet answered: one failure ejects it again. */
  probation: boolean
  lastCause: string
  /** The failures in a row by source (a mix's targets share the health), in order of their first failure; empty at 0 failures. */
  readonly by: Map<Source, number>
  /** The source whose failure ejected it: the one that hears of its readmission. */
  ejectedBy: Source | null
}

export class ReplicaHealth implements ReplicaGate {
  readonly #states = new Map<string, ReplicaState>()
  #ejected = 0
  readonly #own: Source

  constructor(
    readonly origins: readonly string[],
    readonly policy: EjectionPolicy,
    listener: EjectionListener | null = null,
    readonly now: () => number = () => performance.now(),
  ) {
    this.#own = { listener, target: null }
    for (const origin of origins)
      this.#states.set(origin, { failures: 0, ejections: 0, ejectedUntil: 0, probation: false, lastCause: '', by: new Map(), ejectedBy: null })
  }

  /**
   * A mix's target lane on this health, shared by the phase's targets as
   * Envoy's outlier detection is per host whatever the route: its failures
   * count in the replica's run with every other target's, and an ejection
   * is heard by the lane whose failure completed the run, naming each
   * target's share of it.
   */
  lane(listener: EjectionListener, target: string): ReplicaGate {
    const source: Source = { listener, target }
    return { isAvailable: (origin) => this.isAvailable(origin), record: (origin, failure) => this.#record(origin, failure, source) }
  }

  isAvailable(origin: string): boolean {
    const s = this.#states.get(origin)
    if (!s || s.ejectedUntil === 0) return true
    if (this.now() < s.ejectedUntil) return false
    s.ejectedUntil = 0
    resetRun(s) // failures of attempts sent before the ejection do not count against probation
    s.probation = true
    this.#ejected--
    s.ejectedBy?.listener?.replicaReadmitted(origin)
    s.ejectedBy = null
    return true
  }

  record(origin: string, failure: string | null): void {
    this.#record(origin, failure, this.#own)
  }

  #record(origin: string, failure: string | null, source: Source): void {
    const s = this.#states.get(origin)
    if (!s) return
    if (failure === null) {
      if (s.failures !== 0) resetRun(s)
      s.probation = false
      return
    }
    if (s.ejectedUntil !== 0) return // answers still arriving from before the ejection
    s.failures++
    s.by.set(source, (s.by.get(source) ?? 0) + 1)
    s.lastCause = failure
    if (s.probation || s.failures >= this.policy.consecutiveFailures) this.#eject(origin, s, source)
  }

  #eject(origin: string, s: ReplicaState, source: Source): void {
    if (this.#ejected >= this.origins.length - 1) return
    const forMs = Math.min(this.policy.maxEjectionMs, this.policy.baseEjectionMs * 2 ** s.ejections)
    s.ejections++
    s.ejectedUntil = this.now() + forMs
    this.#ejected++
    const cause = `${s.failures} failure${s.failures === 1 ? '' : 's'} in a row (last: ${s.lastCause})`
    const targets = source.target === null ? null : targetFailures(s.by)
    resetRun(s)
    s.ejectedBy = source
    source.listener?.replicaEjected(origin, cause, forMs, targets)
  }
}

function resetRun(s: ReplicaState): void {
  s.failures = 0
  s.by.clear()
}

/** Each target's failures of the run, most first (a tie: the first to fail first). */
function targetFailures(by: ReadonlyMap<Source, number>): TargetFailures[] {
  return [...by]
    .filter(([source]) => source.target !== null)
    .map(([source, failures]) => ({ target: source.target!, failures }))
    .sort((a, b) => b.failures - a.failures)
}
