/**
 * Where the hedge delay comes from. A fixed delay (a duration, or a
 * percentile measured once in the warm-up) or a rolling percentile of recent
 * original-attempt latencies, clamped (`clamp(recent_p95, 20 ms, 80 ms)`).
 */

export interface DelaySource {
  /** Delay to use for the next request, ms. */
  current(): number
  /** Latency of an original attempt (or its elapsed time when it was cancelled), ms. */
  observe(latencyMs: number): void
}

export function fixedDelay(ms: number): DelaySource {
  return { current: () => ms, observe: () => {} }
}

export interface RollingOptions {
  percentile: number
  initialMs: number
  minMs: number
  maxMs: number
  /** Window by count of samples... */
  windowRequests?: number
  /** ...or by age, ms. */
  windowMs?: number
  now?: () => number
}

/** Samples kept at most, whatever the window: bounds memory and refresh cost. */
const MAX_SAMPLES = 10_000
/** Recompute the percentile every this many samples, not on every request. */
const REFRESH_EVERY = 32

/**
 * Rolling percentile over a ring buffer. Recomputing on every sample would
 * cost a sort per request, so the delay is refreshed every REFRESH_EVERY
 * samples, which tracks drift over tens of requests and costs little.
 */
export class RollingPercentileDelay implements DelaySource {
  readonly #opts: RollingOptions
  readonly #values: Float64Array
  readonly #times: Float64Array
  #next = 0
  #size = 0
  #sinceRefresh = 0
  #delay: number
  readonly #now: () => number

  constructor(opts: RollingOptions) {
    this.#opts = opts
    const capacity = Math.min(MAX_SAMPLES, Math.max(1, opts.windowRequests ?? MAX_SAMPLES))
    this.#values = new Float64Array(capacity)
    this.#times = new Float64Array(capacity)
    this.#now = opts.now ?? (() => performance.now())
    this.#delay = this.#clamp(opts.initialMs)
  }

  current(): number {
    return this.#delay
  }

  observe(latencyMs: number): void {
    this.#values[this.#next] = latencyMs
    this.#times[this.#next] = this.#now()
    this.#next = (this.#next + 1) % this.#values.length
    if (this.#size < this.#values.length) this.#size++
    if (++this.#sinceRefresh >= REFRESH_EVERY) this.#refresh()
  }

  #refresh(): void {
    this.#sinceRefresh = 0
    const oldest = this.#opts.windowMs === undefined ? -Infinity : this.#now() - this.#opts.windowMs
    const window: number[] = []
    for (let i = 0; i < this.#size; i++) if (this.#times[i]! >= oldest) window.push(this.#values[i]!)
    if (window.length === 0) return
    window.sort((a, b) => a - b)
    const rank = Math.min(window.length - 1, Math.ceil((this.#opts.percentile / 100) * window.length) - 1)
    this.#delay = this.#clamp(window[Math.max(0, rank)]!)
  }

  #clamp(ms: number): number {
    return Math.min(this.#opts.maxMs, Math.max(this.#opts.minMs, ms))
  }
}
