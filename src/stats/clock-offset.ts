/**
 * The target's clock against this generator's, from HTTP Date headers.
 * A Date header has whole seconds (truncated), so the server's clock read
 * [D, D + 1000) ms at some moment between our send and our receive:
 * offset = server - local lies in [D - receive, D + 1000 - send]. Each
 * response gives such an interval; their intersection narrows to about a
 * round trip once responses fall on both sides of a server second boundary.
 *
 * Reading every response would put a header scan on the hot path for
 * nothing: only responses near a boundary narrow the bounds. So `wants()`
 * (one subtraction and a modulo per request) picks those, plus a sparse
 * baseline while nothing is known yet.
 */
import type { WallClock } from '../core/wall-clock.js'
import type { ClockOffset } from '../results/run-result.js'

/** While the bounds are wider than a second: one sample per this many ms finds the first boundary. */
const BASELINE_GAP_MS = 50
/** Near a boundary: at most one sample per this many ms (bounds the cost at any rate). */
const NEAR_GAP_MS = 2
/** How far either side of a predicted boundary a send may be and still be read: covers a round trip on a LAN. */
const NEAR_MARGIN_MS = 20

export class ClockOffsetEstimator {
  #min = -Infinity
  #max = Infinity
  #samples = 0
  #lastSample = -Infinity

  constructor(readonly clock: WallClock) {}

  /** Is a request sent at `sendMs` (local wall clock) worth reading the Date of? */
  wants(sendMs: number): boolean {
    return this.quietFor(sendMs) === 0
  }

  /**
   * 0 when a request sent at `sendMs` is worth reading the Date of (and it
   * counts as taken); else how many ms from then until one could be, so
   * that a caller reads the wall clock no sooner (date-sampler.ts: one
   * wall clock read in many requests, not one each).
   */
  quietFor(sendMs: number): number {
    const width = this.#max - this.#min
    if (!(width < 1000)) return this.#take(sendMs, BASELINE_GAP_MS)
    const serverMs = sendMs + (this.#min + this.#max) / 2
    const inSecond = mod(serverMs, 1000)
    const fromBoundary = Math.min(inSecond, 1000 - inSecond)
    const reach = width / 2 + NEAR_MARGIN_MS
    // Past the boundary's window, the next one opens `reach` before the next server second.
    if (fromBoundary > reach) return 1000 - inSecond - reach
    return this.#take(sendMs, NEAR_GAP_MS)
  }

  #take(now: number, gap: number): number {
    const wait = this.#lastSample + gap - now
    if (wait > 0) return wait
    this.#lastSample = now
    return 0
  }

  /** One response: sent at `sendMs`, its headers received at `recvMs` (local), `dateMs` = its Date header. */
  observe(sendMs: number, recvMs: number, dateMs: number): void {
    const lo = dateMs - recvMs
    const hi = dateMs + 1000 - sendMs
    // A response outside the bounds so far means a clock stepped mid-run, or
    // the server's Date lagged (servers cache it per second; Node refreshes
    // it on a timer that runs late under load): never state bounds that
    // exclude a reading, so take the hull of both.
    if (lo > this.#max || hi < this.#min) {
      this.#min = Math.min(this.#min, lo)
      this.#max = Math.max(this.#max, hi)
    } else {
      this.#min = Math.max(this.#min, lo)
      this.#max = Math.min(this.#max, hi)
    }
    this.#samples++
  }

  result(): ClockOffset | null {
    if (this.#samples === 0) return null
    return { minMs: round1(this.#min), maxMs: round1(this.#max), samples: this.#samples }
  }
}

/**
 * Bounds measured by several estimators of one clock (the worker threads of
 * one process): intersected like responses are (the hull when they are
 * disjoint), samples summed.
 */
export function combineOffsets(parts: Array<ClockOffset | null>): ClockOffset | null {
  const known = parts.filter((p): p is ClockOffset => p !== null)
  if (known.length === 0) return null
  let { minMs, maxMs } = known[0]!
  for (const p of known.slice(1)) {
    if (p.minMs > maxMs || p.maxMs < minMs) [minMs, maxMs] = [Math.min(minMs, p.minMs), Math.max(maxMs, p.maxMs)]
    else [minMs, maxMs] = [Math.max(minMs, p.minMs), Math.min(maxMs, p.maxMs)]
  }
  return { minMs, maxMs, samples: known.reduce((n, p) => n + p.samples, 0) }
}

/** An HTTP Date header (IMF-fixdate) from undici's raw header list, in epoch ms, or null. */
export function dateHeaderMs(rawHeaders: Buffer[]): number | null {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if (name.length !== 4 || name.toString('latin1').toLowerCase() !== 'date') continue
    const ms = Date.parse(rawHeaders[i + 1]!.toString('latin1'))
    return Number.isFinite(ms) ? ms : null
  }
  return null
}

function mod(x: number, m: number): number {
  return ((x % m) + m) % m
}

function round1(x: number): number {
  return Math.round(x * 10) / 10
}
