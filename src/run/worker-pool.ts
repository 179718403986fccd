/**
 * --workers N, the main thread's side. N worker threads (worker-thread.ts)
 * live for the whole run, each with its own undici Agent (so the warm-up
 * warms the connections the measured phases use, as with one thread), and
 * run every window with their share of it:
 *
 * - concurrency, requests and --connections are split as evenly as possible
 *   (the shares add up to -c, -n and each replica's connections exactly);
 * - open loop (-q): each worker sends at RATE/N on its own schedule, offset
 *   by i/RATE, so the interleaved schedules are the global one (worker i
 *   sends the global sequence numbers i, i+N, i+2N, ...);
 * - --skip-first N: each worker skips its share of each phase's first N
 *   (the shares add up to N), on twins it answers after the lanes;
 * - every worker starts its window at the same (epoch) instant;
 * - each worker has its own hedge budget: it enforces the percentage on its
 *   own traffic, so the global extra load stays within the percentage too
 *   (the burst allowance is per worker: N x the burst);
 * - each worker's randomness is seeded with seed + its index;
 * - attempts and finished requests are counted live in a SharedArrayBuffer
 *   with Atomics.add (progress; checked against the merged count at the end).
 *
 * The main thread keeps the phase order and the delay derivation; each
 * worker answers a window with a PhaseSnapshot per lane, merged exactly by
 * phase-snapshot.ts. stop/stopNow are forwarded to every worker.
 */
import { Worker } from 'node:worker_threads'
import { assessGenerator, GeneratorMonitor, worstLoop } from '../stats/generator-monitor.js'
import { mergeGcPauses } from '../stats/gc-monitor.js'
import { COUNTER_ATTEMPTS, COUNTER_COMPLETED, mergePhases, type MergedPhase, type PhaseSnapshot } from '../stats/phase-snapshot.js'
import type { ResolvedRun } from './resolve-options.js'
import type { RequestRecord, RequestSink } from './run-options.js'
import { attachServerCheck, type ServerCounter } from './server-check.js'
import { mergeEarlyCancels } from '../stats/phase-algebra.js'
import type { HeapSettle } from './settle-heap.js'
import type { LaneChoice, TargetDraw } from './run-plan.js'
import { targetServerCounts } from './target-server-check.js'
import { scheduleOffsetMs, type ThreadLane } from './thread-windows.js'
import type { ClockOffset, GeneratorHealth, ScheduleSecond, TargetServerCount } from '../results/run-result.js'

/** A window's lane merged over the threads; a mix's: its phase, its targets' own beside it. */
export type PoolLane = MergedPhase & { targets?: MergedPhase[] }

/** What runWindow resolves with: the merged lanes, and a mix's cross-check per target. */
export interface PoolOutcome {
  lanes: PoolLane[]
  targetServers?: TargetServerCount[]
}

/** A lane as the worker rebuilds it (its delay source is rebuilt from the setup: thread-windows.ts); a sweep's setting lanes never run on workers. */
export type WorkerLaneSpec = Omit<ThreadLane, 'setting'>

export interface WorkerInit {
  cfg: ResolvedRun
  index: number
  workers: number
  counters: SharedArrayBuffer
  runStartedAtEpoch: number
}

export interface WindowOrder {
  type: 'window'
  lanes: WorkerLaneSpec[]
  /** How a request picks its lane (thread-windows.ts). */
  choice: LaneChoice
  /** A mix: the lanes are each phase's per target, a request's target drawn so (run-plan.ts). */
  targets?: TargetDraw | undefined
  requests: number | null
  durationMs: number | null
  /** The default warm-up's least duration (load-generator.ts). */
  minDurationMs: number
  /** How the worker settles its heap before the window (decided by the run: settle-heap.ts). */
  settle: HeapSettle
  concurrency: number
  /** This worker's requests/s, or null (closed loop). */
  rate: number | null
  /** Open loop: this worker's schedule starts this long after the shared start. */
  offsetMs: number
  /** --skip-first: this worker's share of each phase's first requests, sent uncounted (0: none); their snapshots follow the lanes'. */
  skip: number
  /** A measured window: a --load-schedule or --concurrency-schedule paces it, this worker's part of it (thread-windows.ts windowPacing). */
  measured: boolean
  startAtEpoch: number
  log: boolean
  hedgeDelayMs: number | null
  /** Closed loop: this worker's slots start spread over this long (load-generator.ts), a fraction i/n of a step late. */
  spreadMs: number
  spreadPhase: number
}

export type ToWorker = WindowOrder | { type: 'stop'; graceMs: number } | { type: 'ack' } | { type: 'close' } | { type: 'settle' }

