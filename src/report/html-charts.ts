/**
 * The HTML report's four charts, built from phases of one or more runs:
 * percentile distribution, response-time histogram, latency over time and
 * hedging over time. Each phase is a "source" with a display name that
 * prefixes its series ids ("hedged:p99", "after.json/plain:p50").
 */
import { percentileMs, tryDecodeHistogram, type Histogram } from '../stats/histogram.js'
import { formatMs } from '../core/duration.js'
import type { PhaseResult } from '../results/run-result.js'
import { niceTicks, renderChart, type Point, type Series, type Tick } from './svg-chart.js'

export interface ChartSource {
  /** Series id prefix: the phase name, or "run/phase" when several runs are drawn. */
  name: string
  phase: PhaseResult
  /** The same in every chart, so a phase is recognised at a glance. */
  color: string
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

/** (1) Latency by percentile, every source overlaid on the log "1/(1-p)" axis. */
export function percentileChart(sources: ChartSource[]): string {
  const series = sources.map((src): Series => ({ id: `${src.name}:percentiles`, label: src.name, color: src.color, points: percentilePoints(tryDecodeHistogram(src.phase.histogram)) }))
  const reach = Math.max(4, ...series.map((s) => s.points[s.points.length - 1]?.[0] ?? 0))
  const ticks = reach > 4 ? [...PERCENTILE_TICKS, { value: MAX_X, label: '99.999%' }] : PERCENTILE_TICKS
  return renderChart({ chart: 'percentiles', title: 'Latency by percentile', xLabel: 'percentile (log scale of 1/(1-p))', xTicks: ticks, panels: [{ yLabel: 'latency (ms)', series }] })
}

function percentilePoints(h: Histogram | null): Point[] {
  if (!h || h.totalCount === 0) return []
  // Beyond 1 - 1/n the histogram has nothing more to say.
  const last = Math.min(MAX_X, Math.log10(h.totalCount))
  const points: Point[] = []
  for (let x = 0; x < last; x += X_STEP) points.push([x, percentileMs(h, 100 * (1 - 10 ** -x))])
  points.push([last, percentileMs(h, 100 * (1 - 10 ** -last))])
  return points
}

const HISTOGRAM_BINS = 48
const QUANTILE_SAMPLES = 2000

/** (2) Share of requests per response-time bin; bins are log-spaced so a 1 s stall and a 5 ms body both show. */
export function histogramChart(sources: ChartSource[]): string {
  const histograms = sources.map((s) => tryDecodeHistogram(s.phase.histogram))
  const present = histograms.filter((h): h is Histogram => h !== null && h.totalCount > 0)
  const lo = Math.log10(Math.max(0.001, Math.min(...present.map((h) => percentileMs(h, 0)), Infinity)))
  const hi = Math.log10(Math.max(0.001, ...present.map((h) => percentileMs(h, 100))))
  const edges = binEdges(Number.isFinite(lo) ? lo : 0, hi)
  const series = sources.map((src, i): Series => ({ id: `${src.name}:histogram`, label: src.name, color: src.color, step: true, points: binShares(histograms[i] ?? null, edges) }))
  return renderChart({ chart: 'histogram', title: 'Response-time histogram', xLabel: 'latency (log scale)', xTicks: logMsTicks(edges[0]!, edges[edges.length - 1]!), panels: [{ yLabel: 'share of requests (%)', series }] })
}

/** Bin edges in log10(ms). */
function binEdges(lo: number, hi: number): number[] {
  const top = hi > lo ? hi + (hi - lo) * 1e-9 : lo + 1
  return Array.from({ length: HISTOGRAM_BINS + 1 }, (_, i) => lo + ((top - lo) * i) / HISTOGRAM_BINS)
}

/**
 * The public histogram API only answers "value at percentile"; reading 2000
 * evenly spaced percentiles, each worth 1/2000 of the requests, gives each
 * bin's share to within 0.05 %.
 */
function binShares(h: Histogram | null, edges: number[]): Point[] {
  if (!h || h.totalCount === 0) return []
  const shares = new Array<number>(HISTOGRAM_BINS).fill(0)
  const lo = edges[0]!
  const width = (edges[HISTOGRAM_BINS]! - lo) / HISTOGRAM_BINS
  for (let i = 0; i < QUANTILE_SAMPLES; i++) {
    const v = Math.log10(Math.max(0.001, percentileMs(h, (100 * (i + 0.5)) / QUANTILE_SAMPLES)))
    const bin = Math.min(HISTOGRAM_BINS - 1, Math.max(0, Math.floor((v - lo) / width)))
    shares[bin]! += 100 / QUANTILE_SAMPLES
  }
  const points: Point[] = shares.map((share, i) => [edges[i]!, round2(share)])
  points.push([edges[HISTOGRAM_BINS]!, round2(shares[HISTOGRAM_BINS - 1]!)])
  return points
}

/** Ticks at 1-2-5 steps of milliseconds, placed on a log10(ms) axis. */
function logMsTicks(lo: number, hi: number): Tick[] {
  const ticks: Tick[] = []
  for (let decade = Math.floor(lo); decade <= Math.ceil(hi); decade++) {
    for (const m of [1, 2, 5]) {
      const value = decade + Math.log10(m)
      if (value >= lo && value <= hi) ticks.push({ value, label: formatMs(10 ** value) })
    }
  }
  return ticks.length >= 2 ? ticks : [{ value: lo, label: formatMs(10 ** lo) }, { value: hi, label: formatMs(10 ** hi) }]
}

/** (3) Per-second p50 / p99 and requests/s of every source, x = seconds since its phase began. */
export function timelineChart(sources: ChartSource[]): string {
  const latency = sources.flatMap((src): Series[] => [
    { id: `${src.name}:p50`, color: src.color, points: src.phase.timeline.map((p) => [p.t, p.p50Ms]) },
    { id: `${src.name}:p99`, color: src.color, dashed: true, points: src.phase.timeline.map((p) => [p.t, p.p99Ms]) },
  ])
  const rps = sources.map((src): Series => ({ id: `${src.name}:rps`, color: src.color, points: src.phase.timeline.map((p) => [p.t, p.requests]) }))
  return renderChart({
    chart: 'timeline',
    title: 'Latency and throughput over time',
    xLabel: 'seconds since the phase started',
    xTicks: secondTicks(sources),
    panels: [{ yLabel: 'latency (ms)', series: latency }, { yLabel: 'requests/s', series: rps }],
  })
}

/** (4) Hedges sent per second and the hedge delay in use, for hedged sources. */
export function hedgesChart(sources: ChartSource[]): string {
  const hedged = sources.filter((src) => src.phase.hedging)
  const hedges = hedged.map((src): Series => ({ id: `${src.name}:hedges`, color: src.color, points: src.phase.timeline.map((p) => [p.t, p.hedges]) }))
  const delay = hedged.map((src): Series => ({ id: `${src.name}:delay`, color: src.color, points: src.phase.timeline.map((p) => [p.t, p.delayMs]) }))
  return renderChart({
    chart: 'hedges',
    title: 'Hedging over time',
    xLabel: 'seconds since the phase started',
    xTicks: secondTicks(hedged),
    panels: [{ yLabel: 'hedges sent/s', series: hedges }, { yLabel: 'hedge delay (ms)', series: delay }],
  })
}

function secondTicks(sources: ChartSource[]): Tick[] {
  const last = Math.max(1, ...sources.flatMap((s) => s.phase.timeline.map((p) => p.t)))
  return niceTicks(0, last, 8, (v) => `${v}s`)
}

function round2(x: number): number {
  return Math.round(x * 100) / 100
}
