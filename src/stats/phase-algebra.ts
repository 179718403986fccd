/**
 * The result algebra: every field of a phase, how a phase is finished and
 * how the same phase measured by several generators becomes one (vegeta's
 * Metrics.Add/Close, oha's ResultData::merge). One table per shape, keyed by
 * every field of the result types, so tsc refuses a field nobody merges; the
 * worker threads of --workers (phase-snapshot.ts), the shards of `hedgebench
 * merge` (result-merge.ts) and a phase's own finish (phase-stats.ts, through
 * `phaseResult`) all go through it.
 *
 * Exact where the parts allow: counters summed, HDR histograms added (the
 * merged percentiles are the ones a single histogram of every value would
 * give), the exact min and max kept, lists united. What is each generator's
 * own (its hedge delay, its timer lateness) is bounded (range, worst),
 * never averaged.
 */
import { decodeHistogram, encodeHistogram, mergeHistograms, percentileMs, summarize, type Histogram } from './histogram.js'
import { mergeDetails } from './timing-breakdown.js'
import { MAX_POINTS, timelinePoint, type SecondSums } from './timeline.js'
import { worstLoop } from './generator-monitor.js'
import { mergeGcPauses } from './gc-monitor.js'
import type {
  EarlyCancels,
  Figures,
  GeneratorHealth,
  HedgingStats,
  LatencySummary,
  PhaseResult,
  ReplicaFigures,
  ScheduleSecond,
  ServerCrossCheck,
  SuppressedHedges,
  TimelinePoint,
} from '../results/run-result.js'
import { extraLoadPctOf } from '../results/extra-load.js'
import { formatMs } from '../core/duration.js'
import { round3 } from '../core/round.js'

/** Every field named, undefined allowed: a builder that cannot leave one out (an undefined optional field stays absent). */
export type EveryField<T> = { [K in keyof Required<T>]: T[K] | undefined }

/**
 * How a field combines across parts, as a reader (and the acceptance test)
 * checks it: 'same' equal in every part; 'sum' a count added up; 'histogram'
 * figures of the added histograms; 'union' lists or maps united; 'min' /
 * 'max' the smallest / largest; 'span' the time the parts cover together;
 * 'bounded' each generator's own, stated as a range or the worst; 'derived'
 * computed from other merged fields; 'table' an object merged field by field
 * by its own table.
 */
export const MERGE_KINDS = ['same', 'sum', 'histogram', 'union', 'min', 'max', 'span', 'bounded', 'derived', 'table'] as const
export type MergeKind = (typeof MERGE_KINDS)[number]

/** How one field merges: `values` are the parts' values of the field, `parts` the parts themselves. */
export interface FieldRule<P, C, V> {
  kind: MergeKind
  merge(values: V[], parts: P[], ctx: C): V | undefined
}

/** A rule for every field of T (-?: optional ones too), so a new field fails to compile until it is given one. */
export type MergeTable<T, C = unknown> = { [K in keyof T]-?: FieldRule<T, C, T[K]> }

/** Merges parts field by field, in the table's order (the saved JSON's order); an undefined result leaves the field out. */
export function mergeBy<T, C>(table: MergeTable<T, C>, parts: T[], ctx: C): T {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(table) as Array<keyof T & string>) {
    const rule = table[key]
    const value = rule.merge(
      parts.map((p) => p[key]),
      parts,
      ctx,
    )
    if (value !== undefined) out[key] = value
  }
  return out as T
}

/** A whole object from every field, in the table's order, optional fields left out when undefined. */
export function buildBy<T>(table: MergeTable<T, never>, fields: EveryField<T>): T {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(table) as Array<keyof T & string>) if (fields[key] !== undefined) out[key] = fields[key]
  return out as T
}

// ---- the rules every table uses ---------------------------------------------

