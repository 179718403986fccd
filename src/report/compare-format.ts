/**
 * How compare's numbers read, shared by the text and HTML renderers so a
 * figure looks the same in both.
 */
import { formatMs } from '../core/duration.js'
import type { Interval, MetricChange, MetricRow, MetricUnit } from './compare.js'

/** A run's value of a metric: "14.8 ms", "12 requests", "0.25 %", "812.4 req/s". */
export function formatValue(value: number | null, unit: MetricUnit): string {
  if (value === null) return '-'
  switch (unit) {
    case 'ms':
      return formatMs(value)
    case 'requests':
      return String(Math.round(value))
    case '%':
      return `${value.toFixed(2)} %`
    case 'req/s':
      return `${value.toFixed(1)} req/s`
  }
}

/** A signed difference: "+2.20 ms", "-3 requests", "+0.10 %" (also the ends of a --fail-if gate's interval). */
export function formatDelta(delta: number, unit: MetricUnit): string {
  const sign = delta > 0 ? '+' : delta < 0 ? '-' : '±'
  return `${sign}${formatValue(Math.abs(delta), unit)}`
}

/** "+2.20 ms (+21.8 %)". */
export function formatChange(change: MetricChange | null, unit: MetricUnit): string {
  if (!change) return ''
  const pct = change.pct === null ? '' : ` (${change.pct > 0 ? '+' : ''}${change.pct.toFixed(1)} %)`
  return `${formatDelta(change.abs, unit)}${pct}`
}

/** "[+1.90 ms, +2.50 ms]", or "-" when no interval exists. */
function formatInterval(interval: Interval | null, unit: MetricUnit): string {
  return interval ? `[${formatDelta(interval[0], unit)}, ${formatDelta(interval[1], unit)}]` : '-'
}

/** One row of the comparison table: metric, each run's value, then change, interval and verdict against the first run. */
export function metricCells(m: MetricRow): string[] {
  const values = m.values.map((v) => formatValue(v, m.unit))
  const changes = m.changes.slice(1).flatMap((ch) => [formatChange(ch, m.unit), ch ? formatInterval(ch.interval, m.unit) : '', verdictText(ch)])
  return [m.metric, ...values, ...changes]
}

/** "worse", or "not enough requests (n = 50 for p99.9; needs 7130)". */
function verdictText(ch: MetricChange | null): string {
  if (!ch) return '-'
  return ch.note ? `${ch.verdict} (${ch.note})` : ch.verdict
}