export type FromWorker =
  | { type: 'ready' }
  | { type: 'records'; records: RequestRecord[] }
  | { type: 'done'; snapshots: PhaseSnapshot[]; clock: ClockOffset | null }
  | { type: 'failed'; message: string }

export interface PoolWindow {
  lanes: WorkerLaneSpec[]
  choice: LaneChoice
  targets?: TargetDraw | undefined
  requests: number | null
  durationMs: number | null
  minDurationMs: number
  settle: HeapSettle
  hedgeDelayMs: number | null
  spreadMs: number
  /** --skip-first: each phase's first requests sent uncounted, over all workers (0: none, the warm-up). */
  skipFirst: number
  /** A measured window (not the warm-up): paced by the run's schedule, if any. */
  measured: boolean
  sink?: RequestSink | undefined
  server?: ServerCounter | null
  onProgress?: ((done: number, elapsedMs: number) => void) | undefined
}

const START_TIMEOUT_MS = 15_000
const CLOSE_TIMEOUT_MS = 5_000
/** After a stop, a worker that has not answered within its grace + this is terminated. */
const STOP_SLACK_MS = 15_000
/** Workers start a window this long after it is posted, all at the same instant. */
const START_LEAD_MS = 20
const PROGRESS_EVERY_MS = 250

/** A mix's phase with its window's schedule: the threads' series summed (any target's lane carries it), not one thread's. */
function withSeries(phase: MergedPhase, series: ScheduleSecond[] | undefined): MergedPhase {
  return series ? { ...phase, result: { ...phase.result, scheduleSeconds: series } } : phase
}

/** The requests a phase's --skip-first twins sent on every worker: lanes `from` to `from + count` of each worker's twins. */
function skippedOf(twins: PhaseSnapshot[][], from: number, count: number): number {
  return twins.reduce((sum, mine) => sum + mine.slice(from, from + count).reduce((s, t) => s + t.result.requests, 0), 0)
}

/** `total` split over `n` as evenly as possible; the shares add up to `total`. */
export function share(total: number, n: number, i: number): number {
  return Math.floor(total / n) + (i < total % n ? 1 : 0)
}

interface Member {
  worker: Worker
  index: number
  pending: { resolve: (s: PhaseSnapshot[] | null) => void; reject: (e: Error) => void } | null
  exited: Promise<void>
  gone: boolean
}

export class WorkerPool {
  readonly counters = new Int32Array(new SharedArrayBuffer(8))
  readonly #members: Member[] = []
  readonly #clocks: Array<ClockOffset | null> = []
  #sink: RequestSink | undefined
  #sinkChain: Promise<void> = Promise.resolve()
  #watchdog: NodeJS.Timeout | null = null

  private constructor(
    readonly cfg: ResolvedRun,
    readonly size: number,
    readonly runStartedAtEpoch: number,
  ) {}

