/**
 * The sweep as one self-contained HTML page: the frontier chart (extra load
 * across, the hedged phase's p99 up, one point per setting), the table and
 * the recommendation, all decided in sweep-frontier.ts. Built on the run
 * report's chart and page primitives, so it keeps the same CSP.
 */
import { formatMs } from '../core/duration.js'
import { escapeHtml } from './escape.js'
import { page, table } from './html.js'
import { niceTicks, PALETTE, renderChart, type Series } from './svg-chart.js'
import type { SweepFrontier } from './sweep-frontier.js'
import { countFigure, msFigure, pctFigure } from './sweep-text.js'
import type { SweepResult } from '../results/sweep-result.js'

export function renderSweepHtml(sweep: SweepResult, frontier: SweepFrontier): string {
  const title = `hedgebench sweep: ${sweep.settings.length} settings${sweep.partial ? ' (interrupted)' : ''}`
  const body = [
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="verdict">${escapeHtml(frontier.recommendation.sentence)}</p>`,
    frontier.rows.length > 0 ? `<figure>${frontierChart(frontier)}</figure>` : '<p>No setting finished: nothing to chart.</p>',
    frontierTable(frontier),
    sweep.warnings.length > 0 ? `<h2>Warnings</h2><ul>${sweep.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul>` : '',
  ]
  return page(title, body.filter((b) => b !== '').join('\n'))
}

/** Each setting a point (its own series, so the legend names it); the frontier's points joined by a line. */
function frontierChart(frontier: SweepFrontier): string {
  const tip = (x: number, y: number) => `${x.toFixed(1)} % extra, p99 ${formatMs(y)}`
  const points: Series[] = frontier.rows.map((r, i) => ({
    id: `setting:${r.label}`,
    label: `${r.label}${r.label === frontier.recommendation.label ? ' (recommended)' : ''}`,
    points: [[r.extraLoadPct.value, r.p99.value]],
    color: PALETTE[i % PALETTE.length]!,
    markers: { format: tip },
    noLine: true,
  }))
  const onFrontier = frontier.rows.filter((r) => r.onFrontier).sort((a, b) => a.extraLoadPct.value - b.extraLoadPct.value)
  const line: Series[] = onFrontier.length > 1 ? [{ id: 'frontier:p99', label: 'frontier', points: onFrontier.map((r) => [r.extraLoadPct.value, r.p99.value]), color: '#888', dash: '4 3' }] : []
  return renderChart({
    chart: 'sweep-frontier',
    title: 'Tail against cost: hedged p99 by extra load (hedges sent per request)',
    xLabel: 'extra load, %',
    // From 0: no extra load is where hedging is off, the point every setting is weighed against.
    xTicks: niceTicks(0, Math.max(...frontier.rows.map((r) => r.extraLoadPct.value), 1)),
    panels: [{ yLabel: 'p99, ms', series: [...line, ...points] }],
  })
}

function frontierTable(frontier: SweepFrontier): string {
  const header = ['setting', 'delay', 'from', 'attempts', 'budget', 'p50', 'p99', 'p99.9', 'slow', 'extra load', 'errors', 'verdict', 'frontier']
  const plain = frontier.plain
  const rows = [
    ['no hedging', '', 'plain lane', '1', '', msFigure(plain.p50), msFigure(plain.p99), msFigure(plain['p99.9']), countFigure(plain.slow), pctFigure(plain.extraLoadPct), countFigure(plain.errors), '', ''],
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
      countFigure(r.errors),
      r.decision,
      r.onFrontier ? 'yes' : '',
    ]),
  ]
  return `<h2>Settings</h2>\n${table(header, rows, 'Latency is of each lane; extra load is hedges sent per request; [low, high] is the 95 % interval. On the frontier: neither the plain lane nor another setting is clearly better on tail or extra load without being clearly worse on either.')}`
}
