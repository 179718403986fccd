/**
 * A running lane read once a second (`watch`): what its PhaseStats counted
 * since the last reading, as one LaneSecond, and that second's latencies as
 * a histogram (the cumulative one minus the last reading's), so nothing is
 * kept per request and memory stays flat however long the lane runs.
 *
 * A watch's segment is folded from parts (take()): what the lane counted
 * since the last part, read at each second and at a mark, so a mark in the
 * middle of a second splits that second's requests exactly where it fell
 * (by when they finished) while the second itself stays one point.
 */
import { createHistogram, percentileMs, type Histogram } from './histogram.js'
import type { PhaseStats } from './phase-stats.js'
import { LANE_COUNT_KEYS, type LaneCounts, type LaneSecond } from '../results/watch-result.js'

export type { LaneSecond } from '../results/watch-result.js'

/** What a lane counted over a span: its counts, its error kinds, its latencies. */
export interface LanePart {
  counts: LaneCounts
  errorKinds: Record<string, number> | null
  /** Valid until the next take of the same reading. */
  histogram: Histogram
}

const NO_COUNTS: LaneCounts = { requests: 0, errors: 0, slow: 0, attempts: 0, hedges: 0, hedgeWins: 0, cancelled: 0, budgetDenied: 0 }

/** A lane's totals against the last time they were taken: each take is what came since. */
class Reading {
  readonly #previous = createHistogram()
  readonly #since = createHistogram()
  #counts: LaneCounts = NO_COUNTS
  #kinds = new Map<string, number>()

  constructor(readonly stats: PhaseStats) {}

  take(now: LaneCounts): LanePart {
    const last = this.#counts
    const counts = Object.fromEntries(LANE_COUNT_KEYS.map((k) => [k, now[k] - last[k]])) as unknown as LaneCounts
    this.#counts = now
    const cumulative = this.stats.figures.histogram
    this.#since.reset()
    this.#since.add(cumulative)
    this.#since.subtract(this.#previous)
    this.#previous.reset()
    this.#previous.add(cumulative)
    return { counts, errorKinds: this.#kindsSince(), histogram: this.#since }
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

export class LaneSampler {
  readonly #seconds: Reading
  readonly #parts: Reading
  /** The last second's latencies: valid until the next reading. */
  second: Histogram = createHistogram()

  constructor(readonly stats: PhaseStats) {
    this.#seconds = new Reading(stats)
    this.#parts = new Reading(stats)
  }

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
    const { counts, errorKinds, histogram } = this.#seconds.take(now)
    this.second = histogram
    const some = histogram.totalCount > 0
    return {
      t,
      ...counts,
      p50Ms: some ? percentileMs(histogram, 50) : null,
      p99Ms: some ? percentileMs(histogram, 99) : null,
      delayMs: this.stats.hedging ? delayMs : null,
      ...(errorKinds ? { errorKinds } : {}),
    }
  }

  /** What the lane counted since the last part: a segment's share (at a second's reading, and at a mark). */
  take(): LanePart {
    const { delayMs: _, ...now } = this.totals()
    return this.#parts.take(now)
  }
}
