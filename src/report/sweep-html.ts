/**
 * The sweep as one self-contained HTML page: the frontier chart (extra load
 * across, the p99 up; the plain lane and each setting a point, with its 95 %
 * intervals as whiskers), the table and the recommendation, all decided in
 * sweep-frontier.ts. Built on the run report's chart and page primitives, so
 * it keeps the same CSP.
 */
import { formatMs } from '../core/duration.js'
import { escapeHtml } from './escape.js'
import { page, table } from './html.js'
import { niceTicks, PALETTE, renderChart, type Point, type Series } from './svg-chart.js'
import type { LaneFigures, SweepFrontier } from './sweep-frontier.js'
import { countFigure, msFigure, pctFigure, SERVER_WORK_LEGEND, showsServerWork, sweepTitle } from './sweep-text.js'
import type { SweepResult } from '../results/sweep-result.js'

export function renderSweepHtml(sweep: SweepResult, frontier: SweepFrontier): string {
  const title = `${sweepTitle(sweep, 'hedgebench sweep')}: ${sweep.settings.length} settings${sweep.partial ? ' (interrupted)' : ''}`
  const body = [
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="verdict">${escapeHtml(frontier.recommendation.sentence)}</p>`,
    frontier.rows.length > 0 ? `<figure>${frontierChart(frontier)}</figure>` : '<p>No setting finished: nothing to chart.</p>',
    frontier.rows.length > 0 ? frontierTable(frontier, showsServerWork(sweep)) : '',
    sweep.warnings.length > 0 ? `<h2>Warnings</h2><ul>${sweep.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul>` : '',
  ]
  return page(title, body.filter((b) => b !== '').join('\n'))
}

interface ChartPoint {
  id: string
  label: string
  lane: LaneFigures
}

/** Each lane a point (its own series, so the legend names it) with a whisker per interval; the frontier's points joined by a dashed line. */
function frontierChart(frontier: SweepFrontier): string {
  const points: ChartPoint[] = [
    { id: 'plain', label: 'plain (no hedging)', lane: frontier.plain },
    ...frontier.rows.map((r) => ({
      id: `setting:${r.label}`,
      label: `${r.label}${r.label === frontier.recommendation.label ? ' (recommended)' : ''}`,
      lane: r,
    })),
  ]
  const series = points.flatMap((p, i) => lanePoint(p, PALETTE[i % PALETTE.length]!))
  const onFrontier = frontier.rows.filter((r) => r.onFrontier).sort((a, b) => a.extraLoadPct.value - b.extraLoadPct.value)
  const line: Series[] =
    onFrontier.length > 1
      ? [{ id: 'frontier:p99', label: 'frontier', points: onFrontier.map((r) => [r.extraLoadPct.value, r.p99.value]), color: '#888', dash: '4 3' }]
      : []
  const xMax = Math.max(1, ...points.map((p) => p.lane.extraLoadPct.interval?.[1] ?? p.lane.extraLoadPct.value))
  return renderChart({
    chart: 'sweep-frontier',
    title: 'Tail against cost: p99 by extra load (hedges sent per request), 95 % intervals',
    xLabel: 'extra load, %',
    // From 0: no extra load is where hedging is off, the point every setting is weighed against.
    xTicks: niceTicks(0, xMax),
    panels: [{ yLabel: 'p99, ms', series: [...line, ...series] }],
  })
}

/**
 * The point with its tooltip (markers only), and one line series that names
 * the lane in the legend: its p99 interval as a vertical whisker and its
 * extra load's as a horizontal one (a null y lifts the pen between them).
 */
function lanePoint(p: ChartPoint, color: string): Series[] {
  const x = p.lane.extraLoadPct
  const y = p.lane.p99
  const whiskers: Point[] = [
    ...(y.interval
      ? ([
          [x.value, y.interval[0]],
          [x.value, y.interval[1]],
        ] as Point[])
      : ([[x.value, y.value]] as Point[])),
    ...(x.interval
      ? ([
          [x.value, null],
          [x.interval[0], y.value],
          [x.interval[1], y.value],
        ] as Point[])
      : []),
  ]
  return [
    { id: `${p.id}:intervals`, label: p.label, points: whiskers, color },
    { id: p.id, label: p.label, points: [[x.value, y.value]], color, noLine: true, markers: { format: () => `${pctFigure(x)} extra, p99 ${msFigure(y)}` } },
  ]
}

function frontierTable(frontier: SweepFrontier, server: boolean): string {
  const header = [
    'setting',
    'delay',
    'from',
    'attempts',
    'budget',
    'p50',
    'p99',
    'p99.9',
    'slow',
    'extra load',
    ...(server ? ['server work'] : []),
    'errors',
    'verdict',
    'frontier',
  ]
  const work = (f: LaneFigures): string[] => (server ? [f.serverWorkPct ? pctFigure(f.serverWorkPct) : '-'] : [])
  const plain = frontier.plain
  const rows = [
    [
      'no hedging',
      '',
      'plain lane',
      '1',
      '',
      msFigure(plain.p50),
      msFigure(plain.p99),
      msFigure(plain['p99.9']),
      countFigure(plain.slow),
      pctFigure(plain.extraLoadPct),
      ...work(plain),
      countFigure(plain.errors),
      '',
      '',
    ],
    ...frontier.rows.map((r) => [
      r.label,
      formatMs(r.delayMs),
      r.percentile === null ? 'fixed' : `warm-up p${r.percentile}`,
      String(r.maxAttempts),
      r.budgetPct === null ? 'off' : `${r.budgetPct} %`,
      msFigure(r.p50),
      msFigure(r.p99),
      msFigure(r['p99.9']),
      countFigure(r.slow),
      pctFigure(r.extraLoadPct),
      ...work(r),
      countFigure(r.errors),
      r.decision,
      r.onFrontier ? 'yes' : '',
    ]),
  ]
  const caption = `Latency is of each lane; extra load is hedges sent per request; [low, high] is the 95 % interval. On the frontier: neither the plain lane nor another setting is clearly better on tail or extra load without being clearly worse on either.${server ? ` ${SERVER_WORK_LEGEND}` : ''}`
  return `<h2>Settings</h2>\n${table(header, rows, caption)}`
}
