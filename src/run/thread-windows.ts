/**
 * One thread's side of running windows, the same for the main thread (a run
 * without --workers: windows.ts InThreadWindows) and for every worker thread
 * (worker-thread.ts), so the two cannot drift apart: the thread's
 * connections and dispatch options, its seeded randomness and its reading of
 * the target's clock; how a lane is built on them; how a window's requests
 * pick their lane (one coin flip, one shuffle of blocks); where an open-loop
 * schedule starts (one shard offset); and how an interruption ends the
 * window (stop sending, then, after a grace, destroy what is in flight).
 * Counting the window's connections, waiting for losers and the generator's
 * health are window-runner.ts's, also shared.
 */
import type { Dispatcher } from 'undici'
import { ConnectionPool } from '../engine/connection-pool.js'
import { sampleDates } from '../engine/date-sampler.js'
import { LoadWindow, type Lane, type WindowPlan } from '../engine/load-generator.js'
import { concurrencySeconds, scheduleSeconds, SendTimes, slotSpans } from '../engine/load-schedule.js'
import type { ScheduleSecond } from '../results/run-result.js'
import type { Shard } from '../results/shard-share.js'
import { InterruptedError } from '../core/interruption.js'
import type { WallClock } from '../core/wall-clock.js'
import { ClockOffsetEstimator } from '../stats/clock-offset.js'
import type { PhaseStats } from '../stats/phase-stats.js'
import type { RequestSink } from '../results/request-record.js'
import type { PhaseName } from '../results/run-result.js'
import type { CallMessages } from './grpc-target.js'
import { buildLane, delaySource, shuffledBlocks } from './lane.js'
import { ReplicaHealth } from '../hedging/replica-health.js'
import { protocolFor, requestSpec } from './protocol-choice.js'
import type { ResolvedHedge, ResolvedRun } from './resolve-options.js'
import type { LaneChoice, LaneHedging, TargetDraw, WindowSize } from './run-plan.js'
import { joinPath, type ResolvedTarget } from './target-spec.js'
import { targetDraw } from './target-draw.js'
import { WindowRunner } from './window-runner.js'

/** A lane of a window as a thread builds it: its phase, and how it hedges (null: plain). */
export interface ThreadLane {
  name: PhaseName
  /** Warm-up only: measure the delay on the requests after this many. */
  steadyAfter?: number
  hedge: LaneHedging | null
  /** A sweep's setting lane: its index, and its hedging in place of the run's. */
  setting?: { index: number; hedge: ResolvedHedge }
  /** A mix: the index of the target this lane sends. */
  target?: number
}

/** A window as a thread runs it: its lanes (built by `lane`), their choice, and this thread's share of the load. */
export interface ThreadWindow {
  lanes: Lane[]
  choice: LaneChoice
  /** A mix: the lanes are each phase's per target, a request's target drawn so (run-plan.ts). */
  targets?: TargetDraw | undefined
  size: WindowSize
  concurrency: number
  /** This thread's requests/s, or null (closed loop). */
  rate: number | null
  spreadMs: number
  /** With spreadMs: this thread's slots start this fraction of a step late (worker i of n: i/n). */
  spreadPhase?: number
  sink?: RequestSink | undefined
  /** Open loop: the instant (performance.now()) the schedule counts from, the same for every thread of a window; default: the window's start. */
  scheduleOrigin?: number
  /** Open loop: the schedule starts this much after its origin (scheduleOffsetMs). */
  scheduleOffsetMs: number
  /** A measured window of a --load-schedule run: each send's time by the schedule. */
  sendTimes?: SendTimes | undefined
  /** A measured window of a --concurrency-schedule run: when each slot takes part. */
  slotSpans?: ReadonlyArray<{ fromMs: number; untilMs: number }> | undefined
  /** --skip-first: each lane's (or group of lanes') first `count` requests go to its twin (load-generator.ts). */
  skip?: { count: number; lanes: Lane[]; group?: number } | undefined
}

export interface ThreadSetup {
  random: () => number
  /** The run's t0 on this thread's clock (performance.now()). */
  runStartedAt: number
  messages: CallMessages | undefined
  /** A mix: each target's per-call messages on this thread, by target index (grpc-target.ts targetMessages); undefined: its body on every call. */
  targetMessages?: ReadonlyArray<CallMessages | undefined>
  clock: WallClock
}

/** In-flight requests get this long to finish after an interruption, then they are aborted. */
export const INTERRUPT_GRACE_MS = 2000

/**
 * Open loop: where thread `index` of a shard's threads starts its schedule,
 * ms after the window's shared start: its place among the threads (each
 * sends at RATE/N, offset by i/RATE, so that together they send the global
 * schedule), after the shard's own place among the shards. Closed loop: 0.
 */
export function scheduleOffsetMs(cfg: Pick<ResolvedRun, 'rate' | 'shardOffsetMs'>, index = 0): number {
  return cfg.rate === null ? 0 : (index * 1000) / cfg.rate + (cfg.shardOffsetMs ?? 0)
}

