/**
 * One point per second of a phase (bounded), for the latency-over-time and
 * hedges-over-time charts. Each second's p50/p99 comes from a histogram
 * that is reset when the second rolls over, so memory stays constant.
 */
import { createHistogram, percentileMs, recordMs } from './histogram.js'
import type { TimelinePoint } from './types.js'

/** An hour of points; longer phases stop adding points (the totals still count). */
const MAX_POINTS = 3600

export class TimelineRecorder {
  readonly points: TimelinePoint[] = []
  #second = 0
  #requests = 0
  #errors = 0
  #hedges = 0
  #delaySum = 0
  #delayCount = 0
  readonly #histogram = createHistogram()

  constructor(private readonly startedAt: number) {}

  request(now: number, latencyMs: number, failed: boolean, delayMs: number | null): void {
    this.#roll(now)
    this.#requests++
    if (failed) this.#errors++
    recordMs(this.#histogram, latencyMs)
    if (delayMs !== null) {
      this.#delaySum += delayMs
      this.#delayCount++
    }
  }

  hedge(now: number): void {
    this.#roll(now)
    this.#hedges++
  }

  /** Closes the last (partial) second. */
  finish(now: number): TimelinePoint[] {
    this.#roll(now)
    this.#flush()
    return this.points
  }

  #roll(now: number): void {
    const second = Math.floor((now - this.startedAt) / 1000)
    if (second <= this.#second) return
    this.#flush()
    this.#second = second
  }

  #flush(): void {
    if (this.#requests === 0 && this.#hedges === 0) return
    if (this.points.length < MAX_POINTS) {
      this.points.push({
        t: this.#second,
        requests: this.#requests,
        errors: this.#errors,
        p50Ms: percentileMs(this.#histogram, 50),
        p99Ms: percentileMs(this.#histogram, 99),
        hedges: this.#hedges,
        delayMs: this.#delayCount > 0 ? Math.round((this.#delaySum / this.#delayCount) * 1000) / 1000 : null,
      })
    }
    this.#requests = this.#errors = this.#hedges = this.#delaySum = this.#delayCount = 0
    this.#histogram.reset()
  }
}
