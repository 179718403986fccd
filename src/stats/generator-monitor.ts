/**
 * Watches the generator itself during a phase: event-loop delay, CPU and
 * garbage-collection pauses. A saturated generator measures its own
 * queueing, not the target's latency, and the report has to say so.
 */
import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'
import { GcMonitor } from './gc-monitor.js'
import type { EventLoopDelay, GcPauses, GeneratorHealth } from '../results/run-result.js'
import { round3 } from '../core/round.js'

/** CPU use (of the cores the generator has) above which we call it saturated. */
const CPU_SATURATED_PCT = 90
/**
 * Event-loop p99 delay above this share of the hedge delay may distort
 * hedging; whether it changed the answer the report decides, against the
 * tail difference measured (report/generator-impact.ts).
 */
export const LOOP_DELAY_SHARE = 0.1
/** Sampling interval of the loop-delay histogram; its samples include this interval. */
const RESOLUTION_MS = 10
/**
 * Below this wall time a phase's CPU share says nothing about saturation:
 * start-up, JIT compilation and GC threads dominate it (runs of 20 requests
 * read 110-130 % of one core).
 */
export const MIN_CPU_WALL_MS = 1000
/**
 * A GC pause this long is worth a warning whatever the hedge delay: it is
 * five times the 1 ms event-loop delay a generator should stay under, and
 * every answer in flight during it (all -c of them) carries it.
 */
const GC_PAUSE_WARN_MS = 5

export class GeneratorMonitor {
  readonly #loop: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  readonly #cpuStart = process.cpuUsage()
  readonly #wallStart = performance.now()
  readonly #gc = new GcMonitor()

  /** @param threads threads generating the load (--workers), not the machine's cores */
  constructor(private readonly threads = 1) {
    this.#loop.enable()
  }

  /** Stops watching; `hedgeDelayMs` lets the check relate loop delay to the hedge delay. */
  finish(hedgeDelayMs: number | null): GeneratorHealth {
    this.#loop.disable()
    const cpu = process.cpuUsage(this.#cpuStart)
    const wallMs = Math.max(1, performance.now() - this.#wallStart)
    const cpuPct = Math.round(((cpu.user + cpu.system) / 1000 / wallMs) * 1000) / 10
    const nsToMs = (ns: number): number => Math.max(0, round3(ns / 1e6 - RESOLUTION_MS))
    const samples = this.#loop.count
    const loop =
      samples > 0
        ? { p50: nsToMs(this.#loop.percentile(50)), p99: nsToMs(this.#loop.percentile(99)), max: nsToMs(this.#loop.max), samples }
        : { p50: 0, p99: 0, max: 0, samples }
    const gc = this.#gc.finish()
    return assessGenerator({ loop, cpuPct, cpuJudged: wallMs >= MIN_CPU_WALL_MS, threads: this.threads, hedgeDelayMs, gc })
  }
}

export interface GeneratorReading {
  loop: GeneratorHealth['eventLoopDelayMs']
  cpuPct: number
  /** The phase lasted long enough for its CPU share to be judged (MIN_CPU_WALL_MS). */
  cpuJudged: boolean
  threads: number
  hedgeDelayMs: number | null
  /** GC pauses over the phase, when measured. */
  gc?: GcPauses | undefined
}

/** The health verdict, naming its cause; the same for one thread and for a worker pool. */
export function assessGenerator(r: GeneratorReading): GeneratorHealth {
  const warnings: string[] = []
  const saturatedBy: NonNullable<GeneratorHealth['saturatedBy']> = []
  const machineCores = availableParallelism()
  // process.cpuUsage() counts every thread of the process (V8's GC and compiler threads too), so the share of the generating threads can pass 100 %.
  if (r.cpuJudged && r.cpuPct >= CPU_SATURATED_PCT * r.threads) {
    saturatedBy.push('cpu')
    warnings.push(
      `generator CPU at ${r.cpuPct.toFixed(0)}% of one core with ${threadsText(r.threads)} (the machine has ${machineCores} cores): results are bounded by the generator, not the target`,
    )
  }
  // A loop late by a whole hedge delay fires hedges at twice their time or later: the hedging measured is not the one set.
  // A smaller share is said only where it could have changed the answer (report/generator-impact.ts).
  if (r.hedgeDelayMs !== null && r.hedgeDelayMs > 0 && r.loop.p99 >= r.hedgeDelayMs) {
    saturatedBy.push('event-loop')
    warnings.push(`event-loop p99 delay ${r.loop.p99} ms is at least the ${r.hedgeDelayMs} ms hedge delay: hedge timers fire at twice their time or later`)
  }
  if (r.gc && gcPauseMatters(r.gc.maxMs, r.hedgeDelayMs)) {
    saturatedBy.push('gc')
    const longest = r.gc.maxMs.toFixed(1)
    warnings.push(
      `GC paused the generator ${r.gc.count} time${r.gc.count === 1 ? '' : 's'}, longest ${longest} ms: latencies above p99 may include up to ${longest} ms of the generator's own pauses`,
    )
  }
  const health: GeneratorHealth = {
    eventLoopDelayMs: r.loop,
    cpuPct: r.cpuPct,
    cores: r.threads,
    saturated: saturatedBy.length > 0,
    warnings,
    saturatedBy,
    cpuJudged: r.cpuJudged,
    machineCores,
  }
  if (r.gc) health.gc = r.gc
  const ports = ephemeralPorts()
  if (ports !== null) health.ephemeralPorts = ports
  return health
}

let localPorts: number | null | undefined

/** How many local ports connections are made from (Linux's ip_local_port_range), read once; null where it cannot be read. */
export function ephemeralPorts(read: () => string = () => readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')): number | null {
  if (localPorts !== undefined) return localPorts
  try {
    const [low, high] = read().trim().split(/\s+/).map(Number)
    localPorts = Number.isInteger(low) && Number.isInteger(high) && high! >= low! ? high! - low! + 1 : null
  } catch {
    localPorts = null
  }
  return localPorts
}

/** Several loops as one: the worst of each figure (one slow thread delays its answers), the samples added up. */
export function worstLoop(loops: readonly EventLoopDelay[]): EventLoopDelay {
  const worst: EventLoopDelay = {
    p50: Math.max(0, ...loops.map((l) => l.p50)),
    p99: Math.max(0, ...loops.map((l) => l.p99)),
    max: Math.max(0, ...loops.map((l) => l.max)),
  }
  // Runs saved before samples were counted have none: the merge then claims no count either.
  if (loops.every((l) => l.samples !== undefined)) worst.samples = loops.reduce((n, l) => n + l.samples!, 0)
  return worst
}

const threadsText = (n: number): string => (n === 1 ? '1 generator thread' : `${n} generator threads`)

/** Long on its own (GC_PAUSE_WARN_MS), or as long as the hedge delay (a hedge due during it fires a whole delay late). */
function gcPauseMatters(maxMs: number, hedgeDelayMs: number | null): boolean {
  if (maxMs >= GC_PAUSE_WARN_MS) return true
  return hedgeDelayMs !== null && hedgeDelayMs > 0 && maxMs >= hedgeDelayMs
}