/** A measured window's pacing by the run's schedule: this thread's send times or its slots' spans, and the series it records. */
export interface WindowPacing {
  sendTimes?: SendTimes
  slotSpans?: ReadonlyArray<{ fromMs: number; untilMs: number }>
  /** The window's schedule beside what it sent, per second (this thread's part), once it has run. */
  seconds(window: LoadWindow): ScheduleSecond[] | undefined
}

/**
 * Thread `index` of `threads` (on this shard): its part of a measured
 * window's schedule. A rate: the schedule's sends i, i+n, ... over every
 * thread of every shard (thread i of shard s of m: part i·m + s of n·m, as
 * -q's offsets interleave them). Requests in flight: its share of each stair
 * among the shard's threads (-c is each shard's own, as without a schedule).
 */
export function windowPacing(cfg: ResolvedRun, slots: number, index = 0, threads = 1): WindowPacing {
  const load = cfg.loadSchedule
  if (load) {
    const shard = cfg.shard ?? { index: 0, count: 1 }
    const part: Shard = { index: index * shard.count + shard.index, count: threads * shard.count }
    const sendTimes = new SendTimes(load, part)
    return { sendTimes, seconds: (w) => scheduleSeconds(sendTimes, w.sentPerSecond!, w.issued) }
  }
  const concurrency = cfg.concurrencySchedule
  if (concurrency) {
    const part: Shard = { index, count: threads }
    return { slotSpans: slotSpans(concurrency, slots, part), seconds: (w) => concurrencySeconds(concurrency, w.sentPerSecond!, part) }
  }
  return { seconds: () => undefined }
}

export class ThreadWindows {
  readonly agent: ConnectionPool
  /** Counts the window's connections, waits for its losers, judges the generator (window-runner.ts). */
  readonly runner: WindowRunner
  /** This thread's reading of the target's clock, over the whole run. */
  readonly clockOffset: ClockOffsetEstimator
  readonly #optsByOrigin: Map<string, Dispatcher.DispatchOptions>
  /** A mix: each target's options per origin, by target index. */
  readonly #targetOpts: Array<Map<string, Dispatcher.DispatchOptions>>
  #window: LoadWindow | null = null
  #stopped = false
  #grace: NodeJS.Timeout | null = null

  constructor(
    readonly cfg: ResolvedRun,
    readonly setup: ThreadSetup,
  ) {
    this.agent = createAgent(cfg)
    this.runner = new WindowRunner(this.agent, cfg.timeoutMs)
    this.clockOffset = new ClockOffsetEstimator(setup.clock)
    this.#optsByOrigin = buildDispatchOptions(cfg)
    this.#targetOpts = (cfg.targets ?? []).map((target) => buildDispatchOptions(cfg, target))
  }

  /** The thread was stopped (an interruption): no window sends any more. */
  get stopped(): boolean {
    return this.#stopped
  }

  /**
   * A window's lanes (or their --skip-first twins) on this thread's
   * connections, each counted by `statsFor(spec)`; `tagFor`: a lane's
   * LANE_HEADER value (lane.ts). A mix's targets of one phase (of one sweep
   * setting) share one outlier detection, as Envoy's is per host whatever
   * the route: a replica failing one target is out for all of them.
   */
  lanes(specs: readonly ThreadLane[], statsFor: (spec: ThreadLane) => PhaseStats, tagFor: (spec: ThreadLane) => string | null = () => null): Lane[] {
    const healths = new Map<string, ReplicaHealth>()
    const eject = this.cfg.eject
    return specs.map((spec) => {
      const key = `${spec.name} ${spec.setting?.index ?? ''}`
      const health = spec.target !== undefined && eject ? (healths.get(key) ?? new ReplicaHealth(this.cfg.origins, eject)) : null
      if (health) healths.set(key, health)
      return this.#lane(spec, statsFor(spec), tagFor(spec), health)
    })
  }

  /** A lane counted by `stats`; a hedged lane's delay source is made here, from its set-up; `health`: a mix's target lane's, shared (`lanes`). */
  #lane(spec: ThreadLane, stats: PhaseStats, tag: string | null, health: ReplicaHealth | null): Lane {
    if (spec.hedge) stats.hedging = spec.hedge.setup
    const cfg = spec.setting ? { ...this.cfg, hedge: spec.setting.hedge } : this.cfg
    const hedge = spec.hedge && { delay: delaySource(cfg.hedge, spec.hedge.setup.delayMs), minHedgeWindowMs: spec.hedge.minHedgeWindowMs }
    const target = spec.target === undefined ? null : this.cfg.targets![spec.target]!.name
    const shared = health && target !== null ? { health, target } : null
    const lane = buildLane(cfg, stats, hedge, sampleDates(this.agent.dispatch.bind(this.agent), this.clockOffset), this.setup.random, tag, shared)
    if (target === null) return lane
    // One renderer per target for the whole thread: its twin lanes (--skip-first), phases and settings number its calls on.
    const messages = this.setup.targetMessages?.[spec.target!]
    return { ...lane, optsByOrigin: this.#targetOpts[spec.target!]!, target, ...(messages ? { nextBody: messages.body } : {}) }
  }

