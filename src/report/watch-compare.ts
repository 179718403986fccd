/**
 * A watch's segments judged: each segment against the one before it, per
 * lane, by compare's own noise verdict (compare.ts compareRuns: each segment
 * read as a run of its own), and `--fail-if` on the last segment against
 * the first. A segment's phase is its lane's whole-window PhaseResult with
 * the figures compare reads replaced by the segment's (its counts, its
 * folded histogram, its seconds of the timeline).
 */
import { extraLoadPctOf } from '../results/extra-load.js'
import type { PhaseResult, RunResult } from '../results/run-result.js'
import { WATCH_LANES, type FinishedWatch, type WatchLane, type WatchResult, type WatchSegment } from '../results/watch-result.js'
import { round3 } from '../core/round.js'
import { decodeHistogram, summarize } from '../stats/histogram.js'
import { phaseRate } from '../stats/phase-algebra.js'
import { compareRuns, type Comparison } from './compare.js'
import { checkFailIf, type FailCheck, type FailCondition, inconclusiveWhy } from './fail-if.js'

/** One segment against the one before it, in one lane. */
export interface SegmentComparison {
  before: string
  after: string
  lane: WatchLane
  comparison: Comparison
}

/** What the gates say: the last segment against the first (none with a single segment). */
export interface WatchGates {
  /** The segments compared; null when there was only one. */
  segments: { first: string; last: string } | null
  checks: FailCheck[]
  /** Why the gates cannot be answered either way (fail-if.ts inconclusiveWhy: a lane's generator saturated). */
  inconclusive: string[]
}

/** Every segment against the one before it, plain lane then hedged lane. */
export function compareSegments(watch: FinishedWatch): SegmentComparison[] {
  const segments = judged(watch)
  return segments.slice(1).flatMap((after, i) => {
    const before = segments[i]!
    return WATCH_LANES.map((lane) => ({ before: before.name, after: after.name, lane, comparison: pair(watch, before, after, lane) }))
  })
}

/** --fail-if on the last segment against the first; a condition's phase names the lane (hedged when none is named). */
export function watchGates(conditions: FailCondition[], watch: FinishedWatch): WatchGates {
  const segments = judged(watch)
  if (segments.length < 2 || conditions.length === 0) return { segments: null, checks: [], inconclusive: [] }
  const first = segments[0]!
  const last = segments[segments.length - 1]!
  const byLane = new Map(WATCH_LANES.map((lane) => [lane, pair(watch, first, last, lane)]))
  const gated = [...new Set(conditions.map((c) => byLane.get(c.phase ?? 'hedged')!))]
  return {
    segments: { first: first.name, last: last.name },
    checks: conditions.flatMap((c) => checkFailIf([c], byLane.get(c.phase ?? 'hedged')!)),
    inconclusive: gated.flatMap(inconclusiveWhy),
  }
}

/** Segments with traffic in both lanes: an empty one (a mark in the last second) has nothing to compare. */
function judged(watch: WatchResult): WatchSegment[] {
  return watch.segments.filter((s) => s.lanes.plain.requests > 0 && s.lanes.hedged.requests > 0)
}

function pair(watch: FinishedWatch, before: WatchSegment, after: WatchSegment, lane: WatchLane): Comparison {
  return compareRuns([segmentRun(watch, before), segmentRun(watch, after)], { phase: lane })
}

/** A segment read as a run: the whole window's, its phases the segment's. */
function segmentRun(watch: FinishedWatch, segment: WatchSegment): { name: string; result: RunResult } {
  const run = watch.run
  const last = segment === watch.segments[watch.segments.length - 1]
  const phases: RunResult['phases'] = {}
  for (const lane of WATCH_LANES) {
    const whole = run.phases[lane]
    if (whole) phases[lane] = segmentPhase(whole, segment, lane, watch)
  }
  return { name: segment.name, result: { ...run, label: segment.name, partial: last && run.partial, stoppedIn: last ? run.stoppedIn : null, phases } }
}

/** The segment's duration is its sending time: the seconds after sending stopped only drain (the rate would read low). */
function segmentPhase(whole: PhaseResult, segment: WatchSegment, lane: WatchLane, watch: WatchResult): PhaseResult {
  const s = segment.lanes[lane]
  const slowMs = watch.slowMs
  const durationMs = Math.max(1, Math.min(segment.toS, watch.sentUntilS ?? segment.toS) - segment.fromS) * 1000
  return {
    ...whole,
    requests: s.requests,
    attempts: s.attempts,
    ok: s.requests - s.errors,
    errors: s.errors,
    statusCodes: {},
    errorKinds: { ...s.errorKinds },
    errorMessages: undefined,
    latencyMs: summarize(decodeHistogram(s.histogram)),
    slow: { thresholdMs: slowMs, count: s.slow },
    histogram: s.histogram,
    startOffsetMs: whole.startOffsetMs + segment.fromS * 1000,
    durationMs,
    rps: phaseRate(s.requests, durationMs),
    // Its whole seconds: a second a mark split is both segments' and neither's level.
    timeline: whole.timeline.filter((p) => p.t >= segment.fromS && p.t + 1 <= segment.toS),
    timelineFine: undefined,
    hedging: whole.hedging && {
      ...whole.hedging,
      delayMs: s.delaySeconds > 0 ? round3(s.delaySumMs / s.delaySeconds) : whole.hedging.delayMs,
      hedgesSent: s.hedges,
      extraLoadPct: extraLoadPctOf(s.hedges, s.requests),
      hedgeWins: s.hedgeWins,
      cancelled: s.cancelled,
      budgetDenied: s.budgetDenied,
    },
  }
}
