/**
 * Where a run's windows run: on this thread (InThreadWindows) or spread
 * over --workers threads (WorkerWindows). run.ts carries out its plan
 * (run-plan.ts) on one of them and does not know which: each takes a window
 * of planned lanes and answers with one PhaseResult per lane. Both build
 * their windows with thread-windows.ts (here, or in each worker thread), so
 * the lane choice, the shard offset and the grace-then-destroy of an
 * interruption are written once.
 */
import { PhaseStats } from '../stats/phase-stats.js'
import { mergePhases, SnapshotPhaseStats, type MeasuredPhase } from '../stats/phase-snapshot.js'
import type { Lane } from '../engine/load-generator.js'
import type { RequestSink } from '../results/request-record.js'
import type { ClockOffset, PhaseName, PhaseResult, ServerCrossCheck, TargetServerCount } from '../results/run-result.js'
import { targetServerCounts } from './target-server-check.js'
import type { LaneServerCount } from '../results/sweep-result.js'
import type { WallClock } from '../core/wall-clock.js'
import { targetMessages, type CallMessages } from './grpc-target.js'
import { phaseStatsOptions } from './lane.js'
import type { ResolvedRun } from './resolve-options.js'
import type { LaneChoice, TargetDraw, WindowSize } from './run-plan.js'
import { attachServerCheck, type ServerCounter } from './server-check.js'
import { mergeEarlyCancels } from '../stats/phase-algebra.js'
import { settleHeap, type HeapSettle } from './settle-heap.js'
import { INTERRUPT_GRACE_MS, scheduleOffsetMs, ThreadWindows, windowPacing, type ThreadLane } from './thread-windows.js'
import { noConnections, type WindowConnections, type WindowEnd } from './window-runner.js'
import { WorkerPool } from './worker-pool.js'
import type { ScheduleSecond } from '../results/run-result.js'

/** One window as the run orders it, whichever runner runs it. */
export interface RunWindow {
  lanes: ThreadLane[]
  size: WindowSize
  choice: LaneChoice
  /** A mix: `lanes` are each phase's lane per target (run-plan.ts); the outcome has one merged lane per phase, each with its targets'. */
  targets?: TargetDraw | undefined
  /** A measured window: --load-schedule or --concurrency-schedule paces it, --skip-first applies to its lanes (run-plan.ts). */
  measured: boolean
  /** How the heap is settled before it (settle-heap.ts). */
  settle: HeapSettle
  spreadMs: number
  /** Called the moment the window starts; returns that moment's wall-clock time. */
  started: () => number
  onProgress?: ((done: number, elapsedMs: number) => void) | undefined
  /** Called as the window starts with its lanes' live statistics (this thread's runner only: `watch` runs on one thread). */
  onLanes?: ((lanes: ReadonlyArray<{ name: PhaseName; stats: PhaseStats; setting?: number | undefined }>) => void) | undefined
}

export interface WindowOutcome {
  /** Each lane's result and what a hedge delay is derived from, in the order of the window's lanes (a mix: of its phases, each merged exactly from its targets', which it carries in target order). */
  lanes: Array<{ result: PhaseResult; measured: MeasuredPhase; targets?: Array<{ result: PhaseResult; measured: MeasuredPhase }> }>
  /** A sweep's window (setting lanes): its connection events and the servers' count, one for all its lanes. */
  sweep?: { connections: WindowConnections; server?: ServerCrossCheck; laneServers?: LaneServerCount[] }
  /** A mix's window: each target's attempts beside the server's count of its path, by target index (a target that counts per path). */
  targetServers?: TargetServerCount[]
}

export interface Windows {
  /** Before --start-at: what takes time (threads starting, the first full collection) is done now, so that the start is on time. */
  prepare(): Promise<void>
  /** Runs one window; null when the run was stopped before it started. */
  run(window: RunWindow): Promise<WindowOutcome | null>
  /** Stop sending; in-flight requests get `graceMs`, then they are aborted. */
  stop(graceMs?: number): void
  /** Each thread's bounds on the target's clock, over the run. */
  clockOffsets(): Array<ClockOffset | null>
  close(): Promise<void>
}