  /** The window, built now (its clock starts); stopped at once when the thread already was. */
  open(w: ThreadWindow): LoadWindow {
    const plan: WindowPlan = {
      lanes: w.lanes,
      requests: w.size.requests,
      durationMs: w.size.durationMs,
      minDurationMs: w.size.minDurationMs,
      concurrency: w.concurrency,
      rate: w.rate,
      fanout: this.cfg.fanout,
      optsByOrigin: this.#optsByOrigin,
      ...(this.setup.messages ? { nextBody: this.setup.messages.body } : {}),
      runStartedAt: this.setup.runStartedAt,
      sink: w.sink,
      spreadMs: w.spreadMs,
      ...(w.spreadPhase === undefined ? {} : { spreadPhase: w.spreadPhase }),
      ...(w.scheduleOrigin === undefined ? {} : { scheduleOrigin: w.scheduleOrigin }),
      ...(w.scheduleOffsetMs ? { scheduleOffsetMs: w.scheduleOffsetMs } : {}),
      ...(w.sendTimes ? { sendTimes: w.sendTimes } : {}),
      ...(w.slotSpans ? { slotSpans: w.slotSpans } : {}),
      ...(w.sendTimes || w.slotSpans ? { countSends: true } : {}),
      ...(w.skip ? { skip: w.skip } : {}),
      ...chooser(w.choice, w.lanes.length, this.setup.random, w.targets),
    }
    const window = new LoadWindow(plan)
    this.#window = window
    if (this.#stopped) window.stop()
    return window
  }

  /** The window has ended: an interruption no longer has it to stop. */
  closeWindow(): void {
    this.#window = null
  }

  /** Stop sending; in-flight requests get `graceMs`, then they are aborted. */
  stop(graceMs = INTERRUPT_GRACE_MS): void {
    this.#stopped = true
    this.#window?.stop()
    if (this.#grace) clearTimeout(this.#grace)
    this.#grace = setTimeout(() => void this.agent.destroy(new InterruptedError()).catch(() => {}), graceMs)
  }

  /** Closes the connections (destroyed if they do not close). */
  async close(): Promise<void> {
    if (this.#grace) clearTimeout(this.#grace)
    await this.agent.close().catch(() => this.agent.destroy())
  }
}

/**
 * How a request picks its lane: one lane needs no choice; a fair coin
 * (interleaved); a seeded shuffle of blocks (a sweep: lane.ts). A mix: the
 * phase's lane so, then its target (targetDraw), lanes phase-major.
 */
function chooser(choice: LaneChoice, lanes: number, random: () => number, targets?: TargetDraw): Pick<WindowPlan, 'chooseLane'> {
  if (targets) {
    const count = targets.weights.length
    const phase = chooser(choice, lanes / count, random).chooseLane
    const target = targetDraw(targets, random)
    return { chooseLane: phase ? () => phase() * count + target() : target }
  }
  if (lanes < 2 || choice === 'one') return {}
  return { chooseLane: choice === 'coin' ? () => (random() < 0.5 ? 0 : 1) : shuffledBlocks(lanes, random) }
}

/** The connections: a free list of undici Clients per origin (see connection-pool.ts), used as an Agent. */
export function createAgent(cfg: ResolvedRun): ConnectionPool {
  const connectTimeoutMs = Math.min(cfg.timeoutMs, 10_000)
  const http2 = protocolFor(cfg).transport.http2
  return new ConnectionPool({
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 60_000,
    connectTimeoutMs,
    allowH2: http2,
    attemptTimeoutMs: cfg.timeoutMs,
    ...(cfg.streamLimits ? { streamLimits: cfg.streamLimits } : {}),
    ...(cfg.connections !== null ? { connections: cfg.connections } : {}),
    tls: cfg.tls,
    h2Limits: cfg.h2Limits,
  })
}

/** Dispatch options per target origin, framed by the run's protocol; built once. `target`: a target of a mix, its path joined onto each replica's. */
export function buildDispatchOptions(cfg: ResolvedRun, target?: ResolvedTarget): Map<string, Dispatcher.DispatchOptions> {
  const protocol = protocolFor(cfg)
  const spec = requestSpec(cfg, target)
  const map = new Map<string, Dispatcher.DispatchOptions>()
  for (const raw of cfg.urls) {
    const replica = new URL(raw)
    const opts = protocol.requestOptions(target ? new URL(joinPath(replica, target.path), replica) : replica, spec)
    map.set(opts.origin as string, opts)
  }
  return map
}
