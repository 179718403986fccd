/**
 * `hedgebench compare -o csv`: one row per metric × run, ready for a
 * spreadsheet. The baseline's change columns are empty; numbers are raw
 * (milliseconds, requests, percent, req/s as named in `unit`). `note` says
 * why a verdict is "not enough requests" (n = 50 for p99.9; needs 3688).
 */
import { stringify } from 'csv-stringify/sync'
import { CSV_SAFETY } from '../core/csv-safety.js'
import type { Comparison } from './compare.js'

export const COMPARE_CSV_COLUMNS = [
  'metric',
  'unit',
  'run',
  'phase',
  'value',
  'change',
  'change_pct',
  'interval_low',
  'interval_high',
  'verdict',
  'method',
  'note',
] as const

export function renderCompareCsv(c: Comparison): string {
  const rows = c.metrics.flatMap((m) =>
    c.runs.map((run, i) => {
      const ch = m.changes[i] ?? null
      return [
        m.metric,
        m.unit,
        run.name,
        run.phase,
        m.values[i] ?? '',
        ch?.abs ?? '',
        ch?.pct ?? '',
        ch?.interval?.[0] ?? '',
        ch?.interval?.[1] ?? '',
        ch?.verdict ?? '',
        m.method,
        ch?.note ?? '',
      ]
    }),
  )
  return stringify(rows, { header: true, columns: [...COMPARE_CSV_COLUMNS], record_delimiter: 'unix', ...CSV_SAFETY })
}
