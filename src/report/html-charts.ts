/**
 * The HTML report's four charts, built from phases of one or more runs:
 * percentile distribution, response-time histogram, latency over time and
 * hedging over time. Each phase is a "source" with a display name that
 * prefixes its series ids ("hedged:p99", "after.json/plain:p50"). Each chart
 * is a ChartSpec (its data), drawn twice by html.ts: as static SVG
 * (svg-chart.ts) and as the interactive chart that replaces it when the
 * page's one script runs (live-charts.ts).
 */
import { percentileMs, percentilesMs, tryDecodeHistogram, type Histogram } from '../stats/histogram.js'
import { formatMs } from '../core/duration.js'
import type { PhaseResult, RunResult, TimelinePoint } from '../results/run-result.js'
import { FINE_BUCKET_MS, MAX_POINTS } from '../stats/timeline.js'
import { round3 } from '../core/round.js'
import { niceTicks, type ChartSpec, type Point, type Series, type Tick, type XMark } from './svg-chart.js'
import { ejectionCause } from './ejection-cause.js'

export interface ChartSource {
  /** Series id prefix: the phase name, or "run/phase" when several runs are drawn. */
  name: string
  phase: PhaseResult
  /** Every phase of the phase's run (a server count may cover several: ServerCrossCheck.phases). */
  runPhases?: RunResult['phases']
  /** The same in every chart, so a phase is recognised at a glance; with several runs, one colour per run. */
  color: string
  /** With several runs, the phase's line style (SVG stroke-dasharray; '' solid), so run and phase read apart. */
  dash?: string
  /** The most requests the run had in flight at once (-c): how many stragglers a bucket over time can hold. */
  inFlight?: number
}

/** Percentile ticks of HdrHistogram's plotter: x = log10(1 / (1 - p)). */
const PERCENTILE_TICKS: Tick[] = [
  { value: 0, label: '0%' },
  { value: Math.log10(2), label: '50%' },
  { value: 1, label: '90%' },
  { value: 2, label: '99%' },
  { value: 3, label: '99.9%' },
  { value: 4, label: '99.99%' },
]
const X_STEP = 0.025
const MAX_X = 5

/** The percentiles the report's tables name, marked (with a hover value) on the percentile curves. */
const MARKED_PERCENTILES = [50, 90, 95, 99, 99.9, 99.99]

/**
 * (1) Latency by percentile, every source overlaid, on log axes both ways:
 * 1/(1-p) spreads the tail, and a log latency keeps a hedged curve from being
 * flattened against the bottom by the plain phase's stalls. The hedge delay
 * is drawn as a dashed line: where a curve crosses it, hedges start firing.
 */
export function percentileSpec(sources: ChartSource[]): ChartSpec {
  const curves = sources.map((src) => ({ src, h: tryDecodeHistogram(src.phase.histogram) }))
  const series = curves.flatMap(({ src, h }): Series[] => [
    { id: `${src.name}:percentiles`, label: src.name, color: src.color, dash: src.dash, points: percentilePoints(h) },
    {
      id: `${src.name}:marked`,
      label: src.name,
      color: src.color,
      dash: src.dash,
      noLine: true,
      points: markedPoints(h),
      markers: { format: (x, y) => `p${percentileAt(x)}: ${formatMs(y)}` },
    },
  ])
  const reach = Math.max(4, ...series.map((s) => s.points[s.points.length - 1]?.[0] ?? 0))
  const ticks = reach > 4 ? [...PERCENTILE_TICKS, { value: MAX_X, label: '99.999%' }] : PERCENTILE_TICKS
  const delays = sources.flatMap((src): Series[] =>
    src.phase.hedging && src.phase.hedging.delayMs > 0
      ? [
          {
            id: `${src.name}:hedge-delay`,
            label: `${src.name} hedge delay ${formatMs(src.phase.hedging.delayMs)}`,
            color: src.color,
            dashed: true,
            flat: true,
            points: [
              [0, src.phase.hedging.delayMs],
              [reach, src.phase.hedging.delayMs],
            ],
          },
        ]
      : [],
  )
  const drawn = [...series, ...delays]
  const ys = drawn.flatMap((s) => s.points.map((p) => p[1]).filter((v): v is number => v !== null && v > 0))
  const lo = Math.log10(Math.max(0.001, Math.min(...ys, Infinity)))
  const hi = Math.log10(Math.max(0.001, ...ys))
  return {
    chart: 'percentiles',
    title: 'Latency by percentile',
    xLabel: 'percentile (log scale of 1/(1-p))',
    x: 'percentile',
    xTicks: ticks,
    panels: [
      {
        yLabel: 'latency (log scale)',
        unit: 'ms',
        series: drawn.filter((s) => !s.id.endsWith(':marked') || s.points.length > 0),
        yLog: true,
        yTicks: logMsTicks(Number.isFinite(lo) ? lo : 0, hi),
      },
    ],
  }
}

