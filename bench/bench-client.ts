/**
 * One load-generator run for the bench, in its own process (so hedgebench
 * and autocannon never share an event loop or a heap): the spec comes as
 * JSON in argv[2], the outcome goes back over IPC, and the process waits for
 * `{ type: 'exit' }` before it leaves, so the parent can look at the server's
 * open connections while the client is still alive.
 */
import { createRequire } from 'node:module'
import { GCProfiler } from 'node:v8'
import { Client, type Dispatcher } from 'undici'
import { run } from '../src/run/run.js'
import type { RunOptions } from '../src/run/run-options.js'

export interface ClientSpec {
  /** undici: bare undici Clients with an empty handler, the floor of any client built on undici. */
  tool: 'hedgebench' | 'autocannon' | 'undici'
  url: string
  connections: number
  /** Timed run... */
  durationMs?: number
  /** ...or a request count (hedgebench and undici). */
  requests?: number
  mode?: 'plain' | 'hedged'
  warmup?: number
  hedge?: RunOptions['hedge']
  /** Sample RSS every this many ms (for the soak's flatness check). */
  sampleRssMs?: number
  /** Stop the run (partial) after this long, ms. */
  maxMs?: number
  /** hedgebench --workers N. */
  workers?: number
}

export interface ClientOutcome {
  type: 'done'
  tool: string
  requests: number
  /** Attempts hedgebench put on the wire (warm-up included); autocannon: requests sent. */
  attempts: number
  errors: number
  durationMs: number
  rps: number
  /** CPU time (user + system) this process spent in the run, per finished request, µs. */
  cpuUsPerRequest: number
  /** Peak RSS of this process, bytes. */
  maxRss: number
  /** JS heap bytes allocated over the run per finished request (from the heap before and after each collection). */
  heapBytesPerRequest: number
  /** Young-generation collections (scavenges) per 10,000 finished requests, and collections of every kind. */
  youngGcsPer10k: number
  gcsPer10k: number
  /** Young-generation pauses (GCProfiler's cost of each scavenge): median and longest, ms. */
  youngPauseMs: { median: number; max: number }
  /** RSS samples over the run, bytes, with their time since start (ms). */
  rssSamples: Array<[number, number]>
  hedging?: { hedgesSent: number; unsent: number; cancelled: number; lateDiscarded: number; budgetDenied: number; timerLatenessP99: number }
  latencyMs: { p50: number; p95: number; p99: number; max: number }
  generator?: { cpuPct: number; loopP99: number }
  error?: string
}

/** What a tool's run returns; the process-wide measures (CPU, memory, heap) are added around it. */
type ToolOutcome = Omit<
  ClientOutcome,
  'type' | 'maxRss' | 'rssSamples' | 'cpuUsPerRequest' | 'heapBytesPerRequest' | 'youngGcsPer10k' | 'gcsPer10k' | 'youngPauseMs'
>

async function runHedgebench(spec: ClientSpec): Promise<ToolOutcome> {
  const mode = spec.mode ?? 'plain'
  const result = await run({
    urls: [spec.url],
    concurrency: spec.connections,
    ...(spec.durationMs !== undefined ? { durationMs: spec.durationMs } : { requests: spec.requests ?? 1000 }),
    mode,
    warmup: spec.warmup ?? 0,
    hedge: spec.hedge ?? {},
    seed: 1,
    ...(spec.workers !== undefined ? { workers: spec.workers } : {}),
    ...(spec.maxMs !== undefined ? { signal: AbortSignal.timeout(spec.maxMs) } : {}),
  })
  const phase = result.phases[mode]!
  const warmup = result.phases.warmup
  const h = phase.hedging
  return {
    tool: 'hedgebench',
    requests: phase.requests,
    attempts: phase.attempts + (warmup?.attempts ?? 0),
    errors: phase.errors,
    durationMs: phase.durationMs,
    rps: phase.rps,
    latencyMs: { p50: phase.latencyMs.p50, p95: phase.latencyMs.p95, p99: phase.latencyMs.p99, max: phase.latencyMs.max },
    generator: { cpuPct: phase.generator.cpuPct, loopP99: phase.generator.eventLoopDelayMs.p99 },
    ...(h
      ? {
          hedging: {
            hedgesSent: h.hedgesSent,
            unsent: h.unsent,
            cancelled: h.cancelled,
            lateDiscarded: h.lateDiscarded,
            budgetDenied: h.budgetDenied,
            timerLatenessP99: h.timerLatenessMs.p99,
          },
        }
      : {}),
  }
}

interface AutocannonResult {
  requests: { total: number; sent: number }
  latency: { p50: number; p97_5: number; p99: number; max: number }
  errors: number
  non2xx: number
  duration: number
}

/** Loaded before the measurement starts, as hedgebench's modules are. */
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: object) => Promise<AutocannonResult>

async function runAutocannon(spec: ClientSpec): Promise<ToolOutcome> {
  const started = performance.now()
  const r = await autocannon({ url: spec.url, connections: spec.connections, pipelining: 1, duration: (spec.durationMs ?? 5000) / 1000 })
  const durationMs = performance.now() - started
  return {
    tool: 'autocannon',
    requests: r.requests.total,
    attempts: r.requests.sent,
    errors: r.errors + r.non2xx,
    durationMs,
    rps: (r.requests.total * 1000) / durationMs,
    // autocannon reports p97.5, not p95
    latencyMs: { p50: r.latency.p50, p95: r.latency.p97_5, p99: r.latency.p99, max: r.latency.max },
  }
}

