/**
 * One worker thread of --workers N (see worker-pool.ts): its own undici
 * Agent and lanes, the same LoadWindow as the single-thread engine, for its
 * share of each window it is given; answers with a PhaseSnapshot per lane.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { buildLane, delaySource, phaseStatsOptions } from './lane.js'
import { LoadWindow, type Lane, type WindowPlan } from '../engine/load-generator.js'
import { InterruptedError } from '../core/interruption.js'
import { SnapshotPhaseStats } from '../stats/phase-snapshot.js'
import { seededRandom } from '../core/random.js'
import type { ResolvedRun } from './resolve-options.js'
import { buildDispatchOptions, createAgent } from './run.js'
import { callMessages } from './grpc-target.js'
import type { RequestRecord, RequestSink } from './run-options.js'
import { WindowRunner } from './window-runner.js'
import { ClockOffsetEstimator } from '../stats/clock-offset.js'
import { sampleDates } from '../engine/date-sampler.js'
import type { FromWorker, ToWorker, WindowOrder, WorkerInit, WorkerLaneSpec } from './worker-pool.js'
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
const random = seededRandom((cfg.seed + init.index) >>> 0)
const agent = createAgent(cfg)
const optsByOrigin = buildDispatchOptions(cfg)
const messages = callMessages(cfg.grpc, cfg.seed, init.index, init.workers)
const runner = new WindowRunner(agent, cfg.timeoutMs)
let window: LoadWindow | null = null
let stopped = false
let grace: NodeJS.Timeout | null = null
let sink: PortSink | null = null
/** This thread's reading of the target's clock, over the whole run (sent with every window's snapshots). */
const clockOffset = new ClockOffsetEstimator(() => Date.now())

function post(message: FromWorker): void {
  port.postMessage(message)
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'window')
    void runWindow(m).catch((err: unknown) => post({ type: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }))
  else if (m.type === 'stop') stop(m.graceMs)
  else if (m.type === 'ack') sink?.ack()
  else if (m.type === 'close') void close()
  else if (m.type === 'settle') settleHeap('full')
})
post({ type: 'ready' })

/** Open loop: the global schedule, offset for this worker, from the instant all workers share. */
class OffsetWindow extends LoadWindow {
  constructor(
    plan: WindowPlan,
    private readonly origin: number,
  ) {
    super(plan)
  }

  override intendedStart(seq: number): number {
    const t = super.intendedStart(seq)
    return t < 0 ? t : t - this.startedAt + this.origin
  }
}

async function runWindow(order: WindowOrder): Promise<void> {
  const start = order.startAtEpoch - performance.timeOrigin
  const lanes = order.lanes.map((spec) => lane(spec, start))
  sink = order.log ? new PortSink(init.index, init.workers) : null
  settleHeap(order.settle)
  runner.begin(lanes)
  const wait = start - performance.now()
  if (wait > 0) await new Promise((r) => setTimeout(r, wait))
  const plan: WindowPlan = {
    lanes,
    requests: order.requests,
    durationMs: order.durationMs,
    minDurationMs: order.minDurationMs,
    concurrency: Math.max(1, order.concurrency),
    rate: order.rate,
    fanout: cfg.fanout,
    optsByOrigin,
    ...(messages ? { nextBody: messages.body } : {}),
    runStartedAt,
    sink: sink ?? undefined,
    spreadMs: order.spreadMs,
    spreadPhase: order.spreadPhase,
    ...(lanes.length > 1 ? { chooseLane: () => (random() < 0.5 ? 0 : 1) } : {}),
  }
  const win = (window = order.rate === null ? new LoadWindow(plan) : new OffsetWindow(plan, start + order.offsetMs))
  if (stopped) win.stop()
  const end = await runner.run(win, order.hedgeDelayMs)
  sink?.flush()
  const origin = performance.timeOrigin
  // The phase began at the instant every worker was given, also for a worker whose timer fired late (a loaded
  // machine): an open-loop schedule counts from that instant, so a late start must not shorten the phase.
  const startedAt = Math.min(win.startedAt, start)
  const snapshots = lanes.map((l) => (l.stats as SnapshotPhaseStats).snapshot(end.endedAt - startedAt, end.health, origin + startedAt, origin + end.endedAt))
  window = null
  post({ type: 'done', snapshots, clock: clockOffset.result() })
}

/** The same lane as the main thread builds (lane.ts); adaptive delays are tracked per worker, on its own originals. */
function lane(spec: WorkerLaneSpec, secondsOrigin: number): Lane {
  const stats = new SnapshotPhaseStats(phaseStatsOptions(cfg, spec.name, runStartedAt, spec.steadyAfter), { counters, secondsOrigin })
  const h = spec.hedge
  if (h) stats.hedging = h.setup
  const hedge = h ? { delay: delaySource(cfg.hedge, h.setup.delayMs), minHedgeWindowMs: h.minHedgeWindowMs } : null
  return buildLane(cfg, stats, hedge, sampleDates(agent.dispatch.bind(agent), clockOffset), random)
}

function stop(graceMs: number): void {
  stopped = true
  window?.stop()
  if (grace) clearTimeout(grace)
  grace = setTimeout(() => void agent.destroy(new InterruptedError()).catch(() => {}), graceMs)
}

async function close(): Promise<void> {
  if (grace) clearTimeout(grace)
  await agent.close().catch(() => agent.destroy())
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
    if (this.#unacked < MAX_UNACKED || stopped) return Promise.resolve()
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