function markedPoints(h: Histogram | null): Point[] {
  if (!h || h.totalCount === 0) return []
  // Only percentiles the run has enough requests to tell apart from the max (x <= log10 n).
  return MARKED_PERCENTILES.map((p) => -Math.log10(1 - p / 100))
    .filter((x) => x <= Math.log10(h.totalCount) + 1e-9)
    .map((x): Point => [x, percentileMs(h, 100 * (1 - 10 ** -x))])
}

/** x = log10(1/(1-p)) back to the percentile, as tables write it ("99.9"). */
function percentileAt(x: number): string {
  return String(Number((100 * (1 - 10 ** -x)).toPrecision(6)))
}

function percentilePoints(h: Histogram | null): Point[] {
  if (!h || h.totalCount === 0) return []
  // Beyond 1 - 1/n the histogram has nothing more to say.
  const last = Math.min(MAX_X, Math.log10(h.totalCount))
  const xs: number[] = []
  for (let x = 0; x < last; x += X_STEP) xs.push(x)
  xs.push(last)
  const values = percentilesMs(
    h,
    xs.map((x) => 100 * (1 - 10 ** -x)),
  )
  return xs.map((x, i): Point => [x, values[i]!])
}

const HISTOGRAM_BINS = 48
const QUANTILE_SAMPLES = 2000

/** (2) Share of requests per response-time bin; bins are log-spaced so a 1 s stall and a 5 ms body both show. */
export function histogramSpec(sources: ChartSource[]): ChartSpec {
  const histograms = sources.map((s) => tryDecodeHistogram(s.phase.histogram))
  const present = histograms.filter((h): h is Histogram => h !== null && h.totalCount > 0)
  const lo = Math.log10(Math.max(0.001, Math.min(...present.map((h) => percentileMs(h, 0)), Infinity)))
  const hi = Math.log10(Math.max(0.001, ...present.map((h) => percentileMs(h, 100))))
  const edges = binEdges(Number.isFinite(lo) ? lo : 0, hi)
  const series = sources.map(
    (src, i): Series => ({
      id: `${src.name}:histogram`,
      label: src.name,
      color: src.color,
      dash: src.dash,
      step: true,
      points: binShares(histograms[i] ?? null, edges),
    }),
  )
  return {
    chart: 'histogram',
    title: 'Response-time histogram',
    xLabel: 'latency (log scale)',
    x: 'log-ms',
    xTicks: logMsTicks(edges[0]!, edges[edges.length - 1]!),
    panels: [{ yLabel: 'share of requests (%)', unit: 'pct', series }],
  }
}

/** Bin edges in log10(ms). */
function binEdges(lo: number, hi: number): number[] {
  const top = hi > lo ? hi + (hi - lo) * 1e-9 : lo + 1
  return Array.from({ length: HISTOGRAM_BINS + 1 }, (_, i) => lo + ((top - lo) * i) / HISTOGRAM_BINS)
}

/**
 * 2000 evenly spaced percentiles (read in one walk), each worth 1/2000 of
 * the requests, give each bin's share to within 0.05 %.
 */
