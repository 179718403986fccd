/**
 * A run as a plan, decided before anything is sent: which windows run in
 * which order, each window's lanes and size, how a request picks its lane,
 * and after which window the hedge delay is read; and, once that window is
 * measured, the hedge delay and its hedging set-up computed from the
 * histogram. Pure: no socket, no clock, no thread. run.ts carries the plan
 * out on a window runner (windows.ts); test/run-plan.test.ts checks it alone.
 */
import { formatMs } from '../core/duration.js'
import { percentileMs } from '../stats/histogram.js'
import { requestsNeeded } from '../stats/noise.js'
import type { MeasuredPhase } from '../stats/phase-snapshot.js'
import type { HedgingSetup } from '../stats/phase-stats.js'
import type { PhaseName } from '../results/run-result.js'
import { delayPercentile } from './lane.js'
import type { ResolvedHedge, ResolvedRun } from './resolve-options.js'

/** How long a window runs: a request count or a duration (-z); and, for the default warm-up, a least duration. */
export interface WindowSize {
  requests: number | null
  durationMs: number | null
  minDurationMs: number
}

/** A lane as planned: its phase, and whether it hedges (its delay is known only when its window starts). */
export interface PlannedLane {
  name: PhaseName
  /** Warm-up only: measure the delay on the requests after this many. */
  steadyAfter?: number
  hedged: boolean
  /** A sweep's setting lane: the index of its setting. */
  setting?: number
  /** A mix (--targets): the index of the target this lane sends. */
  target?: number
}

/** A mix's lanes: each phase's lane once per target, in target order; the target of a request drawn by weight, or, in the warm-up, by a seeded shuffle of blocks (every target measured alike). */
export interface TargetDraw {
  weights: number[]
  draw: 'weighted' | 'blocks'
}

/** How each request of a window picks its lane: the only one, a fair coin (interleaved), or a seeded shuffle of blocks (a sweep: lane.ts). */
export type LaneChoice = 'one' | 'coin' | 'blocks'

export interface PlannedWindow {
  lanes: PlannedLane[]
  size: WindowSize
  choice: LaneChoice
  /** The run's hedge delay is derived from this window's measurements as soon as it ends (unless the run was stopped). */
  derivesDelay: boolean
  /** A mix: `lanes` are each phase's lane per target (phase-major), a request's target drawn so. */
  targets?: TargetDraw
  /** A measured window (not the warm-up): a --load-schedule or --concurrency-schedule paces it, and each of its lanes sends --skip-first uncounted requests first (in its size). */
  measured: boolean
}

export interface RunPlan {
  windows: PlannedWindow[]
  /** Where a hedged lane whose delay was not derived before its window reads one (a sweep's settings, each its own percentile): the warm-up; null: nothing measured. */
  delayFrom: PhaseName | null
}

type PlanInput = Pick<ResolvedRun, 'warmup' | 'warmupMinMs' | 'requests' | 'durationMs' | 'mode' | 'schedule'> &
  Partial<Pick<ResolvedRun, 'targets' | 'skipFirst'>>

/**
 * The windows of a run (or of a sweep, with `settings` hedged lanes):
 * - a warm-up when --warmup > 0: its first half warms connections and the
 *   JIT, the delay is measured on its second half; with -z it is bounded by
 *   time too (whichever of --warmup and -z comes first: a slow target would
 *   otherwise hold a -z run in its warm-up for minutes), and a fast target's
 *   warm-up lasts at least warmupMinMs (resolve-options.ts);
 * - a sweep: one window of the plain lane and a lane per setting, -n each;
 * - interleaved: one window of plain and hedged, -n each, a coin per request;
 * - sequential: the plain phase, then the hedged one.
 * The delay is read from the warm-up when there is one, else from the plain phase.
 */
