/**
 * A watch as an HTML page: the report's own charts over time (html-charts.ts
 * timelineSpec and hedgesSpec, of the whole window's plain and hedged lanes)
 * with every mark and every change found drawn across them, the segments
 * table, the verdict at each mark, and each segment against the one before
 * it as compare's table (html-answer.ts).
 */
import { windowSeconds, type FinishedWatch } from '../results/watch-result.js'
import { changeLine } from '../stats/change-points.js'
import { escapeHtml } from './escape.js'
import { comparisonBlock } from './html-answer.js'
import { hedgesSpec, timelineSpec, type ChartSource } from './html-charts.js'
import { page, table } from './html.js'
import { PALETTE, renderChart, type ChartSpec, type XMark } from './svg-chart.js'
import type { SegmentComparison, WatchGates } from './watch-compare.js'
import { markVerdicts, SEGMENT_COLUMNS, segmentRows } from './watch-text.js'

const MARK_COLOR = '#222'
const CHANGE_COLOR = '#c62828'

export function renderWatchHtml(watch: FinishedWatch, comparisons: SegmentComparison[], gates: WatchGates): string {
  const title = `hedgebench watch: ${watch.label}`
  const sources: ChartSource[] = (['plain', 'hedged'] as const).flatMap((lane, i) => {
    const phase = watch.run.phases[lane]
    return phase ? [{ name: lane, phase, color: PALETTE[i]!, inFlight: watch.run.config.concurrency }] : []
  })
  const marks: XMark[] = [
    ...watch.marks.map((m) => ({ x: m.atS, label: `mark "${m.name}" at ${windowSeconds(m.atS)} s (${m.source})`, color: MARK_COLOR })),
    ...watch.changes.map((c) => ({ x: c.atS, label: changeLine(c, c.lane), color: CHANGE_COLOR })),
  ]
  const charts: ChartSpec[] = []
  const figure = (spec: ChartSpec): string => {
    const marked = { ...spec, xMarks: [...(spec.xMarks ?? []), ...marks] }
    charts.push(marked)
    return `<figure data-live="${charts.length - 1}">${renderChart(marked)}</figure>`
  }
  const overTime = sources.length > 0 ? figure(timelineSpec(sources)) + figure(hedgesSpec(sources)) : '<p>Nothing was measured.</p>'
  // Tables, not compare's text: its lines with the intervals ran past 1400 px and hid the verdict.
  const compared = comparisons.map((c) => `<h3>${escapeHtml(`${c.before} -> ${c.after}, ${c.lane} lane`)}</h3>\n${comparisonBlock(c.comparison)}`)
  const verdicts = markVerdicts(comparisons)
  const gateLines = gates.segments
    ? `<h2>--fail-if, ${escapeHtml(gates.segments.last)} against ${escapeHtml(gates.segments.first)}</h2>\n<ul>${gates.checks
        .map((c) => `<li>${c.holds ? 'FAIL' : 'ok'}: ${escapeHtml(c.condition.text)}${c.holds ? escapeHtml(`: ${c.observed.join('; ')}`) : ''}</li>`)
        .join('')}</ul>`
    : ''
  const body = [
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="note">${escapeHtml(`${watch.urls.join(', ')} at ${watch.rate} requests/s; marks in black, changes found without a mark in red.`)}</p>`,
    `<section><h2>Over time</h2>\n${overTime}\n</section>`,
    verdicts.length > 0 ? `<section><h2>At the marks</h2>\n<ul>${verdicts.map((v) => `<li>${escapeHtml(v)}</li>`).join('')}</ul>\n</section>` : '',
    `<section><h2>Segments</h2>\n${table(SEGMENT_COLUMNS, segmentRows(watch))}\n</section>`,
    `<section><h2>Changes without a mark</h2>\n<ul>${watch.changes.map((c) => `<li>${escapeHtml(changeLine(c, c.lane))}</li>`).join('') || '<li>none found</li>'}</ul>\n</section>`,
    compared.length > 0 ? `<section><h2>Each segment against the one before</h2>\n${compared.join('\n')}\n</section>` : '',
    gateLines,
  ]
  return page(title, body.filter((b) => b !== '').join('\n'), charts)
}