  /** Starts min(workers, concurrency) threads and waits (bounded) until each is ready. */
  static async start(cfg: ResolvedRun, runStartedAtEpoch: number): Promise<WorkerPool> {
    const pool = new WorkerPool(cfg, Math.max(1, Math.min(cfg.workers, cfg.concurrency)), runStartedAtEpoch)
    try {
      await Promise.all(Array.from({ length: pool.size }, (_, i) => pool.#spawn(i)))
    } catch (err) {
      await pool.close()
      throw err
    }
    return pool
  }

  #spawn(index: number): Promise<void> {
    // --connections per replica are split as -c is: each thread opens its share, and they add up to it.
    const connections = this.cfg.connections === null ? null : share(this.cfg.connections, this.size, index)
    const workerData: WorkerInit = {
      cfg: { ...this.cfg, connections },
      index,
      workers: this.size,
      counters: this.counters.buffer as SharedArrayBuffer,
      runStartedAtEpoch: this.runStartedAtEpoch,
    }
    const worker = new Worker(new URL('./worker-thread.js', import.meta.url), { workerData })
    const member: Member = { worker, index, pending: null, exited: new Promise((r) => worker.once('exit', () => r())), gone: false }
    this.#members.push(member)
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker ${index} did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS)
      const fail = (err: Error): void => {
        clearTimeout(timer)
        reject(err)
        member.pending?.reject(err)
        member.pending = null
      }
      worker.on('error', (err) => fail(new Error(`worker ${index} failed: ${err.message}`)))
      worker.on('exit', (code) => {
        member.gone = true
        fail(new Error(`worker ${index} exited (code ${code})`))
      })
      worker.on('message', (m: FromWorker) => {
        if (m.type === 'ready') {
          clearTimeout(timer)
          resolve()
        } else if (m.type === 'records') this.#onRecords(member, m.records)
        else if (m.type === 'failed') fail(new Error(`worker ${index} failed: ${m.message}`))
        else if (m.type === 'done') {
          this.#clocks[index] = m.clock
          const pending = member.pending
          member.pending = null
          // Every batch of records posted before `done` is written first.
          void this.#sinkChain.then(() => pending?.resolve(m.snapshots))
        }
      })
    })
  }

  #onRecords(member: Member, records: RequestRecord[]): void {
    const sink = this.#sink
    this.#sinkChain = this.#sinkChain.then(async () => {
      if (sink) {
        let full = false
        for (const r of records) if (sink.write(r) === false) full = true
        if (full) await sink.waitForDrain()
      }
      if (!member.gone) member.worker.postMessage({ type: 'ack' } satisfies ToWorker)
    })
  }

  /** Each worker's bounds on the target's clock so far (cumulative over the run). */
  clockOffsets(): Array<ClockOffset | null> {
    return [...this.#clocks]
  }

  /**
   * One window on every worker; resolves with the merged phase of each
   * lane. A mix: of each phase, all threads' lanes of all its targets merged
   * at once, each target's own (its lanes of every thread) beside it.
   */
  async runWindow(plan: PoolWindow): Promise<PoolOutcome> {
    const n = this.size
    this.#sink = plan.sink
    const rate = this.cfg.rate
    const before = await plan.server?.snapshot()
    const monitor = new GeneratorMonitor(n)
    const attempts0 = Atomics.load(this.counters, COUNTER_ATTEMPTS) >>> 0
    const completed0 = Atomics.load(this.counters, COUNTER_COMPLETED) >>> 0
    const startAtEpoch = performance.timeOrigin + performance.now() + START_LEAD_MS
    const results = this.#members.map((member) => {
      const i = member.index
      const requests = plan.requests === null ? null : share(plan.requests, n, i)
      const order: WindowOrder = {
        type: 'window',
        lanes: plan.lanes.map((l) => ({
          ...l,
          ...(l.steadyAfter === undefined || plan.requests === null || requests === null
            ? {}
            : { steadyAfter: Math.floor((l.steadyAfter * requests) / plan.requests) }),
        })),
        choice: plan.choice,
        targets: plan.targets,
        requests,
        durationMs: plan.durationMs,
        minDurationMs: plan.minDurationMs,
        settle: plan.settle,
        // The warm-up runs at the concurrency schedule's start, as in one thread (windows.ts).
        concurrency: share(this.cfg.concurrencySchedule && !plan.measured ? this.cfg.concurrencySchedule.start : this.cfg.concurrency, n, i),
        rate: rate === null ? null : rate / n,
        // This worker's place in the shard's schedule, after the shard's own place among the shards.
        offsetMs: scheduleOffsetMs(this.cfg, i),
        skip: share(plan.skipFirst, n, i),
        measured: plan.measured,
        startAtEpoch,
        log: plan.sink !== undefined,
        hedgeDelayMs: plan.hedgeDelayMs,
        spreadMs: plan.spreadMs,
        spreadPhase: i / n,
      }
      return new Promise<PhaseSnapshot[] | null>((resolve, reject) => {
        if (member.gone) return reject(new Error(`worker ${i} is gone`))
        member.pending = { resolve, reject }
        member.worker.postMessage(order satisfies ToWorker)
      })
    })
    const progress = plan.onProgress
      ? setInterval(
          () =>
            plan.onProgress!((Atomics.load(this.counters, COUNTER_COMPLETED) >>> 0) - completed0, performance.timeOrigin + performance.now() - startAtEpoch),
          PROGRESS_EVERY_MS,
        )
      : null
    let snapshots: Array<PhaseSnapshot[] | null>
    try {
      snapshots = await Promise.all(results)
    } finally {
      if (progress) clearInterval(progress)
      if (this.#watchdog) clearTimeout(this.#watchdog)
      this.#watchdog = null
    }
    // Each worker answers its lanes, then its --skip-first twins (counted only by the servers' cross-check).
    const width = plan.lanes.length
    const all = snapshots.filter((s): s is PhaseSnapshot[] => s !== null)
    const answered = all.map((s) => s.slice(0, width))
    const twins = all.map((s) => s.slice(width))
    const health = this.#health(monitor.finish(plan.hedgeDelayMs), answered, plan.hedgeDelayMs)
    if (answered.length < snapshots.length)
      health.warnings.push(`${snapshots.length - answered.length} of ${n} worker threads did not report after the stop: their requests are missing`)
    const ctx = { runStartedAtEpoch: this.runStartedAtEpoch, generator: health }
    const byLane = plan.lanes.map((_, lane) =>
      mergePhases(
        answered.map((s) => s[lane]!),
        ctx,
      ),
    )
    const count = plan.targets?.weights.length ?? 1
    const grouped: PoolLane[] = plan.targets
      ? Array.from({ length: plan.lanes.length / count }, (_, p) => ({
          ...withSeries(
            mergePhases(
              answered.flatMap((s) => s.slice(p * count, (p + 1) * count)),
              { ...ctx, of: 'targets' },
            ),
            byLane[p * count]!.result.scheduleSeconds,
          ),
          targets: byLane.slice(p * count, (p + 1) * count),
        }))
      : byLane
    const merged = plan.skipFirst > 0 ? grouped.map((m, p) => ({ ...m, result: { ...m.result, skipped: skippedOf(twins, p * count, count) } })) : grouped
    const attempts = merged.reduce((s, m) => s + m.result.attempts, 0)
    const live = (Atomics.load(this.counters, COUNTER_ATTEMPTS) >>> 0) - attempts0
    if (live !== attempts && answered.length === snapshots.length) {
      health.warnings.push(`attempts counted across threads (${live}) differ from the merged count (${attempts}): attempts settled after the phase ended`)
    }
    // The servers count the skipped requests too.
    const skippedTwins = twins.flat().map((t) => t.result)
    const sent = [...merged.map((m) => m.result), ...skippedTwins]
    const cancelled = sent.reduce((s, r) => s + (r.hedging?.cancelled ?? 0), 0)
    const early = mergeEarlyCancels(sent.map((r) => r.earlyCancels))
    const sentAttempts = sent.reduce((s, r) => s + r.attempts, 0)
    const server = before && plan.server ? await plan.server.check(before, sentAttempts, cancelled, early) : undefined
    attachServerCheck(
      merged.map((m) => m.result),
      server,
    )
    const after = plan.targets && before && plan.server ? await plan.server.snapshot() : undefined
    const perTarget =
      after &&
      before &&
      targetServerCounts(
        this.cfg.targets!,
        this.cfg.urls,
        before,
        after,
        plan.targets!.weights.map(
          (_, t) =>
            byLane.reduce((sum, lane, i) => (i % count === t ? sum + lane.result.attempts : sum), 0) +
            twins.flat().reduce((sum, twin, i) => (i % count === t ? sum + twin.result.attempts : sum), 0),
        ),
        [...new Set(plan.lanes.map((l) => l.name))],
      )
    return { lanes: merged, ...(perTarget ? { targetServers: perTarget } : {}) }
  }

  /**
   * Generator health of the window: CPU from the main thread's monitor (it
   * reads the whole process, every thread), event-loop delay the worst of
   * the workers' loops (they run the load; the main thread waits), GC
   * pauses the workers' summed (the main thread's do not delay an answer).
   */
  #health(main: GeneratorHealth, snapshots: PhaseSnapshot[][], hedgeDelayMs: number | null): GeneratorHealth {
    const loop = worstLoop(snapshots.map((s) => s[0]!.result.generator.eventLoopDelayMs))
    const gc = mergeGcPauses(snapshots.map((s) => s[0]!.result.generator.gc))
    return assessGenerator({ loop, cpuPct: main.cpuPct, cpuJudged: main.cpuJudged ?? true, threads: this.size, hedgeDelayMs, gc })
  }

  /** Every worker collects its heap in full now (while waiting for --start-at), so that its first window need not; messages keep their order. */
  settle(): void {
    for (const m of this.#members) if (!m.gone) m.worker.postMessage({ type: 'settle' } satisfies ToWorker)
  }

  /** Forwards an interruption: workers stop sending; in-flight requests get `graceMs`, then are aborted. */
  stop(graceMs: number): void {
    for (const m of this.#members) if (!m.gone) m.worker.postMessage({ type: 'stop', graceMs } satisfies ToWorker)
    // Bounded: a worker that does not answer is terminated and its share is reported missing.
    if (this.#watchdog) clearTimeout(this.#watchdog)
    this.#watchdog = setTimeout(
      () => {
        for (const m of this.#members) {
          if (!m.pending) continue
          const pending = m.pending
          m.pending = null
          pending.resolve(null)
          void m.worker.terminate()
        }
      },
      graceMs + Math.min(this.cfg.timeoutMs, 10_000) + STOP_SLACK_MS,
    )
  }

  /** Closes every worker's agent and ends the threads (bounded: terminated after CLOSE_TIMEOUT_MS). */
  async close(): Promise<void> {
    if (this.#watchdog) clearTimeout(this.#watchdog)
    await Promise.all(
      this.#members.map(async (m) => {
        m.pending = null
        if (!m.gone) m.worker.postMessage({ type: 'close' } satisfies ToWorker)
        let timer: NodeJS.Timeout | undefined
        const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), CLOSE_TIMEOUT_MS)))
        const how = await Promise.race([m.exited, late])
        clearTimeout(timer)
        if (how === 'late') await m.worker.terminate()
      }),
    )
  }
}
