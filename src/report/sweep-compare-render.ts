/**
 * A comparison of two sweeps (sweep-compare.ts) as text, CSV and JSON: per
 * lane, the metrics that moved beyond noise, each with its direction in
 * words and a sign (never by colour alone).
 */
import { stringify } from 'csv-stringify/sync'
import { CSV_SAFETY } from '../core/csv-safety.js'
import type { MetricRow } from './compare.js'
import { formatChange, formatValue } from './compare-format.js'
import type { SweepComparison } from './sweep-compare.js'
import { escapeHtml } from './escape.js'
import { page, table } from './html.js'

/** What moved in one lane: "p99 12.1 ms -> 9.80 ms, -2.30 ms (-19.0 %), better". */
export function movedMetrics(metrics: MetricRow[]): string[] {
  return metrics.flatMap((m) => {
    const ch = m.changes[1]
    if (!ch || (ch.verdict !== 'better' && ch.verdict !== 'worse')) return []
    return [
      `${m.metric} ${formatValue(m.values[0] ?? null, m.unit)} -> ${formatValue(m.values[1] ?? null, m.unit)}, ${formatChange(ch, m.unit)}, ${ch.verdict}`,
    ]
  })
}

export function renderSweepCompareText(c: SweepComparison): string {
  const [a, b] = c.names
  const width = Math.max(...c.lanes.map((l) => l.lane.length))
  const lines = c.lanes.map((l) => {
    const moved = movedMetrics(l.comparison.metrics)
    return `  ${l.lane.padEnd(width)}  ${moved.length === 0 ? 'nothing moved beyond noise' : moved.join('; ')}`
  })
  const warnings = [...new Set(c.lanes.flatMap((l) => l.comparison.warnings))].map((w) => `  warning: ${w}`)
  return `${[`Comparing two sweeps lane by lane: ${b} against ${a} (95 % intervals; only what moved beyond noise)`, ...lines, ...warnings].join('\n')}\n`
}

export function renderSweepCompareJson(c: SweepComparison): string {
  return `${JSON.stringify(c, null, 2)}\n`
}

/** One row per lane × metric, the second sweep (`second`) against the first. */
export function renderSweepCompareCsv(c: SweepComparison): string {
  const rows = c.lanes.flatMap((l) =>
    l.comparison.metrics.map((m) => {
      const ch = m.changes[1] ?? null
      return [
        l.lane,
        m.metric,
        m.unit,
        m.values[0] ?? '',
        m.values[1] ?? '',
        ch?.abs ?? '',
        ch?.pct ?? '',
        ch?.interval?.[0] ?? '',
        ch?.interval?.[1] ?? '',
        ch?.verdict ?? '',
      ]
    }),
  )
  const columns = ['lane', 'metric', 'unit', 'first', 'second', 'change', 'change_pct', 'interval_low', 'interval_high', 'verdict']
  return stringify(rows, { header: true, columns, record_delimiter: 'unix', ...CSV_SAFETY })
}

/** The same as a page: one row per lane, what moved in words. */
export function renderSweepCompareHtml(c: SweepComparison): string {
  const [a, b] = c.names
  const title = `hedgebench: sweep ${a} vs ${b}`
  const rows = c.lanes.map((l) => {
    const moved = movedMetrics(l.comparison.metrics)
    return [l.lane, moved.length === 0 ? 'nothing moved beyond noise' : moved.join('; ')]
  })
  const caption = `${b} against ${a}, lane by lane: the metrics whose change is beyond noise (95 % intervals)`
  return page(title, `<h1>${escapeHtml(title)}</h1>\n${table(['lane', 'what moved'], rows, caption)}`)
}
