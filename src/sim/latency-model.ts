/**
 * The simulated replicas' latency model: a few composable pieces, not one
 * function per profile, so a new scenario is a new JSON file.
 *
 *   base      how long normal work takes (uniform, lognormal or fixed)
 *   stalls    independent: each request stalls with probability p
 *             pause: time windows in which work is frozen (a GC pause); scope
 *             "replica" = each replica pauses on its own, "shared" = one
 *             dependency behind every replica, so they all pause together
 *   queue     bounded workers + a waiting line (applied by the server)
 *   errors    a share of requests answered with an error status
 *   overrides per-replica changes (a broken replica)
 *   drift     work time scaled by a factor that wanders over time, the same
 *             for every replica (a shared machine; drift.ts)
 *
 * All randomness is seeded. Each replica has its own request stream, and each
 * pause schedule its own stream, so a run replays whatever the interleaving:
 * every request draws the same number of values whatever it turns out to be.
 * Times are milliseconds on one monotonic clock (performance.now()).
 */
import { seededRandom } from '../core/random.js'
import { Drift } from './drift.js'

// The model's parts are declared once, by the profile schema that checks them.
import type { BaseSpec, IndependentStallSpec, ModelSpec, PauseStallSpec, QueueSpec, Range, ReplicaOverride } from './profile-schema.js'
export type { BaseSpec, ErrorSpec, IndependentStallSpec, ModelSpec, PauseStallSpec, QueueSpec, Range, ReplicaOverride, StallSpec } from './profile-schema.js'

/** What one request will cost, drawn when a worker picks it up. */
export interface ServiceDraw {
  /** Work time, before pauses stretch it. */
  workMs: number
  /** 200, or the injected error status. */
  status: number
  /** An independent stall hit this request. */
  stalled: boolean
}

export interface ReplicaModel {
  readonly index: number
  readonly queue: QueueSpec | null
  /** Requests after which the replica dies, or null. */
  readonly dieAfter: number | null
  draw(): ServiceDraw
  /** When work of `workMs` started at `startMs` finishes, with pauses freezing it. */
  finishAt(startMs: number, workMs: number): number
}

/** Builds one model per replica. `originMs` is when the pause schedules start. */
export function createReplicaModels(spec: ModelSpec, replicas: number, seed: number, originMs: number): ReplicaModel[] {
  const shared = (spec.stalls ?? []).flatMap((s, k) =>
    s.type === 'pause' && s.scope === 'shared' ? [new PauseSchedule(s, seededRandom(deriveSeed(seed, 0xffff, k)), originMs)] : [],
  )
  const drift = spec.drift ? new Drift(spec.drift, deriveSeed(seed, 0xfffe, 0), originMs) : null
  const models: ReplicaModel[] = []
  for (let index = 0; index < replicas; index++) {
    const override = spec.overrides?.find((o) => o.index === index)
    models.push(replicaModel(spec, override, index, seed, originMs, shared, drift))
  }
  return models
}

function replicaModel(
  spec: ModelSpec,
  override: ReplicaOverride | undefined,
  index: number,
  seed: number,
  originMs: number,
  shared: PauseSchedule[],
  drift: Drift | null,
): ReplicaModel {
  const random = seededRandom(deriveSeed(seed, index, 1))
  const stalls = [...(spec.stalls ?? []), ...(override?.stalls ?? [])]
  const independent = stalls.filter((s): s is IndependentStallSpec => s.type === 'independent')
  const own = stalls.flatMap((s, k) =>
    s.type === 'pause' && s.scope === 'replica' ? [new PauseSchedule(s, seededRandom(deriveSeed(seed, index, 2 + k)), originMs)] : [],
  )
  const schedules = [...own, ...shared]
  const base = override?.base ?? spec.base
  const addMs = (spec.addMs ?? 0) + (override?.addMs ?? 0)
  const errors = override?.errors ?? spec.errors ?? null
  return {
    index,
    queue: override?.queue ?? spec.queue ?? null,
    dieAfter: override?.dieAfter ?? null,
    draw() {
      let workMs = drawBase(base, random) + addMs
      let stalled = false
      for (const s of independent) {
        const hit = random() < s.probability
        const extra = drawMs(s.ms, random())
        if (hit) {
          workMs += extra
          stalled = true
        }
      }
      const failed = random() < (errors?.rate ?? 0)
      return { workMs: Math.max(0, workMs), status: failed && errors ? errors.status : 200, stalled }
    },
    finishAt: (startMs, workMs) => finishWithPauses(startMs, drift ? workMs * drift.factorAt(startMs) : workMs, schedules),
  }
}