const SAME: FieldRule<unknown, unknown, never> = { kind: 'same', merge: (values) => values[0] }
const SUM: FieldRule<unknown, unknown, number> = { kind: 'sum', merge: (values) => sum(values) }
/** A counter every part reported, summed; absent when a part did not (saved before it was counted: 0 would be a claim). */
const SUM_OF_ALL: FieldRule<unknown, unknown, number | undefined> = { kind: 'sum', merge: (values) => sumOfAll(values) }
const COUNTS: FieldRule<unknown, unknown, Record<string, number>> = { kind: 'union', merge: (values) => mergeCounts(values) }
const MAX: FieldRule<unknown, unknown, number> = { kind: 'max', merge: (values) => Math.max(...values) }
const HISTOGRAM: FieldRule<unknown, unknown, string> = { kind: 'histogram', merge: (values) => encodeHistogram(mergeEncoded(values)) }
/** Present only when every part has it, merged by `merge`. */
function ifAll<P, C, V>(kind: MergeKind, merge: (values: V[], parts: P[], ctx: C) => V): FieldRule<P, C, V | undefined> {
  return { kind, merge: (values, parts, ctx) => (values.every((v) => v !== undefined) ? merge(values as V[], parts, ctx) : undefined) }
}

// ---- Figures: a phase, a replica, the fan-out calls ----------------------------------

/** Interrupted requests whose in-flight times every part counted (results saved before they were counted claim none). */
function interruptedParts(parts: Figures[]): Figures[] | undefined {
  const counted = parts.filter((p) => (p.interrupted ?? 0) > 0)
  return counted.length > 0 && counted.every((p) => p.interruptedSlow !== undefined) ? counted : undefined
}

export const FIGURES_FIELDS: MergeTable<Figures> = {
  requests: SUM,
  attempts: SUM,
  ok: SUM,
  errors: SUM,
  statusCodes: COUNTS,
  errorKinds: COUNTS,
  errorMessages: { kind: 'union', merge: (values) => (values.some((v) => v !== undefined) ? mergeCounts(values.map((v) => v ?? {})) : undefined) },
  bytes: SUM,
  // A part that measured nothing has min 0: it must not become the exact min.
  latencyMs: {
    kind: 'histogram',
    merge: (_, parts) =>
      summarizeExact(
        mergeEncoded(parts.map((p) => p.histogram)),
        parts.filter((p) => p.requests > 0).map((p) => p.latencyMs),
      ),
  },
  slow: { kind: 'sum', merge: (values) => ({ thresholdMs: values[0]!.thresholdMs, count: sum(values.map((s) => s.count)) }) },
  histogram: HISTOGRAM,
  interrupted: { kind: 'sum', merge: (values) => sum(values.map((v) => v ?? 0)) || undefined },
  interruptedSlow: { kind: 'sum', merge: (_, parts) => mapDefined(interruptedParts(parts), (c) => sum(c.map((p) => p.interruptedSlow!))) },
  interruptedMaxMs: { kind: 'max', merge: (_, parts) => mapDefined(interruptedParts(parts), (c) => Math.max(...c.map((p) => p.interruptedMaxMs ?? 0))) },
  generatorFailures: { kind: 'union', merge: (values) => (values.some((v) => v !== undefined) ? mergeCounts(values.map((v) => v ?? {})) : undefined) },
}

export function mergeFigures(parts: Figures[]): Figures {
  return mergeBy(FIGURES_FIELDS, parts, undefined)
}

export const REPLICA_FIELDS: MergeTable<ReplicaFigures> = {
  url: SAME,
  ...FIGURES_FIELDS,
  wins: SUM,
  cancelled: SUM,
  ejections: SUM_OF_ALL,
}

/** Replicas merged by URL, in the order they first appear. */
export function mergeReplicas(lists: ReplicaFigures[][]): ReplicaFigures[] {
  const byUrl = new Map<string, ReplicaFigures[]>()
  for (const list of lists) for (const r of list) byUrl.set(r.url, [...(byUrl.get(r.url) ?? []), r])
  return [...byUrl.values()].map((parts) => mergeBy(REPLICA_FIELDS, parts, undefined))
}

type Calls = NonNullable<PhaseResult['calls']>
const CALLS_FIELDS: MergeTable<Calls> = { ...FIGURES_FIELDS, fanout: SAME }

type ServiceTime = NonNullable<PhaseResult['serviceTime']>
const SERVICE_TIME_FIELDS: MergeTable<ServiceTime> = {
  // A part that measured nothing has min 0: it must not become the exact min.
  latencyMs: {
    kind: 'histogram',
    merge: (_, parts) =>
      summarizeExact(
        mergeEncoded(parts.map((p) => p.histogram)),
        parts.filter((p) => p.latencyMs.max > 0).map((p) => p.latencyMs),
      ),
  },
  histogram: HISTOGRAM,
  lateSends: SUM,
}

// ---- hedging -----------------------------------------------------------------------

