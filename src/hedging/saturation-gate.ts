/**
 * Stop speculating during saturation (the 'Controlled Duplication' article: "when the system is already
 * rejecting work to preserve stability, speculative duplicates should be
 * among the first optional operations to stop"). Besides the token budget,
 * a hedge is suppressed while any of these holds:
 *
 *   overload     a replica answered with an explicit overload signal: 429,
 *                503 with Retry-After, gRPC RESOURCE_EXHAUSTED; every hedge
 *                waits the time it asked (Retry-After, grpc-retry-pushback-ms),
 *                else 1 s, at most 10 s
 *   pushback     a replica's gRPC answer carried grpc-retry-pushback-ms
 *                (gRPC A6): hedges to that replica wait that long (at most
 *                10 s); a negative or unreadable one stops hedges to it for
 *                the rest of the phase
 *   error-rate   more than `maxErrorRate` of the last ERROR_WINDOW attempts
 *                showed strain (a timeout, or what the protocol calls strain:
 *                an HTTP 5xx, gRPC UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL,
 *                UNKNOWN, UNIMPLEMENTED, DATA_LOSS; a refused connection is
 *                a dead replica, which ejection handles, not saturation)
 *   target-busy  the replica the hedge would go to already has
 *                `maxInflight` attempts of ours in flight (the 'Controlled Duplication' article's
 *                per-host limit: "target_has_capacity"); off by default,
 *                since only the user knows a replica's capacity
 *
 * The gate only decides; the hedged request asks it before spending a
 * budget token, and the observer counts each refusal by its reason. It
 * never reads an answer itself: the run's Protocol turns the headers or
 * trailers into an OverloadSignal (protocol/http.ts, protocol/grpc.ts),
 * wherever the signal arrives.
 */

import type { SaturationConfig, SuppressedHedges } from '../results/run-result.js'

export type SuppressReason = keyof SuppressedHedges

/** What an answer asked of its client, read by the protocol (see Protocol.answerSignal / endSignal). */
export interface OverloadSignal {
  /** The replica shed load: no hedge anywhere for this long, ms (null: it did not say how long). */
  overloadMs?: number | null
  /** The replica pushed back (gRPC A6): no hedge to it for this long, ms; negative: none for the rest of the phase. */
  pushbackMs?: number
}

/** What makes the gate refuse a hedge (the fields are described on SaturationConfig). */
export type SaturationPolicy = SaturationConfig

export const DEFAULT_SATURATION: SaturationPolicy = { maxErrorRate: 0.25, maxInflight: null, obeyOverload: true }

/** Attempts the error rate is taken over. */
const ERROR_WINDOW = 100
/** The rate is not judged on fewer outcomes than this (one early failure is not saturation). */
const MIN_OUTCOMES = 20
const DEFAULT_BACKOFF_MS = 1000
const MAX_BACKOFF_MS = 10_000

export class SaturationGate {
  readonly #inflight = new Map<string, number>()
  /** Ring of the last ERROR_WINDOW outcomes (1 = failed). */
  readonly #outcomes = new Uint8Array(ERROR_WINDOW)
  #outcomeCount = 0
  #failures = 0
  #overloadUntil = 0
  /** Per replica origin: no hedge to it before this time (Infinity: never again). */
  readonly #pushbackUntil = new Map<string, number>()

  constructor(
    readonly policy: SaturationPolicy,
    readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Why a hedge to `target` must not be sent now, or null when it may. An
   * explicit overload answer stops every hedge; the error rate and the
   * in-flight limit stop speculation (a hedge on a timer), not the failover
   * that a non-fatal answer asks for (--non-fatal-status), which the budget
   * bounds already.
   */
  refuse(target: string, speculative: boolean): SuppressReason | null {
    if (this.#overloadUntil > 0 && this.now() < this.#overloadUntil) return 'overload'
    if (this.#pushbackUntil.size > 0 && this.now() < (this.#pushbackUntil.get(target) ?? 0)) return 'pushback'
    if (!speculative) return null
    const maxRate = this.policy.maxErrorRate
    const seen = Math.min(this.#outcomeCount, ERROR_WINDOW)
    if (maxRate !== null && seen >= MIN_OUTCOMES && this.#failures / seen > maxRate) return 'errorRate'
    const maxInflight = this.policy.maxInflight
    if (maxInflight !== null && (this.#inflight.get(target) ?? 0) >= maxInflight) return 'targetBusy'
    return null
  }

  launched(origin: string): void {
    if (this.policy.maxInflight !== null) this.#inflight.set(origin, (this.#inflight.get(origin) ?? 0) + 1)
  }

  settled(origin: string): void {
    if (this.policy.maxInflight !== null) this.#inflight.set(origin, (this.#inflight.get(origin) ?? 1) - 1)
  }

  /** An attempt ended, failed or not. */
  outcome(failed: boolean): void {
    const slot = this.#outcomeCount % ERROR_WINDOW
    if (this.#outcomeCount >= ERROR_WINDOW) this.#failures -= this.#outcomes[slot]!
    this.#outcomes[slot] = failed ? 1 : 0
    if (failed) this.#failures++
    this.#outcomeCount++
  }

  /** A replica's answer carried an overload signal (headers or trailers): close the gate, or the way to that replica, for the time it asks. */
  signal(origin: string, signal: OverloadSignal): void {
    if (!this.policy.obeyOverload) return
    const backoffMs = overloadBackoffMs(signal)
    if (backoffMs !== null) this.#overloadUntil = Math.max(this.#overloadUntil, this.now() + backoffMs)
    if (signal.pushbackMs !== undefined) {
      const until = signal.pushbackMs < 0 || !Number.isFinite(signal.pushbackMs) ? Infinity : this.now() + Math.min(MAX_BACKOFF_MS, signal.pushbackMs)
      this.#pushbackUntil.set(origin, Math.max(this.#pushbackUntil.get(origin) ?? 0, until))
    }
  }
}

/** How long an overload signal holds every hedge: the time it asked, else DEFAULT_BACKOFF_MS, at most MAX_BACKOFF_MS; null when it is no overload signal. */
export function overloadBackoffMs(signal: OverloadSignal | null): number | null {
  if (signal?.overloadMs === undefined) return null
  return clampBackoff(signal.overloadMs ?? DEFAULT_BACKOFF_MS)
}

function clampBackoff(ms: number): number {
  if (!Number.isFinite(ms) || ms < 0) return DEFAULT_BACKOFF_MS
  return Math.min(MAX_BACKOFF_MS, ms)
}