/** What both runners are given: the run, its t0, where its records and server counts go. */
export interface WindowsSetup {
  cfg: ResolvedRun
  /** performance.now() when the run started. */
  t0: number
  clock: WallClock
  random: () => number
  messages: CallMessages | undefined
  sink: RequestSink | undefined
  server: ServerCounter | null
}

export function windowsFor(setup: WindowsSetup): Windows {
  return setup.cfg.workers > 1 ? new WorkerWindows(setup) : new InThreadWindows(setup)
}

/** Every window on this thread, on one set of connections for the whole run. */
class InThreadWindows implements Windows {
  readonly #thread: ThreadWindows

  constructor(readonly setup: WindowsSetup) {
    const targets = targetMessages(setup.cfg.targets, setup.cfg.seed)
    this.#thread = new ThreadWindows(setup.cfg, {
      random: setup.random,
      runStartedAt: setup.t0,
      messages: setup.messages,
      targetMessages: targets,
      clock: setup.clock,
    })
  }

  async prepare(): Promise<void> {
    settleHeap('full')
  }

  async run(w: RunWindow): Promise<WindowOutcome | null> {
    const { cfg, server } = this.setup
    const thread = this.#thread
    // The target's counts before the window, taken before its clock starts:
    // the window's duration and an open-loop schedule begin at its construction.
    const before = await server?.snapshot()
    settleHeap(w.settle)
    // A sweep's window tags its lanes when the servers' count is read: the one reader of the tag.
    const tagged = server !== null && w.lanes.some((l) => l.setting)
    // A mix's phase is its targets' lanes merged exactly, as a worker thread's are (phase-snapshot.ts).
    const origin = performance.now()
    const statsFor = (spec: ThreadLane): PhaseStats => {
      const opts = phaseStatsOptions(cfg, spec.name, this.setup.t0, spec.steadyAfter)
      return w.targets ? new SnapshotPhaseStats(opts, { secondsOrigin: origin }) : new PhaseStats(opts)
    }
    const lanes = thread.lanes(w.lanes, statsFor, tagged ? laneTag : undefined)
    // --skip-first: each lane's twin, built alike on statistics nobody reads but the server cross-check.
    // A mix's phase skips its first requests whatever target they drew: its targets' lanes share one count.
    const skip =
      w.measured && cfg.skipFirst > 0 ? { count: cfg.skipFirst, lanes: thread.lanes(w.lanes, statsFor), group: w.targets?.weights.length ?? 1 } : undefined
    // The warm-up runs at the concurrency schedule's start, as at the load schedule's (cfg.rate).
    const concurrency = cfg.concurrencySchedule && !w.measured ? cfg.concurrencySchedule.start : cfg.concurrency
    const pacing = w.measured ? windowPacing(cfg, concurrency) : undefined
    const sent = [...lanes, ...(skip?.lanes ?? [])]
    const window = thread.open({
      lanes,
      choice: w.choice,
      targets: w.targets,
      size: w.size,
      concurrency,
      rate: cfg.rate,
      spreadMs: w.spreadMs,
      sink: this.setup.sink,
      // A load schedule's send times hold this generator's place among the others (windowPacing); -q's are an offset.
      scheduleOffsetMs: pacing?.sendTimes ? 0 : scheduleOffsetMs(cfg),
      sendTimes: pacing?.sendTimes,
      slotSpans: pacing?.slotSpans,
      skip,
    })
    const sweep = w.lanes.some((l) => l.setting) ? { connections: noConnections() } : undefined
    thread.runner.begin(sent, sweep?.connections ?? lanes[lanes.length - 1]!.stats)
    w.onLanes?.(lanes.map((lane, i) => ({ name: w.lanes[i]!.name, stats: lane.stats, setting: w.lanes[i]!.setting?.index })))
    const wallStart = w.started()
    const end = await thread.runner.run(window, hedgeDelayMs(w), w.onProgress)
    const wall = { startMs: wallStart, endMs: this.setup.clock() }
    thread.closeWindow()
    // The server counts the skipped requests too.
    const attempts = sent.reduce((sum, l) => sum + l.stats.figures.attempts, 0)
    const cancelled = sent.reduce((sum, l) => sum + l.stats.cancelledAttempts, 0)
    // A sweep's lanes are told apart at the server by the tag each carried (a mix's: its targets' lanes of a setting share one).
    const tags = sweep ? laneTags(w.lanes, lanes) : []
    const early = mergeEarlyCancels(sent.map((l) => l.stats.earlyCancels))
    const counted = before && server ? await server.checkLanes(before, attempts, cancelled, tags, early) : undefined
    const schedule = pacing?.seconds(window)
    if (w.targets) {
      const outcome = this.#mixOutcome(lanes, w.targets.weights.length, end, wall, sweep ? undefined : counted?.window)
      // A mix's phases share their window's schedule (its targets keep theirs without: the phase says it).
      // Each phase's skipped requests are its targets' twins' (the per-target rows count none of them).
      const count = w.targets.weights.length
      for (const [p, lane] of outcome.lanes.entries())
        lane.result = withSchedule(lane.result, schedule, skip && skipped(skip.lanes.slice(p * count, (p + 1) * count)))
      if (sweep)
        Object.assign(outcome, {
          sweep: { ...sweep, ...(counted ? { server: counted.window } : {}), ...(counted?.lanes ? { laneServers: counted.lanes } : {}) },
        })
      const after = before && server ? await server.snapshot() : undefined
      const perTarget = after && before && targetServerCounts(cfg.targets!, cfg.urls, before, after, targetAttempts(sent, w.targets), phaseNames(w))
      return perTarget ? { ...outcome, targetServers: perTarget } : outcome
    }
    const results = lanes.map((lane, i) => withSchedule(lane.stats.finish(end.durationMs, end.health), schedule, skip && skipped([skip.lanes[i]!])))
    // A sweep's window is one count for all its lanes, kept beside them rather than on one.
    if (sweep) {
      if (counted?.window) Object.assign(sweep, { server: counted.window })
      if (counted?.lanes) Object.assign(sweep, { laneServers: counted.lanes })
    } else attachServerCheck(results, counted?.window)
    return {
      lanes: results.map((result, i) => ({ result: { ...result, wall }, measured: lanes[i]!.stats })),
      ...(sweep ? { sweep } : {}),
    }
  }

  /** A mix's window: each phase merged from its `count` target lanes (phase-major) by the result algebra, the targets' own results beside it. */
  #mixOutcome(lanes: Lane[], count: number, end: WindowEnd, wall: PhaseResult['wall'], server: ServerCrossCheck | undefined): WindowOutcome {
    const epoch = performance.timeOrigin
    const started = end.endedAt - end.durationMs
    const snaps = lanes.map((l) => (l.stats as SnapshotPhaseStats).snapshot(end.endedAt - started, end.health, epoch + started, epoch + end.endedAt))
    const phases = Array.from({ length: lanes.length / count }, (_, p) => {
      const mine = snaps.slice(p * count, (p + 1) * count)
      const merged = mergePhases(mine, { runStartedAtEpoch: epoch + this.setup.t0, generator: end.health, of: 'targets' })
      const targets = mine.map((snap, t) => ({ result: { ...snap.result, wall }, measured: lanes[p * count + t]!.stats }))
      return { merged, targets }
    })
    attachServerCheck(
      phases.map((p) => p.merged.result),
      server,
    )
    return { lanes: phases.map(({ merged, targets }) => ({ result: { ...merged.result, wall }, measured: merged, targets })) }
  }

  stop(graceMs = INTERRUPT_GRACE_MS): void {
    this.#thread.stop(graceMs)
  }

  clockOffsets(): Array<ClockOffset | null> {
    return [this.#thread.clockOffset.result()]
  }

  close(): Promise<void> {
    return this.#thread.close()
  }
}