/** What a worker thread's summaries round away, for an exact merge (phase-snapshot.ts); saved results have none. */
export interface ExactHedging {
  /** Requests (calls, with fan-out) that fired at least one hedge. */
  triggered: number
  delayUsed: string
  timerLateness: string
}

interface HedgingContext {
  /** Logical requests (calls, with fan-out) of the merged phase. */
  calls: number
  /** Per part, when every part has them. */
  exact: ExactHedging[] | undefined
  /** The hedge delay each generator used; several distinct ones are stated as a range. */
  delays: number[]
  /** Whose delays they are: each generator's, or each target's of a mix. */
  per: 'generator' | 'target'
}

const callsOf = (p: PhaseResult): number => (p.calls ? p.calls.requests : p.requests)
const perGenerator = (c: HedgingContext): boolean => new Set(c.delays).size > 1

const SUPPRESSED_FIELDS: MergeTable<SuppressedHedges> = { overload: SUM, errorRate: SUM, targetBusy: SUM, pushback: SUM }

type PerAttempt = HedgingStats['perAttempt'][number]
const PER_ATTEMPT_FIELDS: MergeTable<PerAttempt> = {
  attempt: SAME,
  count: SUM,
  latencyMs: {
    kind: 'histogram',
    merge: (_, parts) =>
      summarizeExact(
        mergeEncoded(parts.map((a) => a.histogram)),
        parts.filter((a) => a.count > 0).map((a) => a.latencyMs),
      ),
  },
  histogram: HISTOGRAM,
}

type LoserRuntime = NonNullable<HedgingStats['loserRuntimeMs']>

/** How each HedgingStats field merges, in the order PhaseStats reports them (the JSON's order). */
export const HEDGING_FIELDS: MergeTable<HedgingStats, HedgingContext> = {
  delayMs: { kind: 'bounded', merge: (values, _, c) => (perGenerator(c) ? Math.min(...c.delays) : values[0]) },
  delaySource: {
    kind: 'bounded',
    merge: (values, _, c) =>
      perGenerator(c)
        ? c.per === 'target'
          ? `per target, ${formatMs(Math.min(...c.delays))} to ${formatMs(Math.max(...c.delays))} (each from its own warm-up unless the targets file gives one; see Targets)`
          : `per shard, ${formatMs(Math.min(...c.delays))} to ${formatMs(Math.max(...c.delays))} (each generator derived its own; see Generators)`
        : values[0],
  },
  warmupBasis: { kind: 'same', merge: (values) => mergeWarmupBasis(values) },
  adaptive: SAME,
  delayUsedMs: {
    kind: 'bounded',
    merge: (values, _, c) => {
      if (!c.exact)
        return { min: Math.min(...values.map((v) => v.min)), p50: Math.max(...values.map((v) => v.p50)), max: Math.max(...values.map((v) => v.max)) }
      const h = mergeEncoded(c.exact.map((e) => e.delayUsed))
      const mins = values.filter((_, i) => decodeHistogram(c.exact![i]!.delayUsed).totalCount > 0).map((v) => v.min)
      return { min: mins.length > 0 ? Math.min(...mins) : 0, p50: percentileMs(h, 50), max: percentileMs(h, 100) }
    },
  },
  maxAttempts: SAME,
  budgetPct: SAME,
  parallel: SAME,
  tied: SAME,
  cancelMode: SAME,
  hedgesSent: SUM,
  unsent: SUM,
  // Absent when a part was saved before originals were counted apart: 0 would claim every unsent attempt a hedge.
  unsentOriginals: SUM_OF_ALL,
  tiedDropped: SUM_OF_ALL,
  extraLoadPct: { kind: 'derived', merge: (_, parts, c) => extraLoadPctOf(sum(parts.map((p) => p.hedgesSent)), c.calls) },
  triggerRate: { kind: 'derived', merge: (_, parts, c) => (c.calls > 0 ? round3((triggeredOf(parts, c) / c.calls) * 100) : 0) },
  hedgeWins: SUM,
  originalWins: SUM,
  cancelled: SUM,
  lateDiscarded: SUM,
  budgetDenied: SUM,
  slowBudgetDenied: { kind: 'sum', merge: (values) => sum(values.map((v) => v ?? 0)) },
  deadlineSuppressed: SUM,
  nonFatalTriggered: SUM,
  suppressed: { kind: 'table', merge: (values) => mergeBy(SUPPRESSED_FIELDS, values, undefined) },
  loserRuntimeMs: {
    kind: 'histogram',
    merge: (values) => histogramSummary(mergeEncoded(values.filter((v): v is LoserRuntime => v !== undefined).map((v) => v.histogram))),
  },
  attemptsPerRequest: { kind: 'union', merge: (values) => mergeCounts(values.map((v) => v ?? {})) },
  timerLatenessMs: {
    kind: 'bounded',
    merge: (values, _, c) => {
      if (!c.exact)
        return { p50: Math.max(...values.map((v) => v.p50)), p99: Math.max(...values.map((v) => v.p99)), max: Math.max(...values.map((v) => v.max)) }
      const h = mergeEncoded(c.exact.map((e) => e.timerLateness))
      return { p50: percentileMs(h, 50), p99: percentileMs(h, 99), max: percentileMs(h, 100) }
    },
  },
  perAttempt: { kind: 'union', merge: (values) => mergeKeyed(values, (a) => a.attempt, PER_ATTEMPT_FIELDS) },
}

