/**
 * Before/after comparison of saved runs: every metric side by side, the
 * change of each run against the first, a noise verdict per change (see
 * noise.ts for the method) and the configuration differences, so nobody
 * compares apples with oranges unknowingly. Pure: renderers and `--fail-if`
 * read the returned Comparison.
 */
import { configEntries } from '../results/config-entries.js'
import { extraLoadPct } from '../results/extra-load.js'
import { loopImpact } from './generator-impact.js'
import { UsageError } from '../core/errors.js'
import { tryDecodeHistogram, type Histogram } from '../stats/histogram.js'
import { baselineSetInterval, relativeSpread, runSpread, timeSeriesInterval, type RunSpread } from '../stats/drift-noise.js'
import {
  LATENCY_RESOLUTION_MS,
  countChange,
  meanDifference,
  percentileDifference,
  percentileJudgeable,
  proportionDifference,
  rateDifference,
  requestsNeeded,
  verdictOf,
  type Interval,
  type NoiseMethod,
  type Verdict,
} from '../stats/noise.js'
import { PERCENTILE_KEYS, type GrpcClientResult, type LatencySummary, type PhaseName, type PhaseResult, type RunResult } from '../results/run-result.js'

export type { Interval, NoiseMethod, Verdict } from '../stats/noise.js'

export type MetricKey = keyof LatencySummary | 'slow' | 'error_rate' | 'rps' | 'extra_load'

/** Every metric compare knows, in table order. */
export const METRIC_KEYS: readonly MetricKey[] = ['min', ...PERCENTILE_KEYS, 'max', 'mean', 'stddev', 'slow', 'error_rate', 'rps', 'extra_load']

export type MetricUnit = 'ms' | 'requests' | '%' | 'req/s'

/** What can be compared: a hedgebench phase, or the calls of --hedge-by grpc-js. */
export type ComparedPhaseName = PhaseName | 'grpc-js'

export interface ComparedRun {
  /** File name (or phase name when comparing within one run). */
  name: string
  /** Short name for columns and legends: the run's --label when the labels tell the runs apart and are short, else A, B, C (see runTags). */
  tag: string
  label: string
  phase: ComparedPhaseName
  requests: number
  durationMs: number
  partial: boolean
  /** The load generator was saturated in the compared phase: its latencies include its own delay. */
  generatorSaturated: boolean
}

/** One run's value against the first run's. */
export interface MetricChange {
  /** Run value minus first run's value, in the metric's unit. */
  abs: number
  /** Change in percent of the first run's value; null when that value is 0. */
  pct: number | null
  /** 95 % interval of `abs`; null when the method gives none. */
  interval: Interval | null
  /**
   * Which estimate set the interval, when drift's did (drift-noise.ts): the
   * runs' own time series, or the spread of the A/A baseline set. Absent
   * when the request count's was the widest.
   */
  noise?: NoiseFloor
  verdict: Verdict
  /** Why there is no verdict: "n = 50 for p99.9; needs 7130" (verdict 'not enough requests'). */
  note?: string
}

export interface MetricRow {
  metric: MetricKey
  unit: MetricUnit
  /** Which way is an improvement. */
  better: 'lower' | 'higher'
  method: NoiseMethod
  /** One per run, in run order; null when the run's figure is missing or not a finite number. */
  values: Array<number | null>
  /** One per run; the first (the baseline) and runs lacking the metric are null. */
  changes: Array<MetricChange | null>
}

/** The drift estimates that can widen an interval (drift-noise.ts). */
export type NoiseFloor = 'time series' | 'baseline set'

export interface ConfigDifference {
  /** Dotted config path ("concurrency", "hedge.delay") or "phase". */
  key: string
  /** One per run, as text. */
  values: string[]
}

export interface Comparison {
  /** 'runs': several saved runs; 'within': one run's plain vs hedged phase. */
  kind: 'runs' | 'within'
  runs: ComparedRun[]
  configDifferences: ConfigDifference[]
  metrics: MetricRow[]
  /** Things that make the comparison less trustworthy (interrupted run, saturated generator). */
  warnings: string[]
  /** The A/A baseline set whose spread is a noise floor (compare --baseline), by name; absent without one. */
  baselineSet?: string[]
}

