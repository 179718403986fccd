/**
 * Building one lane of a measured window (its statistics, its hedging
 * policy, its dispatcher): the same for the main thread and for every
 * worker thread, so the two can never drift apart.
 */
import type { Dispatcher } from 'undici'
import { fixedDelay, RollingPercentileDelay, type DelaySource } from '../hedging/delay-source.js'
import { hedged } from '../engine/hedge-interceptor.js'
import { resolvePolicy } from '../hedging/policy.js'
import type { Lane } from '../engine/load-generator.js'
import type { PhaseStats, PhaseStatsOptions } from '../stats/phase-stats.js'
import { redactUrl } from '../core/redact.js'
import { RoundRobin } from '../hedging/replica-picker.js'
import { ReplicaHealth } from '../hedging/replica-health.js'
import { SaturationGate } from '../hedging/saturation-gate.js'
import type { ResolvedHedge, ResolvedRun } from './resolve-options.js'
import { delayPercentileOf } from '../core/delay-spec.js'
import type { PhaseName } from '../results/run-result.js'
import { protocolFor } from './protocol-choice.js'
import { withHeaders } from '../protocol/request-headers.js'
import { LANE_HEADER } from '../wire/stats.js'

/** A mix's target lane: the health its phase's targets share, and the target's name (thread-windows.ts). */
export interface SharedHealth {
  health: ReplicaHealth
  target: string
}

/** How a lane hedges; null = plain (one attempt per request). */
export interface LaneHedge {
  delay: DelaySource
  minHedgeWindowMs: number
}

export function phaseStatsOptions(cfg: ResolvedRun, name: PhaseName, runStartedAt: number, steadyAfter?: number): PhaseStatsOptions {
  const protocol = protocolFor(cfg)
  return {
    name,
    slowMs: cfg.slowMs,
    replicas: cfg.urls.map((url) => redactUrl(url, cfg.showSecret)), // the per-replica figures carry the URL into every output
    fanout: cfg.fanout,
    openLoop: cfg.rate !== null,
    runStartedAt,
    ...(steadyAfter === undefined ? {} : { steadyAfter }),
    errorKind: (err) => protocol.errorKind(err),
    earlyCancelMs: cfg.crossCheckGraceMs,
  }
}

/**
 * The lane's dispatcher: the hedging policy (max 1 attempt when plain) over
 * the connections (whose leases carry the exact -t deadline). `tag`: the
 * lane's value of LANE_HEADER, on each of its requests (a sweep's lane, for a
 * target that counts lanes apart), or null. `shared`: a mix's target lane,
 * on its phase's one health.
 */
export function buildLane(
  cfg: ResolvedRun,
  stats: PhaseStats,
  hedge: LaneHedge | null,
  dispatch: Dispatcher.Dispatch,
  random: () => number,
  tag: string | null = null,
  shared: SharedHealth | null = null,
): Lane {
  // Each lane ejects on its own evidence (a phase starts with every replica in rotation), but for a mix's targets of one phase: one health.
  const health = shared ? shared.health.lane(stats, shared.target) : cfg.eject ? new ReplicaHealth(cfg.origins, cfg.eject, stats) : null
  if (health) stats.ejections = []
  const policy = resolvePolicy({
    delay: hedge?.delay ?? 0,
    maxAttempts: hedge ? cfg.hedge.maxAttempts : 1,
    budgetPct: cfg.hedge.budgetPct,
    nonFatalStatus: cfg.hedge.nonFatalStatus,
    deadlineMs: cfg.hedge.deadlineMs,
    minHedgeWindowMs: hedge?.minHedgeWindowMs ?? 0,
    parallel: cfg.hedge.parallel,
    cancel: cfg.hedge.cancel,
    header: cfg.hedge.header,
    // Every phase sends the same requests: a key on each logical request of the warm-up and plain phases too.
    idempotencyKey: cfg.hedge.idempotencyKey,
    unsafeHedge: cfg.hedge.unsafeHedge,
    tie: hedge !== null && (cfg.hedge.tied ?? false),
    replicas: cfg.origins,
    health,
    // Only a hedging lane has hedges to hold back.
    saturation: hedge && cfg.saturation ? new SaturationGate(cfg.saturation) : null,
    random,
    observer: stats,
  })
  const hedging = hedged(dispatch, policy, protocolFor(cfg))
  return { stats, dispatch: tag === null ? hedging : tagged(hedging, tag), picker: new RoundRobin(cfg.origins, health, cfg.firstReplica ?? 0) }
}

/** Each logical request of the lane carries LANE_HEADER, so every copy of it does (a hedge is its original's options plus the hedge header). */
function tagged(dispatch: Dispatcher.Dispatch, lane: string): Dispatcher.Dispatch {
  // A window hands the same options for every request to one replica (a -d template a new object each): tagged once.
  const tagged = new WeakMap<Dispatcher.DispatchOptions, Dispatcher.DispatchOptions>()
  return (opts, handler) => {
    let withLane = tagged.get(opts)
    if (!withLane) {
      withLane = { ...opts, headers: withHeaders(opts.headers, [LANE_HEADER, lane]) }
      tagged.set(opts, withLane)
    }
    return dispatch(withLane, handler)
  }
}

/** The percentile a measured or adaptive delay follows (auto = p95). */
export function delayPercentile(hedge: ResolvedHedge): number {
  return delayPercentileOf(hedge.delay) ?? 95
}

/** Fixed, or a rolling percentile of recent original attempts starting at `delayMs` (--adaptive). */
export function delaySource(hedge: ResolvedHedge, delayMs: number): DelaySource {
  if (!hedge.adaptive || hedge.parallel) return fixedDelay(delayMs)
  return new RollingPercentileDelay({
    percentile: delayPercentile(hedge),
    initialMs: delayMs,
    minMs: hedge.delayMinMs,
    maxMs: hedge.delayMaxMs,
    ...('requests' in hedge.adaptiveWindow ? { windowRequests: hedge.adaptiveWindow.requests } : { windowMs: hedge.adaptiveWindow.ms }),
  })
}

/**
 * A lane per request for a window of `lanes` lanes: each block of `lanes`
 * requests holds every lane once, in a seeded random order, so each lane
 * gets its share exactly (to one request when the window is cut short) and
 * no lane runs at a time of its own.
 */
export function shuffledBlocks(lanes: number, random: () => number): () => number {
  const block = Array.from({ length: lanes }, (_, i) => i)
  let next = lanes
  return () => {
    if (next === lanes) {
      // Fisher-Yates
      for (let i = lanes - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1))
        ;[block[i], block[j]] = [block[j]!, block[i]!]
      }
      next = 0
    }
    return block[next++]!
  }
}
