/**
 * --workers N: each worker thread measures its share of a window in its own
 * PhaseStats and sends it as a PhaseSnapshot; the main thread merges the
 * snapshots into one PhaseResult by the result algebra (phase-algebra.ts).
 * A snapshot carries what an exact merge needs beyond the worker's own
 * result: its timelines as per-bucket histograms, so the merged p50/p99 of
 * each second (and of each 100 ms of a short phase) are exact too, and the
 * histograms behind the hedging summaries.
 */
import { encodeHistogram, type Histogram } from './histogram.js'
import { PhaseStats, type PhaseStatsOptions, type RequestSample } from './phase-stats.js'
import { SecondRecorder, timelinePoint, FINE_BUCKET_MS, type SecondSums } from './timeline.js'
import { mergeEncoded, mergePhaseParts, type ExactPoint } from './phase-algebra.js'
import type { GeneratorHealth, PhaseResult } from '../results/run-result.js'

/** What the hedge delay is derived from: a PhaseStats, or the merge of several. */
export interface MeasuredPhase {
  delayBasis(): Histogram
  readonly figures: { readonly requests: number }
  /** With fan-out: the calls (each is hedged on its own). */
  readonly calls: { readonly requests: number } | null
}

/** A worker's phase, serializable (structured clone), ready to merge. */
export interface PhaseSnapshot {
  /** The worker's own finish(); its timelines' points carry their histograms (ExactPoint). */
  result: PhaseResult
  /** Requests (calls, with fan-out) that fired at least one hedge. */
  triggered: number
  delayUsed: string
  timerLateness: string
  delayBasis: string
  /** The worker's window, in epoch milliseconds (performance.timeOrigin + now), comparable across threads. */
  startedAtEpoch: number
  endedAtEpoch: number
}

/** A bucket as the charts show it, plus what an exact merge of buckets from several workers needs. */
function exactPoint(sums: SecondSums, histogram: Histogram): ExactPoint {
  return { ...timelinePoint(sums, histogram), delaySum: sums.delaySum, delayCount: sums.delayCount, histogram: encodeHistogram(histogram) }
}

/** Buckets (a second, or FINE_BUCKET_MS) whose closed points keep their histogram, so points from several workers merge exactly. */
export function exactBuckets(origin: number, bucketMs = 1000): SecondRecorder<ExactPoint> {
  return new SecondRecorder(origin, exactPoint, bucketMs)
}

export interface SnapshotOptions {
  /** Shared counters (Int32Array over a SharedArrayBuffer): [attempts on the wire, logical requests done]. */
  counters?: Int32Array
  /** performance.now() all workers agree is second 0 of the window. */
  secondsOrigin: number
}

export const COUNTER_ATTEMPTS = 0
export const COUNTER_COMPLETED = 1

/**
 * A PhaseStats that also keeps what an exact merge needs: its timelines
 * bucketed into histograms (exactBuckets), and the shared cross-thread
 * counters (Atomics.add, so the main thread reads an exact total while the
 * run goes).
 */
export class SnapshotPhaseStats extends PhaseStats {
  readonly #counters: Int32Array | null

  constructor(opts: PhaseStatsOptions, snap: SnapshotOptions) {
    super({ ...opts, timelines: { seconds: exactBuckets(snap.secondsOrigin), fine: exactBuckets(snap.secondsOrigin, FINE_BUCKET_MS) } })
    this.#counters = snap.counters ?? null
  }

  override attemptSent(index: number, origin: string): void {
    super.attemptSent(index, origin)
    if (this.#counters) Atomics.add(this.#counters, COUNTER_ATTEMPTS, 1)
  }

  override attemptRefused(index: number, origin: string, cancelled: boolean): void {
    super.attemptRefused(index, origin, cancelled)
    if (this.#counters) Atomics.sub(this.#counters, COUNTER_ATTEMPTS, 1)
  }

  override recordRequest(s: RequestSample): void {
    super.recordRequest(s)
    if (this.#counters) Atomics.add(this.#counters, COUNTER_COMPLETED, 1)
  }

  snapshot(durationMs: number, generator: GeneratorHealth, startedAtEpoch: number, endedAtEpoch: number): PhaseSnapshot {
    const parts = this.mergeParts()
    return {
      result: this.finish(durationMs, generator),
      triggered: parts.triggered,
      delayUsed: encodeHistogram(parts.delayUsed),
      timerLateness: encodeHistogram(parts.timerLateness),
      delayBasis: encodeHistogram(this.delayBasis()),
      startedAtEpoch,
      endedAtEpoch,
    }
  }
}

export interface MergedPhase extends MeasuredPhase {
  result: PhaseResult
}

export interface MergeContext {
  /** performance.timeOrigin + the run's t0 (epoch ms). */
  runStartedAtEpoch: number
  generator: GeneratorHealth
  /** What the parts are: one window's share on each worker thread (the default), or each target's lanes of a mix (--targets), on one thread. */
  of?: 'threads' | 'targets'
}

/** Merges the same phase measured by several workers (or a mix's targets) into one PhaseResult. */
export function mergePhases(snaps: PhaseSnapshot[], ctx: MergeContext): MergedPhase {
  if (snaps.length === 0) throw new Error('mergePhases: nothing to merge')
  const result = mergePhaseParts(
    snaps.map((s) => s.result),
    {
      of: ctx.of ?? 'threads',
      spans: snaps.map((s) => ({ startMs: s.startedAtEpoch, endMs: s.endedAtEpoch })),
      generator: ctx.generator,
      exact: snaps.map((s) => ({ triggered: s.triggered, delayUsed: s.delayUsed, timerLateness: s.timerLateness })),
    },
  )
  const basis = mergeEncoded(snaps.map((s) => s.delayBasis))
  return { result, delayBasis: () => basis, figures: { requests: result.requests }, calls: result.calls ? { requests: result.calls.requests } : null }
}