export interface CompareOptions {
  /** Phase to compare in every run; default: hedged when a run has it, else plain. */
  phase?: ComparedPhaseName
  /**
   * An A/A set: runs of the baseline, the first of which is `runs[0]`. The
   * spread of their values is a noise floor for every change (two or more).
   */
  baselines?: Array<{ name: string; result: RunResult }>
}

/** Compares each run against the first. Throws UsageError when a run lacks the phase. */
export function compareRuns(runs: Array<{ name: string; result: RunResult }>, opts: CompareOptions = {}): Comparison {
  if (runs.length < 2) throw new UsageError('compare needs at least two runs (or one run with a plain and a hedged phase)')
  const sides = runs.map(({ name, result }) => sideOf(name, result, pickPhase(name, result, opts.phase)))
  const baselines = (opts.baselines ?? []).map(({ name, result }) => sideOf(name, result, pickPhase(name, result, opts.phase)))
  const comparison = build(
    'runs',
    sides,
    runs.map((r) => r.result),
    baselines.length >= 2 ? baselines : [],
  )
  return baselines.length >= 2 ? { ...comparison, baselineSet: baselines.map((b) => b.run.name) } : comparison
}

/** Compares a run's own plain phase (baseline) with its hedged phase. */
export function compareWithin(result: RunResult): Comparison {
  const plain = result.phases.plain
  const hedged = result.phases.hedged
  if (!plain || !hedged) {
    throw new UsageError('this run has no plain and hedged phase to compare within (run with --mode both, or give two files)')
  }
  return comparePhases(plain, hedged, result)
}

/** A plain phase (baseline) against a hedged one of the same run: what the verdict reads. */
export function comparePhases(plain: PhaseResult, hedged: PhaseResult, run: Pick<RunResult, 'label' | 'partial'>): Comparison {
  return build('within', [sideOf('plain', run, plain), sideOf('hedged', run, hedged)], [])
}

/** One phase's value of a metric, read as compare reads it (for `--fail-if` on a run). */
export function phaseMetric(result: RunResult, phase: PhaseResult, key: MetricKey): number | null {
  return finiteOrNull(specOf(key).value(sideOf(phase.name, result, phase)))
}

/** What compare reads of a phase (a PhaseResult is one; so is grpcClientPhase's view of the grpc-js calls). */
type ComparedPhase = Pick<PhaseResult, 'requests' | 'errors' | 'latencyMs' | 'slow' | 'rps' | 'durationMs' | 'calls'> &
  Partial<Pick<PhaseResult, 'timeline' | 'timelineFine'>> & {
    name: ComparedPhaseName
    histogram?: string
    hedging?: Pick<NonNullable<PhaseResult['hedging']>, 'hedgesSent' | 'delayMs'>
    generator?: Pick<PhaseResult['generator'], 'saturated' | 'eventLoopDelayMs'>
  }

interface Side {
  run: ComparedRun
  phase: ComparedPhase
  histogram: Histogram | null
  /** The drift of its latency over its own time series; null without enough windows. */
  spread: RunSpread | null
}

function pickPhase(name: string, result: RunResult, wanted: ComparedPhaseName | undefined): ComparedPhase {
  const phase = wanted === 'grpc-js' ? grpcClientPhase(result.grpcClient) : wanted ? result.phases[wanted] : (result.phases.hedged ?? result.phases.plain)
  if (!phase)
    throw new UsageError(`${name} has no ${wanted === 'grpc-js' ? 'grpc-js calls (--hedge-by grpc-js)' : (wanted ?? 'plain or hedged')} phase to compare`)
  return phase
}

/** The calls grpc-js made (--hedge-by grpc-js), read as a phase: its hedges are the copies the client added. */
function grpcClientPhase(g: GrpcClientResult | undefined): ComparedPhase | undefined {
  if (!g) return undefined
  const { requests, errors, latencyMs, slow, rps, durationMs, histogram, generator, hedgesSent } = g
  return {
    name: 'grpc-js',
    requests,
    errors,
    latencyMs,
    slow,
    rps,
    durationMs,
    ...(histogram ? { histogram } : {}),
    ...(generator ? { generator } : {}),
    hedging: { hedgesSent, delayMs: g.asked.hedgingDelayMs },
  }
}