function drawBase(base: BaseSpec, random: () => number): number {
  // Two draws whatever the type, so the stream position never depends on it.
  const u1 = random()
  const u2 = random()
  switch (base.type) {
    case 'fixed':
      return base.ms
    case 'uniform':
      return base.min + (base.max - base.min) * u1
    case 'lognormal': {
      // Box-Muller; 1 - u1 keeps log() away from 0.
      const z = Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2)
      return base.median * Math.exp(base.sigma * z)
    }
  }
}

function drawMs(ms: number | Range, u: number): number {
  return typeof ms === 'number' ? ms : ms.min + (ms.max - ms.min) * u
}

/**
 * Pause windows, generated lazily from the schedule's own random stream:
 * gap ~ exponential(everyMs), then a pause of uniform(durationMs). Windows
 * depend only on the seed and the clock, never on the traffic, which is what
 * makes a shared schedule hit every replica at the same moment.
 */
export class PauseSchedule {
  private readonly windows: Range[] = []
  private cursor: number

  constructor(
    private readonly spec: PauseStallSpec,
    private readonly random: () => number,
    originMs: number,
  ) {
    this.cursor = originMs
  }

  /** End of the pause covering `t`, or `t` when none does. */
  pauseEndAt(t: number): number {
    this.generateUntil(t)
    for (const w of this.windows) if (w.min <= t && t < w.max) return w.max
    return t
  }

  /** Start of the first pause beginning after `t`. */
  nextStartAfter(t: number): number {
    this.generateUntil(t)
    for (const w of this.windows) if (w.min > t) return w.min
    return this.windows[this.windows.length - 1]!.min // unreachable: generateUntil leaves one ahead
  }

  /** Drops windows that ended before `t` (callers only move forward in time). */
  forget(t: number): void {
    while (this.windows.length > 1 && this.windows[0]!.max <= t) this.windows.shift()
  }

  private generateUntil(t: number): void {
    while (this.windows.length === 0 || this.windows[this.windows.length - 1]!.min <= t) {
      const gap = -this.spec.everyMs * Math.log(1 - this.random())
      const start = this.cursor + gap
      const duration = drawMs(this.spec.durationMs, this.random())
      this.windows.push({ min: start, max: start + duration })
      this.cursor = start + duration
    }
  }
}

/** Work is frozen while any schedule is paused (a GC pause stops the world). */
export function finishWithPauses(startMs: number, workMs: number, schedules: PauseSchedule[]): number {
  if (schedules.length === 0) return startMs + workMs
  for (const s of schedules) s.forget(startMs)
  let t = startMs
  let remaining = workMs
  // Bounded: each round passes one pause; 100k pauses inside one request is not a model.
  for (let round = 0; round < 100_000; round++) {
    t = leavePauses(t, schedules)
    const next = Math.min(...schedules.map((s) => s.nextStartAfter(t)))
    if (t + remaining <= next) return t + remaining
    remaining -= next - t
    t = next
  }
  return t + remaining
}

function leavePauses(t: number, schedules: PauseSchedule[]): number {
  for (let moved = true, guard = 0; moved && guard < 100_000; guard++) {
    moved = false
    for (const s of schedules) {
      const end = s.pauseEndAt(t)
      if (end > t) {
        t = end
        moved = true
      }
    }
  }
  return t
}

/** Mixes a seed with stream ids (FNV-style), so streams never overlap in practice. */
function deriveSeed(...parts: number[]): number {
  let h = 0x811c9dc5
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193)
    h ^= h >>> 15
  }
  return h >>> 0
}
