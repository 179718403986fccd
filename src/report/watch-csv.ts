/**
 * A watch's comparisons as CSV: compare's own columns (compare-csv.ts),
 * each row after a `compared` column naming the two segments ("start ->
 * flag on"), every segment pair and lane in one file with one header.
 */
import { stringify } from 'csv-stringify/sync'
import { CSV_SAFETY } from '../core/csv-safety.js'
import { renderCompareCsv } from './compare-csv.js'
import type { SegmentComparison } from './watch-compare.js'

export function renderWatchCsv(comparisons: SegmentComparison[]): string {
  const header = `${stringify([['compared']], { record_delimiter: 'unix', ...CSV_SAFETY }).trimEnd()},${renderCompareCsv({ kind: 'runs', runs: [], configDifferences: [], metrics: [], warnings: [] }).trimEnd()}`
  const rows = comparisons.flatMap((c) => {
    const cell = stringify([[`${c.before} -> ${c.after}`]], { record_delimiter: 'unix', ...CSV_SAFETY }).trimEnd()
    return renderCompareCsv(c.comparison)
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((line) => `${cell},${line}`)
  })
  return `${[header, ...rows].join('\n')}\n`
}
