/**
 * A running lane read once a second (`watch`): what its PhaseStats counted
 * since the last reading, as one LaneSecond, and that second's latencies as
 * a histogram (the cumulative one minus the last reading's), so nothing is
 * kept per request and memory stays flat however long the lane runs.
 */
import { createHistogram, percentileMs } from './histogram.js'
import type { PhaseStats } from './phase-stats.js'
import { LANE_COUNT_KEYS, type LaneCounts, type LaneSecond } from '../results/watch-result.js'

export type { LaneSecond } from '../results/watch-result.js'

export class LaneSampler {
  readonly #previous = createHistogram()
  /** The last second's latencies: valid until the next reading. */
  readonly second = createHistogram()
  #counts: LaneCounts = { requests: 0, errors: 0, slow: 0, attempts: 0, hedges: 0, hedgeWins: 0, cancelled: 0, budgetDenied: 0 }
  #kinds = new Map<string, number>()

  constructor(readonly stats: PhaseStats) {}

  /** The counts so far (a metrics scrape reads these between seconds). */
  totals(): LaneCounts & { delayMs: number | null } {
    const f = this.stats.figures
    const h = this.stats.hedgeCounts()
    return {
      requests: f.requests,
      errors: f.errors,
      slow: f.slowCount,
      attempts: f.attempts,
      hedges: h.hedgesSent,
      hedgeWins: h.hedgeWins,
      cancelled: h.cancelled,
      budgetDenied: h.budgetDenied,
      delayMs: h.delayMs,
    }
  }

  /** The second that ends at `t` (seconds since the window started); `this.second` holds its latencies. */
  read(t: number): LaneSecond {
    const { delayMs, ...now } = this.totals()
    const last = this.#counts
    const delta = Object.fromEntries(LANE_COUNT_KEYS.map((k) => [k, now[k] - last[k]])) as unknown as LaneCounts
    this.#counts = now
    const cumulative = this.stats.figures.histogram
    this.second.reset()
    this.second.add(cumulative)
    this.second.subtract(this.#previous)
    this.#previous.reset()
    this.#previous.add(cumulative)
    const kinds = this.#kindsSince()
    const some = this.second.totalCount > 0
    return {
      t,
      ...delta,
      p50Ms: some ? percentileMs(this.second, 50) : null,
      p99Ms: some ? percentileMs(this.second, 99) : null,
      delayMs: this.stats.hedging ? delayMs : null,
      ...(kinds ? { errorKinds: kinds } : {}),
    }
  }

  #kindsSince(): Record<string, number> | null {
    const out: Record<string, number> = {}
    let any = false
    for (const [kind, count] of this.stats.figures.errorKinds) {
      const added = count - (this.#kinds.get(kind) ?? 0)
      if (added > 0) {
        out[kind] = added
        any = true
      }
    }
    this.#kinds = new Map(this.stats.figures.errorKinds)
    return any ? out : null
  }
}
