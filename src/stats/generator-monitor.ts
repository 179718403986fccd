/**
 * Watches the generator itself during a phase: event-loop delay and CPU. A
 * saturated generator measures its own queueing, not the target's latency,
 * and the report has to say so.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'
import type { GeneratorHealth } from '../results/run-result.js'

/** CPU use (of the cores the generator has) above which we call it saturated. */
const CPU_SATURATED_PCT = 90
/** Event-loop p99 delay above this share of the hedge delay distorts hedging. */
const LOOP_DELAY_SHARE = 0.1
/** Sampling interval of the loop-delay histogram; its samples include this interval. */
const RESOLUTION_MS = 10

export class GeneratorMonitor {
  readonly #loop: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  readonly #cpuStart = process.cpuUsage()
  readonly #wallStart = performance.now()

  constructor(private readonly cores = 1) {
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
    const warnings = saturationWarnings(loop.p99, cpuPct, this.cores, hedgeDelayMs)
    return { eventLoopDelayMs: loop, cpuPct, cores: this.cores, saturated: warnings.length > 0, warnings }
  }
}

export function saturationWarnings(loopP99: number, cpuPct: number, cores: number, hedgeDelayMs: number | null): string[] {
  const warnings: string[] = []
  if (cpuPct >= CPU_SATURATED_PCT * cores) {
    warnings.push(`generator CPU at ${cpuPct.toFixed(0)}% of ${cores} core(s): results are bounded by the generator, not the target`)
  }
  if (hedgeDelayMs !== null && hedgeDelayMs > 0 && loopP99 > LOOP_DELAY_SHARE * hedgeDelayMs) {
    warnings.push(`event-loop p99 delay ${loopP99} ms is over 10% of the ${hedgeDelayMs} ms hedge delay: hedge timers fire late`)
  }
  return warnings
}