/**
 * The floor of any client built on undici: one Client (pipelining 1) per
 * connection, a handler that only counts, the next request dispatched from
 * the last one's end. No statistics, no hedging, no timers of its own.
 */
async function runBareUndici(spec: ClientSpec): Promise<ToolOutcome> {
  const url = new URL(spec.url)
  const opts: Dispatcher.DispatchOptions = { origin: url.origin, path: url.pathname, method: 'GET', headers: [] }
  const durationMs = spec.requests !== undefined ? Infinity : (spec.durationMs ?? 5000)
  const limit = spec.requests ?? Infinity
  let issued = 0
  const started = performance.now()
  const end = started + durationMs
  let requests = 0
  let errors = 0
  const clients = Array.from({ length: spec.connections }, () => new Client(url.origin, { pipelining: 1 }))
  await Promise.all(
    clients.map(
      (client) =>
        new Promise<void>((resolve) => {
          const handler = {
            onConnect() {},
            onHeaders(status: number) {
              if (status >= 400) errors++
              return true
            },
            onData() {
              return true
            },
            onComplete() {
              requests++
              next()
            },
            onError() {
              errors++
              next()
            },
          }
          const next = (): void => {
            if (performance.now() < end && issued++ < limit) client.dispatch(opts, handler as unknown as Dispatcher.DispatchHandler)
            else resolve()
          }
          next()
        }),
    ),
  )
  const elapsed = performance.now() - started
  await Promise.all(clients.map((c) => c.close()))
  return {
    tool: 'undici',
    requests,
    attempts: requests,
    errors,
    durationMs: elapsed,
    rps: (requests * 1000) / elapsed,
    latencyMs: { p50: 0, p95: 0, p99: 0, max: 0 },
  }
}

/**
 * JS heap allocation and collections over the run, from v8's GCProfiler:
 * what was allocated between two collections is the used heap before the
 * second minus the used heap after the first (plus, at the end, what is
 * still uncollected). Exact up to objects allocated and freed within one
 * collection, which V8 does not do.
 */
class HeapWatch {
  readonly #profiler = new GCProfiler()
  readonly #usedAtStart: number

  constructor() {
    this.#usedAtStart = process.memoryUsage().heapUsed
    this.#profiler.start()
  }

  stop(): { allocated: number; count: number; young: number; youngPauseMs: { median: number; max: number } } {
    const usedAtEnd = process.memoryUsage().heapUsed
    const stats = (this.#profiler.stop()?.statistics ?? []) as GcStatistic[]
    let allocated = 0
    let after = this.#usedAtStart
    for (const s of stats) {
      allocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - after)
      after = s.afterGC.heapStatistics.usedHeapSize
    }
    allocated += Math.max(0, usedAtEnd - after)
    const young = stats
      .filter((s) => s.gcType === 'Scavenge')
      .map((s) => s.cost / 1000)
      .sort((a, b) => a - b)
    const youngPauseMs = { median: young.length > 0 ? young[young.length >> 1]! : 0, max: young.length > 0 ? young[young.length - 1]! : 0 }
    return { allocated, count: stats.length, young: young.length, youngPauseMs }
  }
}

interface GcStatistic {
  gcType: string
  /** Duration of the collection, µs. */
  cost: number
  beforeGC: { heapStatistics: { usedHeapSize: number } }
  afterGC: { heapStatistics: { usedHeapSize: number } }
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]!) as ClientSpec
  const samples: Array<[number, number]> = []
  const t0 = performance.now()
  const sampler = spec.sampleRssMs ? setInterval(() => samples.push([Math.round(performance.now() - t0), process.memoryUsage.rss()]), spec.sampleRssMs) : null
  let outcome: ClientOutcome
  try {
    const heap = new HeapWatch()
    const cpu0 = process.cpuUsage()
    const r = spec.tool === 'autocannon' ? await runAutocannon(spec) : spec.tool === 'undici' ? await runBareUndici(spec) : await runHedgebench(spec)
    const cpu = process.cpuUsage(cpu0)
    const gc = heap.stop()
    const per = (x: number, n: number): number => (r.requests > 0 ? (x * n) / r.requests : 0)
    outcome = {
      type: 'done',
      ...r,
      cpuUsPerRequest: per(cpu.user + cpu.system, 1),
      maxRss: process.resourceUsage().maxRSS * 1024,
      rssSamples: samples,
      heapBytesPerRequest: per(gc.allocated, 1),
      youngGcsPer10k: per(gc.young, 10_000),
      gcsPer10k: per(gc.count, 10_000),
      youngPauseMs: gc.youngPauseMs,
    }
  } catch (err) {
    outcome = {
      type: 'done',
      tool: spec.tool,
      requests: 0,
      attempts: 0,
      errors: 0,
      durationMs: 0,
      rps: 0,
      cpuUsPerRequest: 0,
      maxRss: 0,
      rssSamples: samples,
      heapBytesPerRequest: 0,
      youngGcsPer10k: 0,
      gcsPer10k: 0,
      youngPauseMs: { median: 0, max: 0 },
      latencyMs: { p50: 0, p95: 0, p99: 0, max: 0 },
      error: String((err as Error)?.stack ?? err),
    }
  }
  if (sampler) clearInterval(sampler)
  if (!process.send) {
    process.stdout.write(JSON.stringify(outcome) + '\n')
    return
  }
  process.send(outcome)
  // Stay alive (bounded) until the parent has looked at the server's sockets.
  const bye = setTimeout(() => process.exit(0), 30_000)
  process.on('message', (msg: { type?: string }) => {
    if (msg?.type === 'exit') {
      clearTimeout(bye)
      process.exit(0)
    }
  })
}

await main()