type WarmupBasis = NonNullable<HedgingStats['warmupBasis']>

/**
 * The warm-up a delay was measured on: one generator's threads share it;
 * generators that each measured the same basis on their own warm-up keep
 * it (each left out the same first requests); different ones are stated
 * together, the requests they measured on out of their warm-ups' total.
 * Absent when a part measured its delay elsewhere.
 */
function mergeWarmupBasis(values: Array<WarmupBasis | undefined>): WarmupBasis | undefined {
  if (values.some((v) => v === undefined)) return undefined
  const all = values as WarmupBasis[]
  if (all.every((v) => v.requests === all[0]!.requests && v.of === all[0]!.of)) return all[0]
  return { requests: sum(all.map((v) => v.requests)), of: sum(all.map((v) => v.of)) }
}

/** Requests that fired a hedge: counted by worker threads; from a saved result, its rounded trigger rate times its requests. */
function triggeredOf(parts: HedgingStats[], c: HedgingContext): number {
  if (c.exact) return sum(c.exact.map((e) => e.triggered))
  return sum(parts.map((h) => Math.round((h.triggerRate / 100) * ((h as HedgingWithCalls).calls ?? 0))))
}

/** A saved part's hedging with the calls it was over (mergePhase attaches them; no field of the result). */
type HedgingWithCalls = HedgingStats & { calls?: number }

// ---- the generator, the server --------------------------------------------------------

const GENERATOR_FIELDS: MergeTable<GeneratorHealth> = {
  eventLoopDelayMs: { kind: 'max', merge: (values) => worstLoop(values) },
  cpuPct: MAX,
  cores: SUM,
  saturated: { kind: 'max', merge: (values) => values.some((v) => v) },
  warnings: { kind: 'union', merge: (values) => [...new Set(values.flat())] },
  saturatedBy: {
    kind: 'union',
    merge: (values) => mapDefined(values.some((v) => v !== undefined) ? values.flatMap((v) => v ?? []) : undefined, (all) => [...new Set(all)]),
  },
  // Judged only if every generator's phase was long enough to judge.
  cpuJudged: { kind: 'same', merge: (values) => values.every((v) => v) },
  machineCores: { kind: 'same', merge: (values) => (new Set(values).size === 1 ? values[0] : undefined) },
  // Each generator (a shard's own machine) has its own ports: the closes of several are held against their ranges together.
  ephemeralPorts: { kind: 'sum', merge: (values) => (values.every((v) => v !== undefined) ? sum(values) : undefined) },
  gc: { kind: 'sum', merge: (values) => (values.some((v) => v !== undefined) ? mergeGcPauses(values) : undefined) },
}

/** Counted by every part with one grace: summed; a part without it, or another grace, leaves it out (a sum would be a claim). */
const EARLY_CANCELS: FieldRule<unknown, unknown, EarlyCancels | undefined> = { kind: 'sum', merge: (values) => mergeEarlyCancels(values) }

/** Early cancels of several parts (threads, shards, the phases of one window): one count, when every part counted with the same grace. */
export function mergeEarlyCancels(values: ReadonlyArray<EarlyCancels | null | undefined>): EarlyCancels | undefined {
  const all = values.filter((v) => v != null)
  if (all.length === 0 || all.length < values.length || new Set(all.map((v) => v.withinMs)).size !== 1) return undefined
  return { withinMs: all[0]!.withinMs, count: sum(all.map((v) => v.count)) }
}