export function planRun(cfg: PlanInput, settings: number | null = null): RunPlan {
  const windows: PlannedWindow[] = []
  const hedges = cfg.mode !== 'plain'
  // --skip-first: each lane's uncounted requests come on top of its -n.
  const perLane = cfg.requests === null ? null : cfg.requests + (cfg.skipFirst ?? 0)
  const times = (lanes: number): WindowSize => ({ requests: perLane === null ? null : perLane * lanes, durationMs: cfg.durationMs, minDurationMs: 0 })
  const measured = times(1)
  const plain: PlannedLane = { name: 'plain', hedged: false }
  const hedged: PlannedLane = { name: 'hedged', hedged: true }
  if (cfg.warmup > 0) {
    windows.push({
      lanes: [{ name: 'warmup', hedged: false, steadyAfter: Math.floor(cfg.warmup / 2) }],
      size: { requests: cfg.warmup, durationMs: cfg.durationMs, minDurationMs: cfg.warmupMinMs },
      choice: 'one',
      // A sweep derives a delay per setting, each from the warm-up, when its window starts.
      derivesDelay: hedges && settings === null,
      measured: false,
    })
  }
  if (settings !== null) {
    const lanes = [plain, ...Array.from({ length: settings }, (_, index): PlannedLane => ({ ...hedged, setting: index }))]
    windows.push({ lanes, size: times(lanes.length), choice: 'blocks', derivesDelay: false, measured: true })
  } else if (cfg.schedule === 'interleaved') {
    windows.push({ lanes: [plain, hedged], size: times(2), choice: 'coin', derivesDelay: false, measured: true })
  } else {
    if (cfg.mode !== 'hedged') windows.push({ lanes: [plain], size: measured, choice: 'one', derivesDelay: hedges && cfg.warmup === 0, measured: true })
    if (hedges) windows.push({ lanes: [hedged], size: measured, choice: 'one', derivesDelay: false, measured: true })
  }
  const weights = cfg.targets?.map((t) => t.weight)
  return { windows: weights ? windows.map((w) => perTarget(w, weights)) : windows, delayFrom: cfg.warmup > 0 ? 'warmup' : null }
}

/**
 * A window of a mix: each lane once per target. The warm-up gives every
 * target the same share (each needs its own delay measured, however rare),
 * its steady half counted per target; a measured window draws by weight.
 */
function perTarget(w: PlannedWindow, weights: number[]): PlannedWindow {
  const warmup = w.lanes[0]!.name === 'warmup'
  const lanes = w.lanes.flatMap((lane) =>
    weights.map((_, target): PlannedLane => {
      const share = lane.steadyAfter === undefined ? {} : { steadyAfter: Math.floor(Math.floor((w.size.requests ?? 0) / weights.length) / 2) }
      return { ...lane, ...share, target }
    }),
  )
  return { ...w, lanes, targets: { weights, draw: warmup ? 'blocks' : 'weighted' } }
}

/** The hedge delay as derived: its value, how it was found (in words), and the p50 beside it. */
export interface DerivedDelay {
  ms: number
  text: string
  p50: number
  /** Measured on the last `requests` of the `of` warm-up requests. */
  warmupBasis?: { requests: number; of: number }
}

/** A value and the warnings its derivation gives (run-warnings.ts collects them). */
export interface Warned<T> {
  value: T
  warnings: string[]
}

/**
 * The hedge delay from a measured phase (`from`, its measurements
 * `measured`), or fixed; `from` null = nothing measured (a 1 s fallback
 * unless the delay is fixed). Warns when the histogram holds too few
 * requests to place the percentile. `shares`: how many targets the warm-up
 * is split among equally (a mix's; 1 otherwise), which the --warmup the
 * warning advises is multiplied by.
 */