function sideOf(name: string, result: Pick<RunResult, 'label' | 'partial'>, phase: ComparedPhase): Side {
  return {
    run: {
      name,
      tag: name,
      label: result.label,
      phase: phase.name,
      requests: phase.requests,
      durationMs: phase.durationMs,
      partial: result.partial,
      generatorSaturated: phase.generator?.saturated === true,
    },
    phase,
    histogram: phase.histogram === undefined ? null : tryDecodeHistogram(phase.histogram), // a run without one still compares, without percentile intervals
    spread: runSpread(phase),
  }
}

function build(kind: Comparison['kind'], sides: Side[], results: RunResult[], baselines: Side[] = []): Comparison {
  const hedges = sides.some((s) => s.phase.hedging)
  // Extra load only means something when some side hedged.
  const keys = METRIC_KEYS.filter((key) => key !== 'extra_load' || hedges)
  const metrics = keys.map((key) => metricRow(key, sides, baselines))
  const configDifferences = diffConfigs(results)
  if (kind === 'runs') {
    const phases = sides.map((s) => s.run.phase)
    if (new Set(phases).size > 1) configDifferences.unshift({ key: 'phase', values: phases })
  }
  const tags = kind === 'runs' ? runTags(sides.map((s) => s.run.label)) : sides.map((s) => s.run.name)
  const runs = sides.map((s, i) => ({ ...s.run, tag: tags[i]! }))
  return { kind, runs, configDifferences, metrics, warnings: warningsOf(sides, kind) }
}

/** A label longer than this makes a column too wide: the runs are lettered instead. */
const TAG_MAX = 16

/**
 * The runs' --labels when they tell the runs apart and fit a column; else
 * A, B, C … (the runs section lists each tag with its file). File names
 * as column headers made a 2-run table 150 columns wide.
 */
export function runTags(labels: string[]): string[] {
  const usable = labels.every((l) => l.trim() !== '' && l.length <= TAG_MAX) && new Set(labels).size === labels.length
  return usable ? labels : labels.map((_, i) => letters(i))
}

/** 0 -> A, 25 -> Z, 26 -> AA. */
function letters(i: number): string {
  return (i >= 26 ? letters(Math.floor(i / 26) - 1) : '') + String.fromCharCode(65 + (i % 26))
}

// ---- metrics -------------------------------------------------------------

interface MetricSpec {
  unit: MetricUnit
  better: 'lower' | 'higher'
  method: NoiseMethod
  value(side: Side): number | null
  interval(before: Side, after: Side): Interval | null
  absoluteFloor?: number
  /** Why a side has too few requests to judge this metric; null when both have enough. */
  tooFew?(before: Side, after: Side): string | null
}

const PERCENTILE_SET = new Set<string>(PERCENTILE_KEYS)

function specOf(key: MetricKey): MetricSpec {
  if (key === 'slow' || key === 'error_rate' || key === 'rps' || key === 'extra_load') return COUNT_SPECS[key]
  const latency = { unit: 'ms' as const, better: 'lower' as const, absoluteFloor: LATENCY_RESOLUTION_MS, value: (s: Side) => s.phase.latencyMs[key] }
  if (PERCENTILE_SET.has(key)) {
    const p = Number(key.slice(1))
    return {
      ...latency,
      method: 'order-statistic',
      interval: (a, b) => (a.histogram && b.histogram ? percentileDifference(a.histogram, b.histogram, p) : null),
      tooFew: (a, b) => tooFewFor(key, p, a, b),
    }
  }
  if (key === 'mean') return { ...latency, method: 'welch', interval: (a, b) => meanDifference(meanSample(a), meanSample(b)) }
  return { ...latency, method: 'none', interval: () => null }
}

/** "n = 50 for p99.9; needs 7130" for the smaller side, when either side cannot bound percentile p. */
function tooFewFor(key: string, p: number, a: Side, b: Side): string | null {
  const n = Math.min(a.histogram?.totalCount ?? 0, b.histogram?.totalCount ?? 0)
  if (n === 0 || percentileJudgeable(n, p)) return null
  return `n = ${n} for ${key}; needs ${requestsNeeded(p)}`
}