type Utilisation = NonNullable<ServerCrossCheck['utilisation']>
const SERVER_FIELDS: MergeTable<ServerCrossCheck> = {
  received: SUM,
  completed: SUM,
  cancelled: SUM,
  hedgeHeader: SUM,
  clientAttempts: SUM,
  match: { kind: 'same', merge: (values) => values.every((v) => v) },
  started: SUM_OF_ALL,
  tiedDropped: SUM_OF_ALL,
  stalled: SUM_OF_ALL,
  earlyCancels: EARLY_CANCELS,
  // Each generator saw the whole server busy over its own window: the highest per replica, not a sum.
  utilisation: ifAll('bounded', (values: Utilisation[]) => {
    const busiest = new Map<string, number>()
    for (const list of values) for (const u of list) busiest.set(u.url, Math.max(busiest.get(u.url) ?? 0, u.busy))
    return [...busiest].map(([url, busy]) => ({ url, busy }))
  }),
  phases: SAME,
}

// ---- the phase -------------------------------------------------------------------------

/** One generator's (or thread's) window of the phase, epoch ms. */
export interface PhaseSpan {
  startMs: number
  endMs: number
}

export interface PhaseMergeContext {
  /** 'threads': one generator's worker threads (one process); 'generators': the shards of a run, each its own process; 'targets': the targets of a mix (--targets), each its own lane and delay. */
  of: 'threads' | 'generators' | 'targets'
  /** Each generator's window of the phase: the merged phase lasts their union. */
  spans: PhaseSpan[]
  /** The generator's health as the caller observed it (the worker pool reads the whole process); else the parts' merged. */
  generator?: GeneratorHealth
  /** The hedge delay each generator used, when the parts do not say it (a merged input's rows). */
  hedgeDelays?: number[]
  /** Per part, what a worker thread's summaries round away; absent for saved results. */
  exact?: ExactHedging[]
}

interface Span {
  startMs: number
  endMs: number
  durationMs: number
  overlapMs: number
}

function spanOf(spans: PhaseSpan[]): Span {
  const startMs = Math.min(...spans.map((s) => s.startMs))
  const endMs = Math.max(...spans.map((s) => s.endMs))
  const overlapMs = Math.max(0, Math.min(...spans.map((s) => s.endMs)) - Math.max(...spans.map((s) => s.startMs)))
  return { startMs, endMs, durationMs: Math.max(0, endMs - startMs), overlapMs }
}

/**
 * The one definition of a phase's rate: its logical requests over its
 * duration; for a merged phase the union of its generators' windows, so a
 * merged Summary's time, requests and requests/s agree, and a merge of N
 * shards compares with one process sending the same total.
 */
export function phaseRate(requests: number, durationMs: number): number {
  // durationMs as saved (to the microsecond), so the saved rate is the saved requests over the saved time.
  return round3(durationMs > 0 ? (requests * 1000) / durationMs : 0)
}

const span = (c: PhaseMergeContext): Span => spanOf(c.spans)

/** Parts' schedule series second by second (from each window's start): asked and sent summed, a rate's share summed to the thousandth. */
export function sumScheduleSeconds(parts: readonly ScheduleSecond[][]): ScheduleSecond[] {
  const length = Math.max(...parts.map((p) => p.length))
  return Array.from({ length }, (_, t) => {
    const here = parts.map((p) => p[t]).filter((s): s is ScheduleSecond => s !== undefined)
    const total = (field: 'rate' | 'asked' | 'concurrency'): Partial<ScheduleSecond> =>
      here.some((s) => s[field] !== undefined) ? { [field]: round3(here.reduce((sum, s) => sum + (s[field] ?? 0), 0)) } : {}
    return { t, ...total('rate'), ...total('asked'), ...total('concurrency'), sent: here.reduce((sum, s) => sum + s.sent, 0) }
  })
}

