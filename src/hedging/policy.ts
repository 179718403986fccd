/**
 * The hedging policy as a plain value: what a production client would
 * configure (gRPC hedgingPolicy + retryThrottling, Finagle
 * BackupRequestFilter, Envoy hedge_policy). `normalizePolicy` checks a
 * caller's policy, fills defaults and applies the same caps gRPC applies.
 */
import { fixedDelay, type DelaySource } from './delay-source.js'
import { TokenBucket, UNLIMITED_BUDGET, type HedgeBudget } from './token-bucket.js'
import { guardObserver, type HedgeObserver } from './observer.js'
import { checkPolicy, replicaOrigin } from './policy-check.js'
import type { ReplicaGate } from './replica-health.js'
import type { SaturationGate } from './saturation-gate.js'
import type { CancelMode } from '../results/run-result.js'
import { DEFAULT_HEDGE_HEADER } from '../wire/stats.js'
import { eventNow } from '../core/event-clock.js'

/** gRPC: "Values greater than 5 are treated as 5." */
export const MAX_ATTEMPTS_CAP = 5
/** The hedge's number and a tied request's id travel in these (the target's side of them: wire/stats.ts). */
export { DEFAULT_HEDGE_HEADER, TIE_HEADER } from '../wire/stats.js'
/** What a tie-aware server answers for the copy it dropped. */
export const TIED_DROPPED_STATUS = 409
export const DEFAULT_NON_FATAL = [502, 503, 504]
/** Original plus one hedge: the tail-at-scale default (gRPC's maxAttempts 2). */
export const DEFAULT_MAX_ATTEMPTS = 2
/** Extra load a hedge budget allows, % of originals (gRPC retryThrottling's usual 10 %). */
export const DEFAULT_BUDGET_PCT = 10
/** Tokens the budget starts with and can hold: a small burst allowance. */
export const DEFAULT_BUDGET_BURST = 10

export interface HedgePolicy {
  /** Delay before each further attempt, ms, or a source that tracks it. */
  delay: number | DelaySource
  /** Total attempts including the original (1 = never hedge). */
  maxAttempts?: number
  /** Extra load allowed, % of originals; null = no budget. Default 10. */
  budgetPct?: number | null
  budgetBurst?: number
  /** Statuses that make an attempt fail fast and trigger the next hedge at once. */
  nonFatalStatus?: readonly number[]
  /** Absolute per-request deadline every attempt inherits, ms. */
  deadlineMs?: number | null
  /** A hedge is not sent when less than this is left before the deadline, ms. */
  minHedgeWindowMs?: number
  /** Send every attempt at once (delay 0). */
  parallel?: boolean
  /** abort: cancel losers at once (gRPC); ignore: let them finish and discard (Envoy). */
  cancel?: CancelMode
  /** Header naming the hedge number; null sends none. */
  header?: string | null
  /** Generate one Idempotency-Key per logical request, sent on every copy. */
  idempotencyKey?: boolean | (() => string)
  /** Hedge non-idempotent methods without a key anyway. */
  unsafeHedge?: boolean
  /** Tag every copy of a request with one tie id (TIE_HEADER): tied requests. */
  tie?: boolean
  /** Origins that serve the same data; hedges go to one not already tried. */
  replicas?: readonly string[]
  /** Outlier ejection: failing replicas are skipped for originals and hedges (see replica-health.ts). */
  health?: ReplicaGate | null
  /** Stop hedging while the replicas show saturation (see saturation-gate.ts). */
  saturation?: SaturationGate | null
  random?: () => number
  /** Any of the HedgeObserver callbacks, for metrics: the others are not called; one that throws is reported once (a process warning) and never fails a request. */
  observer?: Partial<HedgeObserver>
  now?: () => number
}

export interface ResolvedPolicy {
  delay: DelaySource
  maxAttempts: number
  budget: HedgeBudget
  nonFatal: ReadonlySet<number>
  deadlineMs: number | null
  minHedgeWindowMs: number
  parallel: boolean
  cancel: CancelMode
  header: string | null
  makeKey: (() => string) | null
  makeTie: (() => string) | null
  unsafeHedge: boolean
  replicas: readonly string[] | null
  health: ReplicaGate | null
  saturation: SaturationGate | null
  random: () => number
  observer: HedgeObserver | null
  now: () => number
}

/**
 * A caller's policy, checked (policy-check.ts: one line naming the field,
 * at creation), its replicas as origins and its observer guarded.
 */
export function normalizePolicy(policy: HedgePolicy): ResolvedPolicy {
  checkPolicy(policy)
  return resolvePolicy({
    ...policy,
    ...(policy.replicas ? { replicas: policy.replicas.map(replicaOrigin) } : {}),
    observer: policy.observer ? guardObserver(policy.observer) : undefined,
  })
}

/** The engine's own policy (run/lane.ts): its options were checked as a run's, its observer is the phase statistics, so nothing is wrapped on the hot path. */
export function resolvePolicy(policy: HedgePolicy & { observer?: HedgeObserver | undefined }): ResolvedPolicy {
  const budgetPct = policy.budgetPct === undefined ? DEFAULT_BUDGET_PCT : policy.budgetPct
  return {
    delay: typeof policy.delay === 'number' ? fixedDelay(policy.delay) : policy.delay,
    maxAttempts: Math.min(MAX_ATTEMPTS_CAP, Math.max(1, Math.floor(policy.maxAttempts ?? DEFAULT_MAX_ATTEMPTS))),
    budget: budgetPct === null ? UNLIMITED_BUDGET : new TokenBucket(budgetPct / 100, policy.budgetBurst ?? DEFAULT_BUDGET_BURST),
    nonFatal: new Set(policy.nonFatalStatus ?? DEFAULT_NON_FATAL),
    deadlineMs: policy.deadlineMs ?? null,
    minHedgeWindowMs: policy.minHedgeWindowMs ?? 0,
    parallel: policy.parallel ?? false,
    cancel: policy.cancel ?? 'abort',
    header: policy.header === undefined ? DEFAULT_HEDGE_HEADER : policy.header,
    makeKey: policy.idempotencyKey === true ? () => crypto.randomUUID() : policy.idempotencyKey || null,
    unsafeHedge: policy.unsafeHedge ?? false,
    makeTie: policy.tie ? () => crypto.randomUUID() : null,
    replicas: policy.replicas && policy.replicas.length > 0 ? policy.replicas : null,
    health: policy.health ?? null,
    saturation: policy.saturation ?? null,
    random: policy.random ?? Math.random,
    observer: policy.observer ?? null,
    now: policy.now ?? eventNow,
  }
}

/** RFC 9110 idempotent methods; anything else (POST, PATCH, unknown) is not. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'])

export function isIdempotentMethod(method: string): boolean {
  // The usual upper-case spelling is a plain Set hit: no toUpperCase per request.
  return IDEMPOTENT.has(method) || IDEMPOTENT.has(method.toUpperCase())
}

/**
 * Which rule lets a run send a request more than once, in the words the
 * report uses, or null when none does (the run is then refused): the
 * request is safe to repeat by its own description (`safe`: an idempotent
 * HTTP method, a gRPC method's idempotency_level), else each copy carries
 * one Idempotency-Key, else the user said --unsafe-hedge.
 */
export function hedgingAllowedBy(safe: string | null, flags: { idempotencyKey: boolean; unsafeHedge: boolean }): string | null {
  if (safe !== null) return safe
  if (flags.idempotencyKey) return '--idempotency-key'
  return flags.unsafeHedge ? '--unsafe-hedge' : null
}
