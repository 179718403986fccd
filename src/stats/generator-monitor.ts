/**
 * Watches the generator itself during a phase: event-loop delay and CPU. A
 * saturated generator measures its own queueing, not the target's latency,
 * and the report has to say so.
 */
import { availableParallelism } from 'node:os'
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'
import type { GeneratorHealth } from '../results/run-result.js'

/** CPU use (of the cores the generator has) above which we call it saturated. */
const CPU_SATURATED_PCT = 90
/** Event-loop p99 delay above this share of the hedge delay distorts hedging. */
const LOOP_DELAY_SHARE = 0.1
/** Sampling interval of the loop-delay histogram; its samples include this interval. */
const RESOLUTION_MS = 10
/**
 * Below this wall time a phase's CPU share says nothing about saturation:
 * start-up, JIT compilation and GC threads dominate it (runs of 20 requests
 * read 110-130 % of one core).
 */
export const MIN_CPU_WALL_MS = 1000

export class GeneratorMonitor {
  readonly #loop: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  readonly #cpuStart = process.cpuUsage()
  readonly #wallStart = performance.now()

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
    const nsToMs = (ns: number): number => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 1000) / 1000)
    const loop = this.#loop.count > 0
      ? { p50: nsToMs(this.#loop.percentile(50)), p99: nsToMs(this.#loop.percentile(99)), max: nsToMs(this.#loop.max) }
      : { p50: 0, p99: 0, max: 0 }
    return assessGenerator({ loop, cpuPct, cpuJudged: wallMs >= MIN_CPU_WALL_MS, threads: this.threads, hedgeDelayMs })
  }
}

export interface GeneratorReading {
  loop: GeneratorHealth['eventLoopDelayMs']
  cpuPct: number
  /** The phase lasted long enough for its CPU share to be judged (MIN_CPU_WALL_MS). */
  cpuJudged: boolean
  threads: number
  hedgeDelayMs: number | null
}

/** The health verdict, naming its cause; the same for one thread and for a worker pool. */
export function assessGenerator(r: GeneratorReading): GeneratorHealth {
  const warnings: string[] = []
  const saturatedBy: NonNullable<GeneratorHealth['saturatedBy']> = []
  const machineCores = availableParallelism()
  // process.cpuUsage() counts every thread of the process (V8's GC and compiler threads too), so the share of the generating threads can pass 100 %.
  if (r.cpuJudged && r.cpuPct >= CPU_SATURATED_PCT * r.threads) {
    saturatedBy.push('cpu')
    warnings.push(`generator CPU at ${r.cpuPct.toFixed(0)}% of one core with ${threadsText(r.threads)} (the machine has ${machineCores} cores): results are bounded by the generator, not the target`)
  }
  if (r.hedgeDelayMs !== null && r.hedgeDelayMs > 0 && r.loop.p99 > LOOP_DELAY_SHARE * r.hedgeDelayMs) {
    saturatedBy.push('event-loop')
    warnings.push(`event-loop p99 delay ${r.loop.p99} ms is over 10% of the ${r.hedgeDelayMs} ms hedge delay: hedge timers fire late`)
  }
  return { eventLoopDelayMs: r.loop, cpuPct: r.cpuPct, cores: r.threads, saturated: saturatedBy.length > 0, warnings, saturatedBy, cpuJudged: r.cpuJudged, machineCores }
}

const threadsText = (n: number): string => (n === 1 ? '1 generator thread' : `${n} generator threads`)
