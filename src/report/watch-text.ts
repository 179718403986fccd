/**
 * A watch as text: the verdict at each mark, each segment's figures per lane, the changes found
 * without a mark, each segment against the one before it (compare's own
 * text, compare-text.ts) and the --fail-if gates on the last segment
 * against the first.
 */
import { formatMs } from '../core/duration.js'
import { WATCH_LANES, windowSeconds, type SegmentLane, type WatchResult } from '../results/watch-result.js'
import { decodeHistogram, percentileMs } from '../stats/histogram.js'
import { extraLoadPctOf } from '../results/extra-load.js'
import { renderCompareText } from './compare-text.js'
import { formatTable } from './table.js'
import type { SegmentComparison, WatchGates } from './watch-compare.js'
import { changeLine } from '../stats/change-points.js'

export function renderWatchText(watch: WatchResult, comparisons: SegmentComparison[], gates: WatchGates, opts: { color: boolean; width?: number }): string {
  if (watch.segments.length === 0) return `hedgebench watch: ${NOTHING_MEASURED}\n`
  const seconds = watch.segments.length > 0 ? watch.segments[watch.segments.length - 1]!.toS : 0
  const head = `hedgebench watch: ${watch.urls.length} URL${watch.urls.length === 1 ? '' : 's'} at ${watch.rate} requests/s, ${seconds} s, ${watch.segments.length} segment${watch.segments.length === 1 ? '' : 's'}${watch.partial ? ' (stopped by an interruption)' : ''}`
  const rows = [SEGMENT_COLUMNS, ...segmentRows(watch)]
  const verdicts = markVerdicts(comparisons)
  const changes = watch.changes.length > 0 ? watch.changes.map((c) => changeLine(c, c.lane)) : ['none found']
  const compared = comparisons.map(
    (c) =>
      `${c.before} -> ${c.after}, ${c.lane} lane\n\n${renderCompareText(c.comparison, { color: opts.color, ...(opts.width ? { width: opts.width } : {}) }).trimEnd()}`,
  )
  return `${[
    head,
    verdicts.length > 0 ? `At the marks:\n${verdicts.map((l) => `  ${l}`).join('\n')}` : '',
    formatTable(rows, ['left', 'right', 'left']).join('\n'),
    `Changes without a mark:\n${changes.map((l) => `  ${l}`).join('\n')}`,
    ...compared,
    gatesText(gates),
  ]
    .filter((s) => s !== '')
    .join('\n\n')}\n`
}

/**
 * The verdict at each mark, one line before the long tables, the p99 of
 * each lane against the segment before: 'at "slow-b": plain p99 2.29 ms ->
 * 860.7 ms, worse; hedged p99 2.12 ms -> 860.7 ms, worse'.
 */
export function markVerdicts(comparisons: readonly SegmentComparison[]): string[] {
  const byMark = new Map<string, string[]>()
  for (const c of comparisons) {
    const p99 = c.comparison.metrics.find((m) => m.metric === 'p99')
    const verdict = p99?.changes[1]?.verdict
    if (!p99 || !verdict) continue
    const [before, after] = p99.values.map((v) => (v === null ? '-' : formatMs(v)))
    byMark.set(c.after, [...(byMark.get(c.after) ?? []), `${c.lane} p99 ${before} -> ${after}, ${verdict}`])
  }
  return [...byMark].map(([mark, lanes]) => `at "${mark}": ${lanes.join('; ')}`)
}

/** A watch stopped before its measured window (Ctrl-C in the warm-up): no segment, nothing to judge, said in one line. */
export const NOTHING_MEASURED = 'stopped during the warm-up: no traffic was measured yet (no segment to judge)'

/** The segments table's header and rows, text and HTML alike. */
export const SEGMENT_COLUMNS = ['segment', 'seconds', 'lane', 'requests', 'p50', 'p99', 'slow', 'errors', 'extra load', 'delay']

export function segmentRows(watch: WatchResult): string[][] {
  return watch.segments.flatMap((s) =>
    WATCH_LANES.map((lane) => [s.name, `${windowSeconds(s.fromS)}-${windowSeconds(s.toS)}`, lane, ...laneCells(s.lanes[lane])]),
  )
}

/** A segment's lane in a table row: requests, p50, p99, slow, errors, extra load, delay. */
export function laneCells(l: SegmentLane): string[] {
  const h = decodeHistogram(l.histogram)
  const none = l.requests === 0
  return [
    String(l.requests),
    none ? '-' : formatMs(percentileMs(h, 50)),
    none ? '-' : formatMs(percentileMs(h, 99)),
    String(l.slow),
    String(l.errors),
    l.hedges > 0 || l.delaySeconds > 0 ? `${extraLoadPctOf(l.hedges, l.requests).toFixed(1)}%` : '-',
    l.delaySeconds > 0 ? formatMs(l.delaySumMs / l.delaySeconds) : '-',
  ]
}

function gatesText(gates: WatchGates): string {
  if (gates.checks.length === 0) return ''
  if (!gates.segments) return '--fail-if: one segment only: nothing to compare the last segment with'
  const lines = gates.checks.map((c) => {
    const why = c.unchecked.length > 0 ? ` (not checked: ${c.unchecked.map((u) => u.why).join('; ')})` : ''
    return `  ${c.holds ? 'FAIL' : 'ok  '} ${c.condition.text}${c.holds ? `: ${c.observed.join('; ')}` : ''}${why}`
  })
  return `--fail-if, ${gates.segments.last} against ${gates.segments.first}:\n${lines.join('\n')}`
}