/** --workers N: every window spread over N threads (worker-pool.ts), started at the first window (or before --start-at), merged exactly. */
class WorkerWindows implements Windows {
  #pool: WorkerPool | null = null
  #stopped = false

  constructor(readonly setup: WindowsSetup) {}

  async prepare(): Promise<void> {
    // Threads take a while to start: not after the agreed time; nor the first window's full collection (done in every worker).
    this.#pool ??= await WorkerPool.start(this.setup.cfg, performance.timeOrigin + this.setup.t0)
    this.#pool.settle()
  }

  async run(w: RunWindow): Promise<WindowOutcome | null> {
    this.#pool ??= await WorkerPool.start(this.setup.cfg, performance.timeOrigin + this.setup.t0)
    if (this.#stopped) return null
    const wallStart = w.started()
    const merged = await this.#pool.runWindow({
      settle: w.settle,
      lanes: w.lanes.map((s) => ({
        name: s.name,
        ...(s.steadyAfter === undefined ? {} : { steadyAfter: s.steadyAfter }),
        hedge: s.hedge && { setup: s.hedge.setup, minHedgeWindowMs: s.hedge.minHedgeWindowMs },
        ...(s.target === undefined ? {} : { target: s.target }),
      })),
      choice: w.choice,
      targets: w.targets,
      ...w.size,
      hedgeDelayMs: hedgeDelayMs(w),
      spreadMs: w.spreadMs,
      skipFirst: w.measured ? this.setup.cfg.skipFirst : 0,
      measured: w.measured,
      sink: this.setup.sink,
      server: this.setup.server,
      onProgress: w.onProgress,
    })
    const wall = { startMs: wallStart, endMs: this.setup.clock() }
    const lanes = merged.lanes.map((m) => ({
      result: { ...m.result, wall },
      measured: m,
      ...(m.targets ? { targets: m.targets.map((t) => ({ result: { ...t.result, wall }, measured: t })) } : {}),
    }))
    return { lanes, ...(merged.targetServers ? { targetServers: merged.targetServers } : {}) }
  }

  stop(graceMs = INTERRUPT_GRACE_MS): void {
    this.#stopped = true
    this.#pool?.stop(graceMs)
  }

  clockOffsets(): Array<ClockOffset | null> {
    return this.#pool?.clockOffsets() ?? []
  }

  async close(): Promise<void> {
    await this.#pool?.close()
  }
}