function binShares(h: Histogram | null, edges: number[]): Point[] {
  if (!h || h.totalCount === 0) return []
  const shares = new Array<number>(HISTOGRAM_BINS).fill(0)
  const lo = edges[0]!
  const width = (edges[HISTOGRAM_BINS]! - lo) / HISTOGRAM_BINS
  const quantiles = percentilesMs(
    h,
    Array.from({ length: QUANTILE_SAMPLES }, (_, i) => (100 * (i + 0.5)) / QUANTILE_SAMPLES),
  )
  for (const q of quantiles) {
    const v = Math.log10(Math.max(0.001, q))
    const bin = Math.min(HISTOGRAM_BINS - 1, Math.max(0, Math.floor((v - lo) / width)))
    shares[bin]! += 100 / QUANTILE_SAMPLES
  }
  const points: Point[] = shares.map((share, i) => [edges[i]!, round2(share)])
  points.push([edges[HISTOGRAM_BINS]!, round2(shares[HISTOGRAM_BINS - 1]!)])
  return points
}

/** Ticks at 1-2-5 steps of milliseconds, placed on a log10(ms) axis. */
export function logMsTicks(lo: number, hi: number): Tick[] {
  const ticks: Tick[] = []
  // A range inside one 1-2-5 step would get no tick: widen it to the steps around it.
  if (hi - lo < Math.log10(2.5)) {
    lo = Math.log10(step125(10 ** lo, Math.floor))
    hi = Math.log10(step125(10 ** hi, Math.ceil))
  }
  for (let decade = Math.floor(lo); decade <= Math.ceil(hi); decade++) {
    for (const m of [1, 2, 5]) {
      const value = decade + Math.log10(m)
      if (value >= lo && value <= hi) ticks.push({ value, label: tickMs(10 ** value) })
    }
  }
  return ticks.length >= 2
    ? ticks
    : [
        { value: lo, label: tickMs(10 ** lo) },
        { value: hi, label: tickMs(10 ** hi) },
      ]
}

/** A 1-2-5 tick reads as typed: "500 ms", "2 s", "0.5 ms", not "500.0 ms". */
function tickMs(ms: number): string {
  const short = (v: number): string => String(Number(v.toPrecision(3)))
  return ms >= 1000 ? `${short(ms / 1000)} s` : `${short(ms)} ms`
}

/** The nearest 1-2-5 step below (floor) or above (ceil) a positive value. */
function step125(v: number, round: (x: number) => number): number {
  const decade = 10 ** Math.floor(Math.log10(v))
  const steps = [1, 2, 5, 10].map((m) => m * decade)
  return round === Math.floor ? steps.filter((s) => s <= v * (1 + 1e-9)).pop()! : steps.find((s) => s >= v * (1 - 1e-9))!
}

/** A phase needs this many one-second points for a line over time to say anything. */
export const MIN_TIMELINE_POINTS = 2
/** Up to this many points, each is drawn as a dot (with its value on hover) as well as joined. */
const MARKED_UP_TO = 60

/**
 * The points a phase is drawn with over time: every 100 ms for a short phase
 * (timelineFine), else every second; `perSecond` turns a bucket's counts
 * into rates.
 */
function overTime(phase: PhaseResult): { points: TimelinePoint[]; perSecond: number } {
  const fine = phase.timelineFine
  const [points, bucketMs] = fine && fine.length > 0 ? [fine, FINE_BUCKET_MS] : [phase.timeline, 1000]
  return { points: withGaps(points, bucketMs, phase.durationMs), perSecond: 1000 / bucketMs }
}

/**
 * The timeline has a point only for the buckets in which a request ended; a
 * stall is the buckets in between. They come back here as points with no
 * request (0/s on the rate panels, a break in the latency lines), up to the
 * phase's end, so that a stall reads as one instead of a straight line
 * drawn across it.
 */