export function deriveDelay(
  hedge: ResolvedHedge,
  from: PhaseName | null,
  measured: MeasuredPhase | undefined,
  fanout: number,
  shares = 1,
): Warned<DerivedDelay> {
  const histogram = measured?.delayBasis()
  const p50 = histogram ? percentileMs(histogram, 50) : 0
  if (typeof hedge.delay === 'object' && 'fixedMs' in hedge.delay) {
    return { value: { ms: hedge.delay.fixedMs, text: `fixed ${formatMs(hedge.delay.fixedMs)}`, p50 }, warnings: [] }
  }
  const percentile = delayPercentile(hedge)
  if (!histogram || histogram.totalCount === 0) {
    const none =
      measured && measured.figures.requests > 0
        ? `none of the ${measured.figures.requests} ${from === 'warmup' ? 'warm-up' : 'plain-phase'} requests was answered successfully`
        : 'no latency was measured'
    return {
      value: { ms: 1000, text: 'fallback 1 s (nothing measured)', p50 },
      warnings: [`${none} to derive the hedge delay from; hedging with a 1 s delay`],
    }
  }
  const warnings: string[] = []
  const ms = percentileMs(histogram, percentile)
  const n = histogram.totalCount
  const needed = requestsNeeded(percentile)
  if (n < needed) {
    const half =
      shares > 1
        ? `each of the ${shares} targets warms up on 1/${shares} of it, its delay measured on the second half`
        : 'the delay is measured on the second half'
    const more = from === 'warmup' ? `; use --warmup ${shares * 2 * needed} or more (${half})` : ''
    warnings.push(`the hedge delay is the p${percentile} of only ${n} requests, too few to place it (a p${percentile} needs at least ${needed})${more}`)
  }
  const phase = from === 'warmup' ? 'warm-up' : 'plain-phase'
  const calls = measured?.calls?.requests ?? 0
  const requests = measured?.figures.requests ?? 0
  const where =
    fanout > 1
      ? from === 'warmup' && n < calls
        ? `the last ${n} of ${calls} warm-up calls`
        : `${n} ${phase} calls`
      : from === 'warmup'
        ? `the last ${n} of ${requests} warm-up requests`
        : `${n} plain-phase requests`
  const warmupBasis = from === 'warmup' && fanout === 1 ? { requests: n, of: requests } : undefined
  return { value: { ms, text: `p${percentile} of ${where} = ${formatMs(ms)}`, p50, ...(warmupBasis ? { warmupBasis } : {}) }, warnings }
}

/** How a hedged lane hedges, as a worker thread rebuilds it too (its delay source is made from `setup`: lane.ts). */
export interface LaneHedging {
  setup: HedgingSetup
  minHedgeWindowMs: number
}

/**
 * A hedged lane's set-up from its derived delay: the delay it starts at
 * (0 with --parallel), how it was found in words, and the window below
 * which no hedge is sent (the p50 unless given). Warns when the delay is
 * not below -t: no hedge would then fire on its timer.
 */
export function laneHedging(derived: DerivedDelay, hedge: ResolvedHedge, timeoutMs: number): Warned<LaneHedging> {
  const percentile = delayPercentile(hedge)
  const delayMs = hedge.parallel ? 0 : derived.ms
  const warnings: string[] = []
  // Each attempt stops at -t: a hedge due later never fires on its timer; the timeout itself sends the next attempt.
  if (!hedge.adaptive && delayMs >= timeoutMs) {
    warnings.push(
      `the hedge delay (${formatMs(delayMs)}) is not below -t (${formatMs(timeoutMs)}): no hedge fires on its timer: an attempt times out first, and the next one is then sent at once (a failed attempt is hedged as a non-fatal answer is), so a request can take up to ${hedge.maxAttempts} × -t (lower --hedge-delay or raise -t)`,
    )
  }
  const text = hedge.tied
    ? 'tied: both copies sent at once; the first server to start one drops the other'
    : hedge.parallel
      ? 'parallel: every attempt sent at once (delay 0)'
      : hedge.adaptive
        ? `rolling p${percentile} of recent original attempts, clamped to [${formatMs(hedge.delayMinMs)}, ${formatMs(hedge.delayMaxMs)}], starting at ${derived.text}`
        : derived.text
  return {
    value: {
      minHedgeWindowMs: hedge.minHedgeWindowMs ?? derived.p50,
      setup: {
        delayMs,
        delaySource: text,
        ...(derived.warmupBasis && !hedge.parallel && !hedge.tied ? { warmupBasis: derived.warmupBasis } : {}),
        adaptive: hedge.adaptive,
        maxAttempts: hedge.maxAttempts,
        budgetPct: hedge.budgetPct,
        parallel: hedge.parallel,
        tied: hedge.tied ?? false,
        cancelMode: hedge.cancel,
      },
    },
    warnings,
  }
}

/**
 * How long the next window spreads its slots' first requests over
 * (load-generator.ts): one median latency of the window before
 * (`previousP50`), so that the slots are as out of step as a closed loop's
 * are after its first rounds; at most a tenth of a timed window. 0 for the
 * first window (the warm-up absorbs an in-step start).
 */
export function spreadMs(previousP50: number, durationMs: number | null): number {
  return durationMs === null ? previousP50 : Math.min(previousP50, durationMs / 10)
}