function meanSample(s: Side): { mean: number; stddev: number; n: number } {
  return { mean: s.phase.latencyMs.mean, stddev: s.phase.latencyMs.stddev, n: s.histogram?.totalCount ?? s.phase.requests }
}

const errorRate = (s: Side): number => (s.phase.requests > 0 ? round((100 * s.phase.errors) / s.phase.requests) : 0)
const extraLoad = (s: Side): number => extraLoadPct(s.phase)
const extraAttempts = (s: Side): number => (extraLoad(s) * s.phase.requests) / 100

const COUNT_SPECS: Record<'slow' | 'error_rate' | 'rps' | 'extra_load', MetricSpec> = {
  slow: {
    unit: 'requests',
    better: 'lower',
    method: 'exact-binomial',
    value: (s) => s.phase.slow.count,
    // Per request, so runs of different sizes compare; in requests of the later run.
    interval: (a, b) => slowChange(a, b)?.difference ?? null,
  },
  error_rate: {
    unit: '%',
    better: 'lower',
    method: 'two-proportion',
    value: errorRate,
    interval: (a, b) => scale(proportionDifference({ count: a.phase.errors, n: a.phase.requests }, { count: b.phase.errors, n: b.phase.requests }), 100),
  },
  rps: {
    unit: 'req/s',
    better: 'higher',
    method: 'poisson',
    value: (s) => s.phase.rps,
    interval: (a, b) => rateDifference(rpsSample(a), rpsSample(b)),
  },
  extra_load: {
    unit: '%',
    better: 'lower',
    method: 'poisson',
    value: extraLoad,
    interval: (a, b) =>
      scale(rateDifference({ count: extraAttempts(a), exposure: a.phase.requests }, { count: extraAttempts(b), exposure: b.phase.requests }), 100),
  },
}

/** The requests over the phase's duration: the rate shown (a merged phase's too: phase-algebra.ts phaseRate). */
function rpsSample(s: Side): { count: number; exposure: number } {
  return { count: s.phase.requests, exposure: s.phase.durationMs / 1000 }
}

/** The exact interval of the change in requests over --slow (noise.ts): the verdict reads the same. */
export function slowChange(before: Pick<Side, 'phase'>, after: Pick<Side, 'phase'>): ReturnType<typeof countChange> {
  return countChange({ count: before.phase.slow.count, n: before.phase.requests }, { count: after.phase.slow.count, n: after.phase.requests })
}

function scale(interval: Interval | null, factor: number): Interval | null {
  return interval ? [round(interval[0] * factor), round(interval[1] * factor)] : null
}

function metricRow(metric: MetricKey, sides: Side[], baselines: Side[]): MetricRow {
  const spec = specOf(metric)
  const values = sides.map((s) => finiteOrNull(spec.value(s)))
  const baselineValues = baselines.flatMap((s) => finiteOrNull(spec.value(s)) ?? [])
  // A baseline set's value is its mean: the level a new run of the baseline is predicted around.
  if (baselineValues.length >= 2) values[0] = round(baselineValues.reduce((a, b) => a + b, 0) / baselineValues.length)
  const base = values[0] ?? null
  const changes = sides.map((side, i) => {
    const value = values[i] ?? null
    if (i === 0 || base === null || value === null) return null
    const tooFew = spec.tooFew?.(sides[0]!, side) ?? null
    if (tooFew !== null) return { ...changeOf(base, value, { interval: null }, spec), verdict: 'not enough requests' as const, note: tooFew }
    const abs = round(value - base)
    const spreadOf = (s: Side, v: number) => ({
      value: v,
      spread: s.spread && spec.unit === 'ms' ? relativeSpread(s.spread, metric) : null,
      df: s.spread?.df ?? 0,
    })
    const drift = {
      'time series': timeSeriesInterval(abs, spreadOf(sides[0]!, base), spreadOf(side, value)),
      'baseline set': baselineSetInterval(abs, baselineValues),
    }
    return changeOf(base, value, widest(spec.interval(sides[0]!, side), drift), spec)
  })
  return { metric, unit: spec.unit, better: spec.better, method: spec.method, values, changes }
}

/**
 * The request count's interval, widened to cover every drift estimate's:
 * a change is called only when it stands out of all of them (the bigger
 * estimate wins). No interval stays none: such a metric is never judged.
 */