function withGaps(points: readonly TimelinePoint[], bucketMs: number, durationMs: number): TimelinePoint[] {
  const step = bucketMs / 1000
  const at = new Map(points.map((p) => [Math.round(p.t / step), p]))
  // Every recorded point keeps its place, even past the phase's own duration (a merged phase's spans the shards').
  const last = at.size > 0 ? Math.max(...at.keys()) : -1
  const buckets = Math.min(MAX_POINTS, Math.max(last + 1, Math.ceil(durationMs / bucketMs)))
  return Array.from({ length: buckets }, (_, i) => at.get(i) ?? { t: round3(i * step), requests: 0, errors: 0, p50Ms: 0, p99Ms: 0, hedges: 0, delayMs: null })
}

/**
 * Whether a bucket over time holds enough requests for its p-th percentile
 * to describe the traffic. A request is counted in the bucket in which it
 * ended, so when a phase stops sending, its last buckets hold the
 * stragglers: up to `inFlight` requests that started earlier, the slowest
 * over-represented (a request stalled 1 s is in flight a hundred times
 * longer than a 10 ms one), and the p50 of those few is ~1 s. Those
 * stragglers cannot move the percentile while they are fewer than the
 * n(1 - p) requests above it. A bucket holding at least half the phase's
 * typical (median) count is steady traffic, where the requests carried in
 * from the bucket before are balanced by those carried out to the next; the
 * half lets ordinary variation and a last partial bucket through. A bucket
 * in which no request ended has nothing to draw.
 */
export function holdsEnough(requests: number, pct: number, inFlight: number, typical: number): boolean {
  if (requests === 0) return false
  return requests >= typical / 2 || requests * (1 - pct / 100) > inFlight
}

/** The median requests of the buckets in which any request ended. */
function medianRequests(points: readonly TimelinePoint[]): number {
  const counts = points
    .map((p) => p.requests)
    .filter((n) => n > 0)
    .sort((a, b) => a - b)
  return counts.length === 0 ? 0 : counts[Math.floor(counts.length / 2)]!
}

/** Sources with enough points for the over-time charts; the others get a sentence (see html.ts). */
export function chartableOverTime(sources: ChartSource[]): { charted: ChartSource[]; tooShort: ChartSource[] } {
  return {
    charted: sources.filter((s) => overTime(s.phase).points.length >= MIN_TIMELINE_POINTS),
    tooShort: sources.filter((s) => overTime(s.phase).points.length < MIN_TIMELINE_POINTS),
  }
}

const marks = (src: ChartSource, unit: (y: number) => string): Series['markers'] =>
  overTime(src.phase).points.length <= MARKED_UP_TO ? { format: (x, y) => `at ${x} s: ${unit(y)}` } : undefined
const withMarks = (series: Series, m: Series['markers']): Series => (m ? { ...series, markers: m } : series)
const rate = (n: number): string => `${Math.round(n)}/s`

/** (3) p50 / p99 and requests/s of every source over time, x = seconds since its phase began. */
export function timelineSpec(sources: ChartSource[]): ChartSpec {
  const latency = sources.flatMap((src): Series[] => {
    const { points } = overTime(src.phase)
    const typical = medianRequests(points)
    const at =
      (pct: number, value: (p: TimelinePoint) => number) =>
      (p: TimelinePoint): Point => [p.t, holdsEnough(p.requests, pct, src.inFlight ?? 0, typical) ? value(p) : null]
    const p99 = withMarks({ id: `${src.name}:p99`, color: src.color, dashed: true, points: points.map(at(99, (p) => p.p99Ms)) }, marks(src, formatMs))
    // Several runs: the tail alone, in the phase's line style (p50 and p99 of every phase of every run were 12-18 lines).
    if (src.dash !== undefined) return [{ ...p99, dashed: false, dash: src.dash }]
    return [withMarks({ id: `${src.name}:p50`, color: src.color, points: points.map(at(50, (p) => p.p50Ms)) }, marks(src, formatMs)), p99]
  })
  const rps = sources.map((src): Series => {
    const { points, perSecond } = overTime(src.phase)
    return withMarks({ id: `${src.name}:rps`, color: src.color, dash: src.dash, points: points.map((p) => [p.t, p.requests * perSecond]) }, marks(src, rate))
  })
  // --load-schedule: the rate each second was asked for, as steps beside the rate answered; --concurrency-schedule: the requests in flight asked, a panel of its own.
  const asked = scheduleSeries(sources, 'rate', 'asked (--load-schedule)')
  const inFlight = scheduleSeries(sources, 'concurrency', 'in flight asked (--concurrency-schedule)')
  return {
    chart: 'timeline',
    title: 'Latency and throughput over time',
    xLabel: 'seconds since the phase started',
    x: 'seconds',
    xTicks: secondTicks(sources),
    panels: [
      { yLabel: 'latency (ms)', unit: 'ms', series: latency },
      { yLabel: 'requests/s', unit: 'rate', series: [...rps, ...asked] },
      ...(inFlight.length > 0 ? [{ yLabel: 'requests in flight (asked)', unit: 'number' as const, series: inFlight }] : []),
    ],
    xMarks: sources.flatMap(ejectionMarks),
  }
}

