/**
 * One worker thread of --workers N (see worker-pool.ts): its own undici
 * Agent and lanes, the same LoadWindow as the single-thread engine, for its
 * share of each window it is given; answers with a PhaseSnapshot per lane.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { phaseStatsOptions } from './lane.js'
import { SnapshotPhaseStats } from '../stats/phase-snapshot.js'
import { seededRandom } from '../core/random.js'
import type { ResolvedRun } from './resolve-options.js'
import { callMessages, targetMessages } from './grpc-target.js'
import type { RequestRecord, RequestSink } from './run-options.js'
import { ThreadWindows, windowPacing } from './thread-windows.js'
import type { FromWorker, ToWorker, WindowOrder, WorkerInit } from './worker-pool.js'
import { settleHeap } from './settle-heap.js'

/** Records go to the main thread in batches of this many (or every FLUSH_MS). */
const BATCH = 512
const FLUSH_MS = 20
/** Batches the main thread has not written yet before the window waits for it (backpressure). */
const MAX_UNACKED = 4

const port = parentPort!
const init = workerData as WorkerInit
const body = init.cfg.body as Uint8Array | null
const cfg: ResolvedRun = { ...init.cfg, body: body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : null }
const counters = new Int32Array(init.counters)
/** The run's t0 on this thread's clock (each thread has its own performance.timeOrigin). */
const runStartedAt = init.runStartedAtEpoch - performance.timeOrigin
/** This thread's connections, lanes and windows, built as the main thread builds its own (thread-windows.ts). */
const thread = new ThreadWindows(cfg, {
  random: seededRandom((cfg.seed + init.index) >>> 0),
  runStartedAt,
  messages: callMessages(cfg.grpc, cfg.seed, init.index, init.workers),
  targetMessages: targetMessages(cfg.targets, cfg.seed, init.index, init.workers),
  // This thread's reading of the target's clock, over the whole run (sent with every window's snapshots).
  clock: () => Date.now(),
})
let sink: PortSink | null = null

function post(message: FromWorker): void {
  port.postMessage(message)
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'window')
    void runWindow(m).catch((err: unknown) => post({ type: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }))
  else if (m.type === 'stop') thread.stop(m.graceMs)
  else if (m.type === 'ack') sink?.ack()
  else if (m.type === 'close') void close()
  else if (m.type === 'settle') settleHeap('full')
})
post({ type: 'ready' })

async function runWindow(order: WindowOrder): Promise<void> {
  const start = order.startAtEpoch - performance.timeOrigin
  // Adaptive delays are tracked per worker, on its own originals.
  const lanes = thread.lanes(
    order.lanes,
    (spec) => new SnapshotPhaseStats(phaseStatsOptions(cfg, spec.name, runStartedAt, spec.steadyAfter), { counters, secondsOrigin: start }),
  )
  // --skip-first: each lane's twin, off the live counters (progress and the attempts check count the phase's own).
  const twins =
    order.skip > 0 ? thread.lanes(order.lanes, (spec) => new SnapshotPhaseStats(phaseStatsOptions(cfg, spec.name, runStartedAt), { secondsOrigin: start })) : []
  sink = order.log ? new PortSink(init.index, init.workers) : null
  settleHeap(order.settle)
  thread.runner.begin([...lanes, ...twins], lanes[lanes.length - 1]!.stats)
  const pacing = order.measured ? windowPacing(cfg, Math.max(1, order.concurrency), init.index, init.workers) : undefined
  const wait = start - performance.now()
  if (wait > 0) await new Promise((r) => setTimeout(r, wait))
  const win = thread.open({
    lanes,
    choice: order.choice,
    targets: order.targets,
    size: { requests: order.requests, durationMs: order.durationMs, minDurationMs: order.minDurationMs },
    concurrency: Math.max(1, order.concurrency),
    rate: order.rate,
    spreadMs: order.spreadMs,
    spreadPhase: order.spreadPhase,
    sink: sink ?? undefined,
    // Open loop: the global schedule, offset for this worker, from the instant all workers share.
    scheduleOrigin: start,
    // A load schedule's send times hold this worker's place among the others (windowPacing); -q's are an offset.
    scheduleOffsetMs: pacing?.sendTimes ? 0 : order.offsetMs,
    sendTimes: pacing?.sendTimes,
    slotSpans: pacing?.slotSpans,
    skip: twins.length > 0 ? { count: order.skip, lanes: twins, group: order.targets?.weights.length ?? 1 } : undefined,
  })
  const end = await thread.runner.run(win, order.hedgeDelayMs)
  sink?.flush()
  const origin = performance.timeOrigin
  // The phase began at the instant every worker was given, also for a worker whose timer fired late (a loaded
  // machine): an open-loop schedule counts from that instant, so a late start must not shorten the phase.
  const startedAt = Math.min(win.startedAt, start)
  const schedule = pacing?.seconds(win)
  const snapshots = [...lanes, ...twins].map((l) =>
    (l.stats as SnapshotPhaseStats).snapshot(end.endedAt - startedAt, end.health, origin + startedAt, origin + end.endedAt),
  )
  // Each lane its thread's part of the window's series (the twins none): summed when the threads merge (phase-algebra.ts).
  if (schedule) for (const snap of snapshots.slice(0, lanes.length)) snap.result = { ...snap.result, scheduleSeconds: schedule }
  thread.closeWindow()
  post({ type: 'done', snapshots, clock: thread.clockOffset.result() })
}

async function close(): Promise<void> {
  await thread.close()
  port.close()
}

/**
 * The per-request log, across the thread boundary: records go to the main
 * thread in batches; when MAX_UNACKED batches are not written yet, `write`
 * asks the window to wait, as a file stream's backpressure would. Sequence
 * numbers are made global: worker i's k-th request is k * N + i.
 */
class PortSink implements RequestSink {
  #batch: RequestRecord[] = []
  #unacked = 0
  #timer: NodeJS.Timeout | null = null
  #waiters: Array<() => void> = []

  constructor(
    private readonly index: number,
    private readonly workers: number,
  ) {}

  write(record: RequestRecord): boolean {
    record.seq = record.seq * this.workers + this.index
    this.#batch.push(record)
    if (this.#batch.length >= BATCH) this.flush()
    else this.#timer ??= setTimeout(() => this.flush(), FLUSH_MS)
    return this.#unacked < MAX_UNACKED
  }

  waitForDrain(): Promise<void> {
    if (this.#unacked < MAX_UNACKED || thread.stopped) return Promise.resolve()
    return new Promise((resolve) => this.#waiters.push(resolve))
  }

  flush(): void {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
    if (this.#batch.length === 0) return
    post({ type: 'records', records: this.#batch })
    this.#batch = []
    this.#unacked++
  }

  ack(): void {
    this.#unacked--
    if (this.#unacked >= MAX_UNACKED) return
    const waiters = this.#waiters
    this.#waiters = []
    for (const w of waiters) w()
  }
}
