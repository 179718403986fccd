/**
 * Garbage-collection pauses of this thread, from a PerformanceObserver on
 * 'gc' entries: each collection stops the thread that reads the clock, so
 * every answer in flight waits that long and the latency it records
 * includes the generator's own pause.
 */
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks'
import type { GcPauses } from '../results/run-result.js'
import { round3 } from '../core/round.js'

/** A 'gc' entry: `detail.kind` says which collection (Node >= 16). */
type GcEntry = PerformanceEntry & { detail?: { kind?: number } }

export class GcMonitor {
  readonly #pauses: GcPauses = { count: 0, young: 0, totalMs: 0, maxMs: 0 }
  readonly #observer = new PerformanceObserver((list) => this.#add(list.getEntries()))

  constructor() {
    this.#observer.observe({ entryTypes: ['gc'] })
  }

  /** Stops watching; entries not yet delivered to the callback are taken too. */
  finish(): GcPauses {
    this.#add(this.#observer.takeRecords())
    this.#observer.disconnect()
    const p = this.#pauses
    return { count: p.count, young: p.young, totalMs: round3(p.totalMs), maxMs: round3(p.maxMs) }
  }

  #add(entries: PerformanceEntry[]): void {
    const p = this.#pauses
    for (const e of entries) {
      p.count++
      if ((e as GcEntry).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) p.young++
      p.totalMs += e.duration
      if (e.duration > p.maxMs) p.maxMs = e.duration
    }
  }
}

/** Several threads' pauses as one: counts and time add up, the longest is the longest of all. */
export function mergeGcPauses(parts: ReadonlyArray<GcPauses | undefined>): GcPauses {
  const all = parts.filter((p): p is GcPauses => p !== undefined)
  return {
    count: all.reduce((s, p) => s + p.count, 0),
    young: all.reduce((s, p) => s + p.young, 0),
    totalMs: round3(all.reduce((s, p) => s + p.totalMs, 0)),
    maxMs: Math.max(0, ...all.map((p) => p.maxMs)),
  }
}