/** Each source's schedule (`field` of its seconds) as steps: each second's value from its start to the next one's, the last held to its end. */
function scheduleSeries(sources: ChartSource[], field: 'rate' | 'concurrency', what: string): Series[] {
  return sources.flatMap((src): Series[] => {
    const seconds = (src.phase.scheduleSeconds ?? []).filter((s) => s[field] !== undefined)
    const last = seconds[seconds.length - 1]
    if (!last) return []
    const points = [...seconds.map((s): Point => [s.t, s[field]!]), [last.t + 1, last[field]!] as Point]
    return [
      { id: `${src.name}:${field === 'rate' ? 'asked' : 'in-flight'}`, label: `${src.name}: ${what}`, color: src.color, dashed: true, step: true, points },
    ]
  })
}

/** When outlier detection took a replica out of rotation and let it back (issue 18), on the phase's own time axis. */
function ejectionMarks(src: ChartSource): XMark[] {
  return (src.phase.ejections ?? []).flatMap((e) => [
    { x: e.atMs / 1000, color: src.color, label: `${src.name}: ${e.url} ejected at ${formatMs(e.atMs)} (${ejectionCause(e)})` },
    ...(e.readmittedAtMs === null
      ? []
      : [{ x: e.readmittedAtMs / 1000, color: src.color, label: `${src.name}: ${e.url} readmitted at ${formatMs(e.readmittedAtMs)}` }]),
  ])
}

/** (4) Hedges sent per second and the hedge delay in use, for hedged sources. */
export function hedgesSpec(sources: ChartSource[]): ChartSpec {
  const hedged = sources.filter((src) => src.phase.hedging)
  const hedges = hedged.map((src): Series => {
    const { points, perSecond } = overTime(src.phase)
    return withMarks({ id: `${src.name}:hedges`, color: src.color, dash: src.dash, points: points.map((p) => [p.t, p.hedges * perSecond]) }, marks(src, rate))
  })
  const delay = hedged.map(
    (src): Series =>
      withMarks(
        { id: `${src.name}:delay`, color: src.color, dash: src.dash, points: overTime(src.phase).points.map((p) => [p.t, p.delayMs]) },
        marks(src, formatMs),
      ),
  )
  return {
    chart: 'hedges',
    title: 'Hedging over time',
    xLabel: 'seconds since the phase started',
    x: 'seconds',
    xTicks: secondTicks(hedged),
    panels: [
      { yLabel: 'hedges sent/s', unit: 'rate', series: hedges },
      { yLabel: 'hedge delay (ms)', unit: 'ms', series: delay },
    ],
  }
}

function secondTicks(sources: ChartSource[]): Tick[] {
  const last = Math.max(0.5, ...sources.flatMap((s) => overTime(s.phase).points.map((p) => p.t)))
  return niceTicks(0, last, 8, (v) => `${v}s`)
}

function round2(x: number): number {
  return Math.round(x * 100) / 100
}
