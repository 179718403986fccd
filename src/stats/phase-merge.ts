/**
 * --workers N: each worker thread measures its share of a window in its own
 * PhaseStats; this turns those into one PhaseResult, exactly. Histograms are
 * added (HDR add: the merged percentiles are the ones a single histogram of
 * every value would give), counters are summed, and the per-second timeline
 * is merged by second from per-second histograms, so its p50/p99 are exact
 * too. The only values an HDR histogram cannot give back exactly, the min
 * and max, travel as the workers measured them.
 */
import { decodeHistogram, encodeHistogram, mergeHistograms, percentileMs, summarize, type Histogram } from './histogram.js'
import { histogramSummary, PhaseStats, type PhaseStatsOptions, type RequestSample } from './phase-stats.js'
import { mergeDetails } from './timing-breakdown.js'
import { MAX_POINTS, SecondRecorder, timelinePoint, type SecondSums } from './timeline.js'
import type { Figures, GeneratorHealth, HedgingStats, LatencySummary, PhaseResult, ReplicaFigures, TimelinePoint } from '../results/run-result.js'
import { extraLoadPctOf } from '../results/extra-load.js'
import { round3 } from '../core/round.js'

/** What the hedge delay is derived from: a PhaseStats, or the merge of several. */
export interface MeasuredPhase {
  delayBasis(): Histogram
  readonly figures: { readonly requests: number }
  /** With fan-out: the calls (each is hedged on its own). */
  readonly calls: { readonly requests: number } | null
}

/**
 * One second of a worker's phase: the point the charts show, plus what an
 * exact merge needs (the sums behind its rounded figures and the second's
 * latency histogram, encoded: a few hundred bytes).
 */
export interface SecondSnapshot extends TimelinePoint, SecondSums {
  histogram: string
}

/** A worker's phase, serializable (structured clone), ready to merge. */
export interface PhaseSnapshot {
  /** The worker's own finish(), without its timeline: that travels as `seconds`. */
  result: PhaseResult
  /** Requests (calls, with fan-out) that fired at least one hedge. */
  triggered: number
  delayUsed: string
  timerLateness: string
  delayBasis: string
  seconds: SecondSnapshot[]
  /** The worker's window, in epoch milliseconds (performance.timeOrigin + now), comparable across threads. */
  startedAtEpoch: number
  endedAtEpoch: number
}

/** A second as the charts show it, plus what an exact merge of seconds from several workers needs. */
function secondSnapshot(sums: SecondSums, histogram: Histogram): SecondSnapshot {
  return { ...timelinePoint(sums, histogram), delaySum: sums.delaySum, delayCount: sums.delayCount, histogram: encodeHistogram(histogram) }
}