function widest(counted: Interval | null, drift: Record<NoiseFloor, Interval | null>): { interval: Interval | null; noise?: NoiseFloor } {
  if (!counted) return { interval: null }
  let interval = counted
  let noise: NoiseFloor | undefined
  for (const [source, other] of Object.entries(drift) as Array<[NoiseFloor, Interval | null]>) {
    if (!other || other[1] - other[0] <= interval[1] - interval[0]) continue
    interval = [Math.min(interval[0], other[0]), Math.max(interval[1], other[1])]
    noise = source
  }
  return { interval: [round(interval[0]), round(interval[1])], ...(noise ? { noise } : {}) }
}

function changeOf(base: number, value: number, judged: { interval: Interval | null; noise?: NoiseFloor }, spec: MetricSpec): MetricChange {
  const abs = round(value - base)
  const pct = base === 0 ? null : round((100 * (value - base)) / Math.abs(base))
  return { abs, pct, ...judged, verdict: verdictOf(abs, base, judged.interval, spec.better === 'lower', spec.absoluteFloor) }
}

function finiteOrNull(x: number | null | undefined): number | null {
  return typeof x === 'number' && Number.isFinite(x) ? x : null
}

function round(x: number): number {
  return Number(x.toPrecision(9))
}

// ---- configuration and warnings -----------------------------------------

/** Keys that differ between runs without making them different experiments. */
const NOT_A_DIFFERENCE = new Set(['seed'])

/** Config keys whose values differ between runs, with each run's value. */
function diffConfigs(results: RunResult[]): ConfigDifference[] {
  const flat = results.map((r) => new Map([...configEntries(r.config), ...loadEntries(r)]))
  const keys = [...new Set(flat.flatMap((f) => [...f.keys()]))].filter((key) => !NOT_A_DIFFERENCE.has(key))
  return keys.map((key) => ({ key, values: flat.map((f) => f.get(key) ?? '(none)') })).filter((d) => new Set(d.values).size > 1)
}

/**
 * What the config alone does not say: -c is per shard, so the concurrency a
 * merge of N shards had is N x -c, which is what it is compared by (a merge
 * of -c 10 x 3 against -c 30 in one process is the same load; against -c 10
 * it is three times it). A single shard is its own share of a run.
 */
function loadEntries(r: RunResult): Array<[string, string]> {
  const generators = r.generators?.length ?? 1
  return [
    ['concurrency', String(r.config.concurrency * generators)],
    ...(r.shard ? [['shard', `${r.shard.index}/${r.shard.count} (its share)`] as [string, string]] : []),
  ]
}

function warningsOf(sides: Side[], kind: Comparison['kind']): string[] {
  const warnings: string[] = []
  // Within one run both sides share the flag: say it once.
  const partialSides = kind === 'within' ? sides.slice(0, 1) : sides
  for (const { run } of partialSides) {
    if (run.partial) warnings.push(`${run.name}: the run was interrupted; its figures cover part of it`)
  }
  // Within one run the verdict says it, beside the answer it could have changed.
  if (kind === 'runs') warnings.push(...lateLoops(sides))
  for (const { run, phase, histogram } of sides) {
    if (phase.generator?.saturated) warnings.push(`${run.name}: the load generator was saturated in the ${phase.name} phase; latencies include its own delay`)
    if (phase.requests === 0) warnings.push(`${run.name}: the ${phase.name} phase has no requests`)
    else if (!histogram) warnings.push(`${run.name}: no usable latency histogram; percentile intervals are missing`)
  }
  return warnings
}

/**
 * Each run whose own generator ran late enough to matter, named by its file:
 * a later run against the first; the first against the first later run
 * whose difference its lateness could have changed (it is every run's
 * baseline, so it is said once).
 */
function lateLoops(sides: Side[]): string[] {
  const [first, ...later] = sides
  if (!first) return []
  const ofFirst = later.map((s) => loopImpact([first.phase], first.phase, s.phase)).find((w) => w !== null)
  return [
    ...(ofFirst ? [`${first.run.name}: ${ofFirst}`] : []),
    ...later.flatMap((s) => {
      const impact = loopImpact([s.phase], first.phase, s.phase)
      return impact ? [`${s.run.name}: ${impact}`] : []
    }),
  ]
}