export const PHASE_FIELDS: MergeTable<PhaseResult, PhaseMergeContext> = {
  name: SAME,
  ...FIGURES_FIELDS,
  startOffsetMs: { kind: 'min', merge: (values) => round3(Math.max(0, Math.min(...values))) },
  durationMs: { kind: 'span', merge: (_, __, c) => round3(span(c).durationMs) },
  rps: { kind: 'derived', merge: (_, parts, c) => phaseRate(sum(parts.map((p) => p.requests)), round3(span(c).durationMs)) },
  connectionsOpened: SUM,
  connectionsClosedByCancel: SUM_OF_ALL,
  streamsResetByCancel: SUM_OF_ALL,
  streamsResentAfterGoaway: SUM_OF_ALL,
  earlyCancels: EARLY_CANCELS,
  replicas: { kind: 'union', merge: (values) => mergeReplicas(values) },
  timeline: { kind: 'union', merge: (values) => mergePoints(values) },
  generator: { kind: 'bounded', merge: (values, _, c) => c.generator ?? mergeBy(GENERATOR_FIELDS, values, undefined) },
  ejections: {
    kind: 'union',
    merge: (values) => (values.some((v) => v !== undefined) ? values.flatMap((v) => v ?? []).sort((a, b) => a.atMs - b.atMs) : undefined),
  },
  timelineFine: ifAll('union', (values: TimelinePoint[][]) => mergePoints(values)),
  // The window's own series (a schedule): a mix's targets share their window's; threads and shards each ran their part of it.
  scheduleSeconds: ifAll('sum', (values: ScheduleSecond[][], _, c) => (c.of === 'targets' ? values[0]! : sumScheduleSeconds(values))),
  skipped: SUM_OF_ALL,
  calls: ifAll('table', (values: Calls[]) => mergeBy(CALLS_FIELDS, values, undefined)),
  hedging: ifAll('table', (values: HedgingStats[], parts, c) => mergeHedging(values, parts, c)),
  serviceTime: ifAll('table', (values: ServiceTime[]) => mergeBy(SERVICE_TIME_FIELDS, values, undefined)),
  // A part without details completed no attempt (or was saved before they were measured).
  details: {
    kind: 'histogram',
    merge: (values) =>
      mapDefined(
        values.filter((d) => d !== undefined),
        (d) => (d.length > 0 ? mergeDetails(d) : undefined),
      ),
  },
  server: ifAll('table', (values: ServerCrossCheck[]) => mergeBy(SERVER_FIELDS, values, undefined)),
  wall: { kind: 'span', merge: (_, __, c) => (c.of === 'generators' ? { startMs: span(c).startMs, endMs: span(c).endMs } : undefined) },
  window: {
    kind: 'span',
    merge: (_, __, c) => {
      if (c.of !== 'generators') return undefined
      const s = span(c)
      return { overlapMs: round3(s.overlapMs), unionMs: round3(s.durationMs) }
    },
  },
}

/** Every table of the algebra by the shape it merges, nested ones too: what a reader (and a test) can check each kind of. */
export const MERGE_TABLES = {
  phase: PHASE_FIELDS,
  figures: FIGURES_FIELDS,
  replica: REPLICA_FIELDS,
  calls: CALLS_FIELDS,
  serviceTime: SERVICE_TIME_FIELDS,
  hedging: HEDGING_FIELDS,
  suppressed: SUPPRESSED_FIELDS,
  perAttempt: PER_ATTEMPT_FIELDS,
  generator: GENERATOR_FIELDS,
  server: SERVER_FIELDS,
} as const

function mergeHedging(values: HedgingStats[], parts: PhaseResult[], c: PhaseMergeContext): HedgingStats {
  const withCalls = values.map((h, i) => ({ ...h, calls: callsOf(parts[i]!) }))
  const calls = sum(parts.map(callsOf))
  const delays = c.hedgeDelays && c.hedgeDelays.length > 0 ? c.hedgeDelays : values.map((h) => h.delayMs)
  return mergeBy(HEDGING_FIELDS, withCalls, { calls, exact: c.exact, delays, per: c.of === 'targets' ? 'target' : 'generator' })
}

/** The same phase of several parts as one PhaseResult, every field as PHASE_FIELDS says. */
export function mergePhaseParts(parts: PhaseResult[], ctx: PhaseMergeContext): PhaseResult {
  if (parts.length === 0) throw new Error('mergePhaseParts: nothing to merge')
  return mergeBy(PHASE_FIELDS, parts, ctx)
}

/** A finished phase from every one of its fields, in PHASE_FIELDS' order (phase-stats.ts's finish). */
export function phaseResult(fields: EveryField<PhaseResult>): PhaseResult {
  return buildBy(PHASE_FIELDS as MergeTable<PhaseResult, never>, fields)
}

