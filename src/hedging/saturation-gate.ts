/**
 * Stop speculating during saturation (seed 004: "when the system is already
 * rejecting work to preserve stability, speculative duplicates should be
 * among the first optional operations to stop"). Besides the token budget,
 * a hedge is suppressed while any of these holds:
 *
 *   overload     a replica answered with an explicit overload signal in its
 *                response headers: 429, 503 with Retry-After, or a
 *                grpc-retry-pushback-ms; for the time it asked (Retry-After,
 *                pushback), else 1 s, at most 10 s. (gRPC's
 *                RESOURCE_EXHAUSTED and pushback in trailers come after the
 *                headers and are not read yet.)
 *   error-rate   more than `maxErrorRate` of the last ERROR_WINDOW attempts
 *                showed strain (a 5xx or a timeout; a refused connection is
 *                a dead replica, which ejection handles, not saturation)
 *   target-busy  the replica the hedge would go to already has
 *                `maxInflight` attempts of ours in flight (seed 004's
 *                per-host limit: "target_has_capacity"); off by default,
 *                since only the user knows a replica's capacity
 *
 * The gate only decides; the hedged request asks it before spending a
 * budget token, and the observer counts each refusal by its reason.
 */

import type { SaturationConfig, SuppressedHedges } from '../results/run-result.js'

export type SuppressReason = keyof SuppressedHedges

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

  /** An answer's status and raw headers: an explicit overload signal closes the gate for the time it asks. */
  answered(status: number, rawHeaders: readonly (Buffer | string)[] | null): void {
    if (!this.policy.obeyOverload) return
    const backoffMs = overloadBackoffMs(status, rawHeaders)
    if (backoffMs !== null) this.#overloadUntil = Math.max(this.#overloadUntil, this.now() + backoffMs)
  }
}

/**
 * The back-off an answer asks for, or null when it is no overload signal.
 * Only the rare statuses (429, 503) have their headers read, so a 200 costs
 * one comparison.
 */
export function overloadBackoffMs(status: number, rawHeaders: readonly (Buffer | string)[] | null): number | null {
  const headers = rawHeaders ?? []
  let retryAfter: string | null = null
  let pushback: string | null = null
  let grpcStatus: string | null = null
  if (status === 429 || status === 503) {
    for (let i = 0; i + 1 < headers.length; i += 2) {
      const name = headers[i]!.toString().toLowerCase()
      if (name === 'retry-after') retryAfter = headers[i + 1]!.toString()
      else if (name === 'grpc-retry-pushback-ms') pushback = headers[i + 1]!.toString()
      else if (name === 'grpc-status') grpcStatus = headers[i + 1]!.toString()
    }
  }
  if (pushback !== null) return clampBackoff(Number(pushback))
  if (status === 429 || (status === 503 && retryAfter !== null) || grpcStatus === '8') {
    return clampBackoff(retryAfter === null ? DEFAULT_BACKOFF_MS : retryAfterMs(retryAfter))
  }
  return null
}

/** Retry-After is delay-seconds or an HTTP date (RFC 9110 10.2.3). */
function retryAfterMs(value: string): number {
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return seconds * 1000
  const at = Date.parse(value)
  return Number.isFinite(at) ? at - Date.now() : DEFAULT_BACKOFF_MS
}

function clampBackoff(ms: number): number {
  if (!Number.isFinite(ms) || ms < 0) return DEFAULT_BACKOFF_MS
  return Math.min(MAX_BACKOFF_MS, ms)
}