/** Per-second buckets whose closed seconds keep their histogram, so seconds from several workers merge exactly. */
export function secondBuckets(origin: number): SecondRecorder<SecondSnapshot> {
  return new SecondRecorder(origin, secondSnapshot)
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
 * A PhaseStats that also keeps what an exact merge needs: its timeline
 * bucketed into per-second histograms (secondBuckets), and the shared
 * cross-thread counters (Atomics.add, so the main thread reads an exact
 * total while the run goes).
 */
export class SnapshotPhaseStats extends PhaseStats {
  readonly #seconds: SecondRecorder<SecondSnapshot>
  readonly #counters: Int32Array | null

  constructor(opts: PhaseStatsOptions, snap: SnapshotOptions) {
    const seconds = secondBuckets(snap.secondsOrigin)
    super({ ...opts, timeline: seconds })
    this.#seconds = seconds
    this.#counters = snap.counters ?? null
  }

  override attemptSent(index: number, origin: string): void {
    super.attemptSent(index, origin)
    if (this.#counters) Atomics.add(this.#counters, COUNTER_ATTEMPTS, 1)
  }

  override recordRequest(s: RequestSample): void {
    super.recordRequest(s)
    if (this.#counters) Atomics.add(this.#counters, COUNTER_COMPLETED, 1)
  }

  snapshot(durationMs: number, generator: GeneratorHealth, startedAtEpoch: number, endedAtEpoch: number): PhaseSnapshot {
    // finish() closes the last second; the seconds travel once, as `seconds`.
    const result = { ...this.finish(durationMs, generator), timeline: [] }
    const parts = this.mergeParts()
    return {
      result,
      triggered: parts.triggered,
      delayUsed: encodeHistogram(parts.delayUsed),
      timerLateness: encodeHistogram(parts.timerLateness),
      delayBasis: encodeHistogram(this.delayBasis()),
      seconds: this.#seconds.points,
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
}

/** Merges the same phase measured by several workers into one PhaseResult. */
export function mergePhases(snaps: PhaseSnapshot[], ctx: MergeContext): MergedPhase {
  if (snaps.length === 0) throw new Error('mergePhases: nothing to merge')
  const results = snaps.map((s) => s.result)
  const first = results[0]!
  const figures = mergeFigures(results)
  const startedAt = Math.min(...snaps.map((s) => s.startedAtEpoch))
  const endedAt = Math.max(...snaps.map((s) => s.endedAtEpoch))
  const durationMs = Math.max(0, endedAt - startedAt)
  const result: PhaseResult = {
    name: first.name,
    ...figures,
    startOffsetMs: round3(Math.max(0, Math.min(...results.map((r) => r.startOffsetMs)))),
    durationMs: round3(durationMs),
    rps: round3(durationMs > 0 ? (figures.requests * 1000) / durationMs : 0),
    connectionsOpened: sum(results.map((r) => r.connectionsOpened)),
    connectionsClosedByCancel: sum(results.map((r) => r.connectionsClosedByCancel ?? 0)),
    streamsResetByCancel: sum(results.map((r) => r.streamsResetByCancel ?? 0)),
    replicas: mergeReplicas(results.map((r) => r.replicas)),
    timeline: mergeSeconds(snaps.map((s) => s.seconds)),
    generator: ctx.generator,
  }
  if (first.ejections) result.ejections = results.flatMap((r) => r.ejections ?? []).sort((a, b) => a.atMs - b.atMs)
  if (first.calls) result.calls = { ...mergeFigures(results.map((r) => r.calls!)), fanout: first.calls.fanout }
  if (first.hedging) result.hedging = mergeHedging(snaps, result)
  if (first.serviceTime) result.serviceTime = mergeServiceTime(results.map((r) => r.serviceTime!))
  const details = results.filter((r) => r.details).map((r) => r.details!)
  if (details.length > 0) result.details = mergeDetails(details)
  const basis = mergeEncoded(snaps.map((s) => s.delayBasis))
  return { result, delayBasis: () => basis, figures: { requests: figures.requests }, calls: result.calls ? { requests: result.calls.requests } : null }
}

/** Open-loop service time: histograms added, exact min/max kept, late sends summed. */
export function mergeServiceTime(parts: Array<NonNullable<PhaseResult['serviceTime']>>): NonNullable<PhaseResult['serviceTime']> {
  const h = mergeEncoded(parts.map((p) => p.histogram))
  return {
    // A part that measured nothing has min 0: it must not become the exact min.
    latencyMs: summarizeExact(h, parts.filter((p) => p.latencyMs.max > 0).map((p) => p.latencyMs)),
    histogram: encodeHistogram(h),
    lateSends: sum(parts.map((p) => p.lateSends)),
  }
}

/** Sums of every counter, histograms added; latency summary from the merged histogram. */
export function mergeFigures(parts: Figures[]): Figures {
  const h = mergeEncoded(parts.map((p) => p.histogram))
  return {
    requests: sum(parts.map((p) => p.requests)),
    attempts: sum(parts.map((p) => p.attempts)),
    ok: sum(parts.map((p) => p.ok)),
    errors: sum(parts.map((p) => p.errors)),
    statusCodes: mergeCounts(parts.map((p) => p.statusCodes)),
    errorKinds: mergeCounts(parts.map((p) => p.errorKinds)),
    bytes: sum(parts.map((p) => p.bytes)),
    latencyMs: summarizeExact(h, parts.filter((p) => p.requests > 0).map((p) => p.latencyMs)),
    slow: { thresholdMs: parts[0]!.slow.thresholdMs, count: sum(parts.map((p) => p.slow.count)) },
    histogram: encodeHistogram(h),
    ...interruptedOf(parts),
  }
}

function interruptedOf(parts: Figures[]): Pick<Figures, 'interrupted' | 'interruptedSlow' | 'interruptedMaxMs'> {
  const n = sum(parts.map((p) => p.interrupted ?? 0))
  if (n === 0) return {}
  const counted = parts.filter((p) => (p.interrupted ?? 0) > 0)
  // Saved before the in-flight times were counted: none claimed.
  if (!counted.every((p) => p.interruptedSlow !== undefined)) return { interrupted: n }
  return { interrupted: n, interruptedSlow: sum(counted.map((p) => p.interruptedSlow!)), interruptedMaxMs: Math.max(...counted.map((p) => p.interruptedMaxMs ?? 0)) }
}

export function mergeReplicas(lists: ReplicaFigures[][]): ReplicaFigures[] {
  const byUrl = new Map<string, ReplicaFigures[]>()
  for (const list of lists) for (const r of list) byUrl.set(r.url, [...(byUrl.get(r.url) ?? []), r])
  return [...byUrl].map(([url, parts]) => ({
    url,
    ...mergeFigures(parts),
    wins: sum(parts.map((p) => p.wins)),
    cancelled: sum(parts.map((p) => p.cancelled)),
    ...(parts[0]!.ejections === undefined ? {} : { ejections: sum(parts.map((p) => p.ejections ?? 0)) }),
  }))
}

/**
 * What a hedging field is merged from: the parts, the merged phase's own
 * figures, and what the parts' summaries cannot add up by themselves (from
 * worker snapshots: exact histograms; from saved results: see result-merge.ts).
 */
export interface HedgingParts {
  parts: HedgingStats[]
  merged: PhaseResult
  /** Logical requests (calls, with fan-out) of the merged phase. */
  calls: number
  /** Requests (calls) that fired at least one hedge, over all parts. */
  triggered: number
  delayUsedMs: () => HedgingStats['delayUsedMs']
  timerLatenessMs: () => HedgingStats['timerLatenessMs']
}

/** 'same': the setup, equal in every worker (the first one's); 'sum': a counter; else derived from the parts. */
type FieldMerge<V> = 'same' | ([V] extends [number] ? 'sum' : never) | ((p: HedgingParts) => V)

/**
 * How each HedgingStats field merges across workers, in the order
 * PhaseStats reports them. The type asks for every field, so a new one
 * cannot be silently dropped from the merged result.
 */
const HEDGING_MERGE: { [K in keyof HedgingStats]-?: FieldMerge<HedgingStats[K]> } = {
  delayMs: 'same',
  delaySource: 'same',
  warmupBasis: 'same',
  tiedDropped: ({ parts }) => sumOfAll(parts.map((p) => p.tiedDropped)),
  adaptive: 'same',
  maxAttempts: 'same',
  budgetPct: 'same',
  parallel: 'same',
  tied: 'same',
  cancelMode: 'same',
  delayUsedMs: ({ delayUsedMs }) => delayUsedMs(),
  hedgesSent: 'sum',
  unsent: 'sum',
  // Absent when a part was saved before originals were counted apart: 0 would claim every unsent attempt a hedge.
  unsentOriginals: ({ parts }) => sumOfAll(parts.map((p) => p.unsentOriginals)),
  extraLoadPct: ({ parts, calls }) => extraLoadPctOf(sum(parts.map((p) => p.hedgesSent)), calls),
  triggerRate: ({ triggered, calls }) => (calls > 0 ? round3((triggered / calls) * 100) : 0),
  hedgeWins: 'sum',
  originalWins: 'sum',
  cancelled: 'sum',
  lateDiscarded: 'sum',
  budgetDenied: 'sum',
  slowBudgetDenied: ({ parts }) => sum(parts.map((p) => p.slowBudgetDenied ?? 0)),
  deadlineSuppressed: 'sum',
  nonFatalTriggered: 'sum',
  suppressed: ({ parts }) => ({
    overload: sum(parts.map((p) => p.suppressed?.overload ?? 0)),
    errorRate: sum(parts.map((p) => p.suppressed?.errorRate ?? 0)),
    targetBusy: sum(parts.map((p) => p.suppressed?.targetBusy ?? 0)),
  }),
  loserRuntimeMs: ({ parts }) => histogramSummary(mergeEncoded(parts.flatMap((p) => (p.loserRuntimeMs ? [p.loserRuntimeMs.histogram] : [])))),
  attemptsPerRequest: ({ parts }) => mergeCounts(parts.map((p) => p.attemptsPerRequest ?? {})),
  timerLatenessMs: ({ timerLatenessMs }) => timerLatenessMs(),
  perAttempt: ({ parts }) => {
    const byAttempt = new Map<number, HedgingStats['perAttempt']>()
    for (const p of parts) for (const a of p.perAttempt) byAttempt.set(a.attempt, [...(byAttempt.get(a.attempt) ?? []), a])
    return [...byAttempt.keys()].sort((a, b) => a - b).map((attempt) => {
      const list = byAttempt.get(attempt)!
      const h = mergeEncoded(list.map((a) => a.histogram))
      return {
        attempt,
        count: sum(list.map((a) => a.count)),
        latencyMs: summarizeExact(h, list.filter((a) => a.count > 0).map((a) => a.latencyMs)),
        histogram: encodeHistogram(h),
      }
    })
  },
}

function mergeHedging(snaps: PhaseSnapshot[], merged: PhaseResult): HedgingStats {
  return mergeHedgingParts({
    parts: snaps.map((s) => s.result.hedging!),
    merged,
    calls: merged.calls ? merged.calls.requests : merged.requests,
    triggered: sum(snaps.map((s) => s.triggered)),
    delayUsedMs: () => {
      const h = mergeEncoded(snaps.map((s) => s.delayUsed))
      const mins = snaps.filter((s) => decodeCount(s.delayUsed) > 0).map((s) => s.result.hedging!.delayUsedMs.min)
      return { min: mins.length > 0 ? Math.min(...mins) : 0, p50: percentileMs(h, 50), max: percentileMs(h, 100) }
    },
    timerLatenessMs: () => {
      const h = mergeEncoded(snaps.map((s) => s.timerLateness))
      return { p50: percentileMs(h, 50), p99: percentileMs(h, 99), max: percentileMs(h, 100) }
    },
  })
}

/** Every HedgingStats field merged as HEDGING_MERGE says. */
export function mergeHedgingParts(input: HedgingParts): HedgingStats {
  const out: Partial<Record<keyof HedgingStats, unknown>> = {}
  for (const key of Object.keys(HEDGING_MERGE) as Array<keyof HedgingStats>) {
    const value = mergeField(key, input)
    if (value !== undefined) out[key] = value // an optional field the workers did not report stays absent
  }
  return out as HedgingStats
}

/** The sum of a counter every part reported; absent when any part did not (a result saved before it was counted, or a run without it). */
function sumOfAll(values: Array<number | undefined>): number | undefined {
  return values.every((v) => v !== undefined) ? sum(values as number[]) : undefined
}

function mergeField<K extends keyof HedgingStats>(key: K, p: HedgingParts): HedgingStats[K] {
  const how = HEDGING_MERGE[key] as FieldMerge<HedgingStats[K]>
  if (how === 'same') return p.parts[0]![key]
  if (how === 'sum') return sum(p.parts.map((part) => part[key] as number)) as HedgingStats[K]
  return how(p)
}

/** Seconds of every worker merged by `t`: counts summed, the second's histograms added. */
export function mergeSeconds(lists: SecondSnapshot[][]): TimelinePoint[] {
  const byT = new Map<number, SecondSnapshot[]>()
  for (const list of lists) for (const s of list) byT.set(s.t, [...(byT.get(s.t) ?? []), s])
  return [...byT.keys()]
    .sort((a, b) => a - b)
    .slice(0, MAX_POINTS)
    .map((t) => {
      const parts = byT.get(t)!
      const sums: SecondSums = { t, requests: 0, errors: 0, hedges: 0, delaySum: 0, delayCount: 0 }
      for (const p of parts) {
        sums.requests += p.requests
        sums.errors += p.errors
        sums.hedges += p.hedges
        sums.delaySum += p.delaySum
        sums.delayCount += p.delayCount
      }
      return timelinePoint(sums, mergeEncoded(parts.map((p) => p.histogram)))
    })
}

/**
 * summarize() of the merged histogram, with the exact min and max the
 * workers measured: an HDR histogram only keeps the bucket of each value,
 * so after encode/decode its min/max are bucket edges.
 */
export function summarizeExact(h: Histogram, parts: LatencySummary[]): LatencySummary {
  if (h.totalCount > 0 && parts.length > 0) {
    // The JS histogram (useWebAssembly: false) keeps them as plain fields; summarize() reads them.
    const exact = h as unknown as { maxValue: number; minNonZeroValue: number }
    exact.maxValue = Math.round(Math.max(...parts.map((p) => p.max)) * 1000)
    exact.minNonZeroValue = Math.round(Math.min(...parts.map((p) => p.min)) * 1000)
  }
  return summarize(h)
}

export function mergeEncoded(encoded: string[]): Histogram {
  return mergeHistograms(encoded.map(decodeHistogram))
}

function decodeCount(encoded: string): number {
  return decodeHistogram(encoded).totalCount
}

export function mergeCounts(records: Array<Record<string, number>>): Record<string, number> {
  const total = new Map<string, number>()
  for (const r of records) for (const [k, v] of Object.entries(r)) total.set(k, (total.get(k) ?? 0) + v)
  const out: Record<string, number> = {}
  for (const key of [...total.keys()].sort()) out[key] = total.get(key)!
  return out
}

export function sum(xs: number[]): number {
  let total = 0
  for (const x of xs) total += x
  return total
}