export function hedgingStats(fields: EveryField<HedgingStats>): HedgingStats {
  return buildBy(HEDGING_FIELDS as MergeTable<HedgingStats, never>, fields)
}

export function replicaFigures(fields: EveryField<ReplicaFigures>): ReplicaFigures {
  return buildBy(REPLICA_FIELDS as MergeTable<ReplicaFigures, never>, fields)
}

// ---- timelines ---------------------------------------------------------------------------

/**
 * A point with what an exact merge needs: the sums behind its rounded delay
 * and its bucket's latency histogram (worker threads' points carry them;
 * saved points do not).
 */
export interface ExactPoint extends TimelinePoint, Omit<SecondSums, 't'> {
  histogram: string
}

const isExact = (p: TimelinePoint): p is ExactPoint => typeof (p as Partial<ExactPoint>).histogram === 'string'

/**
 * Points of several parts merged by `t` (seconds, or tenths for the fine
 * timeline): counts summed; p50/p99 and the delay from the added histograms
 * and sums when every part's point carries them, else the highest part's.
 */
export function mergePoints(lists: TimelinePoint[][]): TimelinePoint[] {
  const byT = new Map<number, TimelinePoint[]>()
  for (const list of lists) for (const p of list) byT.set(p.t, [...(byT.get(p.t) ?? []), p])
  return [...byT.keys()]
    .sort((a, b) => a - b)
    .slice(0, MAX_POINTS)
    .map((t) => {
      const ps = byT.get(t)!
      if (ps.every(isExact)) {
        const sums: SecondSums = {
          t,
          requests: sum(ps.map((p) => p.requests)),
          errors: sum(ps.map((p) => p.errors)),
          hedges: sum(ps.map((p) => p.hedges)),
          delaySum: sum(ps.map((p) => p.delaySum)),
          delayCount: sum(ps.map((p) => p.delayCount)),
        }
        return timelinePoint(sums, mergeEncoded(ps.map((p) => p.histogram)))
      }
      const delays = ps.map((p) => p.delayMs).filter((d): d is number => d !== null)
      return {
        t,
        requests: sum(ps.map((p) => p.requests)),
        errors: sum(ps.map((p) => p.errors)),
        p50Ms: Math.max(...ps.map((p) => p.p50Ms)),
        p99Ms: Math.max(...ps.map((p) => p.p99Ms)),
        hedges: sum(ps.map((p) => p.hedges)),
        delayMs: delays.length > 0 ? Math.max(...delays) : null,
      }
    })
}

// ---- histograms and small helpers -------------------------------------------------------------

/** Count, p50, p99 and max of a histogram, with the histogram itself for an exact merge. */
export function histogramSummary(h: Histogram): { count: number; p50: number; p99: number; max: number; histogram: string } {
  return { count: h.totalCount, p50: percentileMs(h, 50), p99: percentileMs(h, 99), max: percentileMs(h, 100), histogram: encodeHistogram(h) }
}

/**
 * summarize() of the merged histogram, with the exact min and max the
 * parts measured: an HDR histogram only keeps the bucket of each value,
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

/** Items of several lists grouped by key (in key order), each group merged by its table. */
function mergeKeyed<T>(lists: T[][], keyOf: (item: T) => number, table: MergeTable<T>): T[] {
  const byKey = new Map<number, T[]>()
  for (const list of lists) for (const item of list) byKey.set(keyOf(item), [...(byKey.get(keyOf(item)) ?? []), item])
  return [...byKey.keys()].sort((a, b) => a - b).map((k) => mergeBy(table, byKey.get(k)!, undefined))
}

export function mergeCounts(records: Array<Record<string, number>>): Record<string, number> {
  const total = new Map<string, number>()
  for (const r of records) for (const [k, v] of Object.entries(r)) total.set(k, (total.get(k) ?? 0) + v)
  const out: Record<string, number> = {}
  for (const key of [...total.keys()].sort()) out[key] = total.get(key)!
  return out
}

/** The sum of a counter every part reported; undefined when any part did not. */
function sumOfAll(values: Array<number | undefined>): number | undefined {
  return values.every((v) => v !== undefined) ? sum(values as number[]) : undefined
}

function mapDefined<T, U>(value: T | undefined, f: (v: T) => U): U | undefined {
  return value === undefined ? undefined : f(value)
}

export function sum(xs: number[]): number {
  let total = 0
  for (const x of xs) total += x
  return total
}