/** A mix's attempts per target, over its phases' lanes (phase-major). */
function targetAttempts(lanes: readonly Lane[], targets: TargetDraw): number[] {
  const count = targets.weights.length
  return targets.weights.map((_, t) => lanes.reduce((sum, lane, i) => (i % count === t ? sum + lane.stats.figures.attempts : sum), 0))
}

/** The phases a window's lanes are of, in order, once each. */
function phaseNames(w: RunWindow): PhaseName[] {
  return [...new Set(w.lanes.map((l) => l.name))]
}

/** The hedged lane's delay, for the generator's health (loop delay against the delay). */
function hedgeDelayMs(w: RunWindow): number | null {
  return w.lanes.find((l) => l.hedge)?.hedge?.setup.delayMs ?? null
}

/** Each tag of a sweep's window once, in lane order, with the attempts of every lane carrying it. */
function laneTags(specs: readonly ThreadLane[], lanes: readonly Lane[]): Array<{ tag: string; attempts: number }> {
  const byTag = new Map<string, number>()
  for (const [i, spec] of specs.entries()) byTag.set(laneTag(spec), (byTag.get(laneTag(spec)) ?? 0) + lanes[i]!.stats.figures.attempts)
  return [...byTag].map(([tag, attempts]) => ({ tag, attempts }))
}

/** A sweep lane's LANE_HEADER value: plain, or the setting's place in the list from 1. */
function laneTag(spec: ThreadLane): string {
  return spec.setting ? String(spec.setting.index + 1) : 'plain'
}

/** A measured phase with its window's schedule beside what it sent, and how many requests its --skip-first twins sent uncounted. */
function withSchedule(result: PhaseResult, schedule: ScheduleSecond[] | undefined, skippedCount: number | undefined): PhaseResult {
  return {
    ...result,
    ...(schedule ? { scheduleSeconds: schedule } : {}),
    ...(skippedCount === undefined ? {} : { skipped: skippedCount }),
  }
}

/** The requests a phase's --skip-first twins sent (one twin, or a mix's one per target). */
function skipped(twins: readonly Lane[]): number {
  return twins.reduce((sum, twin) => sum + twin.stats.figures.requests, 0)
}
