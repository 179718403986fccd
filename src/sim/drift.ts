/**
 * Latency that wanders: a shared machine's speed drifts over seconds (a
 * neighbour's load, frequency scaling, a cache warming), within a run and
 * from one run to the next. The model multiplies work time by exp(X(t)),
 * where X is an Ornstein-Uhlenbeck process: mean 0, standard deviation
 * `sigma` (in log units: 0.1 is about ±10 %), forgetting its past over
 * `tauMs`. It is drawn on a 10 ms grid from its own seeded stream and
 * depends only on the clock, never on the traffic, so every replica behind
 * the same machine sees the same wander and a run replays from its seed.
 */
import { seededRandom } from '../core/random.js'
import type { DriftSpec } from './profile-schema.js'

/** Grid step of the process: finer than any latency it scales matters. */
const STEP_MS = 10

export class Drift {
  readonly #random: () => number
  readonly #keep: number
  readonly #kick: number
  readonly #originMs: number
  #step = 0
  #x: number
  #spare: number | null = null

  constructor(spec: DriftSpec, seed: number, originMs: number) {
    this.#random = seededRandom(seed)
    this.#keep = Math.exp(-STEP_MS / spec.tauMs)
    this.#kick = spec.sigma * Math.sqrt(1 - this.#keep ** 2)
    this.#originMs = originMs
    // Started from its stationary spread, so a run's first second wanders like any other.
    this.#x = spec.sigma * this.#normal()
  }

  /** The factor work time is multiplied by at `t` (callers only move forward in time; earlier is read as now). */
  factorAt(t: number): number {
    const step = Math.floor((t - this.#originMs) / STEP_MS)
    // Bounded: a day of 10 ms steps; a clock that jumps further is not a drift.
    for (let guard = 0; this.#step < step && guard < 8_640_000; guard++) {
      this.#x = this.#keep * this.#x + this.#kick * this.#normal()
      this.#step++
    }
    return Math.exp(this.#x)
  }

  /** Box-Muller, both values used. */
  #normal(): number {
    if (this.#spare !== null) {
      const z = this.#spare
      this.#spare = null
      return z
    }
    const r = Math.sqrt(-2 * Math.log(1 - this.#random()))
    const a = 2 * Math.PI * this.#random()
    this.#spare = r * Math.sin(a)
    return r * Math.cos(a)
  }
}
