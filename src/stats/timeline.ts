/**
 * One point per second of a phase (bounded), for the latency-over-time and
 * hedges-over-time charts. Each second's p50/p99 comes from a histogram
 * that is reset when the second rolls over, so memory stays constant.
 * `SecondRecorder` does the bucketing; what a closed second becomes is the
 * caller's choice: a TimelinePoint here, a mergeable snapshot in a worker.
 */
import { createHistogram, percentileMs, recordMs, type Histogram } from './histogram.js'
import type { TimelinePoint } from '../results/run-result.js'
import { round3 } from '../core/round.js'

/** An hour of points; longer phases stop adding points (the totals still count). */
export const MAX_POINTS = 3600

/** What one second summed up. */
export interface SecondSums {
  t: number
  requests: number
  errors: number
  hedges: number
  delaySum: number
  delayCount: number
}

export class SecondRecorder<P> {
  readonly points: P[] = []
  readonly #sums: SecondSums = { t: 0, requests: 0, errors: 0, hedges: 0, delaySum: 0, delayCount: 0 }
  readonly #histogram = createHistogram()
  #bucket = 0

  /**
   * @param origin performance.now() of second 0
   * @param close turns a closed second (its sums and latency histogram, both reused afterwards) into a point
   * @param bucketMs the width of a point (1000: one per second; FINE_BUCKET_MS for short phases); `t` stays in seconds
   */
  constructor(
    private readonly origin: number,
    private readonly close: (sums: SecondSums, histogram: Histogram) => P,
    private readonly bucketMs = 1000,
  ) {}

  request(now: number, latencyMs: number, failed: boolean, delayMs: number | null): void {
    this.#roll(now)
    const sums = this.#sums
    sums.requests++
    if (failed) sums.errors++
    recordMs(this.#histogram, latencyMs)
    if (delayMs !== null) {
      sums.delaySum += delayMs
      sums.delayCount++
    }
  }

  hedge(now: number): void {
    this.#roll(now)
    this.#sums.hedges++
  }

  /** A hedge the server refused (it is counted again when resent): taken back from the current point, if it is still there. */
  unhedge(now: number): void {
    this.#roll(now)
    if (this.#sums.hedges > 0) this.#sums.hedges--
  }

  /** Closes the last (partial) second. */
  finish(now: number): P[] {
    this.#roll(now)
    this.#flush()
    return this.points
  }

  #roll(now: number): void {
    const bucket = Math.floor((now - this.origin) / this.bucketMs)
    if (bucket <= this.#bucket) return
    this.#flush()
    this.#bucket = bucket
    this.#sums.t = this.bucketMs === 1000 ? bucket : Math.round(bucket * this.bucketMs) / 1000
  }

  #flush(): void {
    const sums = this.#sums
    if (sums.requests === 0 && sums.hedges === 0) return
    if (this.points.length < MAX_POINTS) this.points.push(this.close(sums, this.#histogram))
    sums.requests = sums.errors = sums.hedges = sums.delaySum = sums.delayCount = 0
    this.#histogram.reset()
  }
}

/** A second as the charts show it. */
export function timelinePoint(s: SecondSums, histogram: Histogram): TimelinePoint {
  return {
    t: s.t,
    requests: s.requests,
    errors: s.errors,
    p50Ms: percentileMs(histogram, 50),
    p99Ms: percentileMs(histogram, 99),
    hedges: s.hedges,
    delayMs: s.delayCount > 0 ? round3(s.delaySum / s.delayCount) : null,
  }
}

export class TimelineRecorder extends SecondRecorder<TimelinePoint> {
  constructor(startedAt: number, bucketMs = 1000) {
    super(startedAt, timelinePoint, bucketMs)
  }
}

/**
 * Short phases also get points every FINE_BUCKET_MS, so a 1.75 s phase is
 * not drawn as two points joined by a line: kept while the phase is under
 * FINE_HORIZON_MS (at most 50 points), reported only when it ended there.
 */
export const FINE_BUCKET_MS = 100
export const FINE_HORIZON_MS = 5000
