/**
 * hey's "Details" section in the text report: where the time of completed
 * attempts went (p50, p99, max), so a slow network (connection setup,
 * request write, response read) is told apart from a slow server (wait for
 * the response). In a hedged phase, one block per attempt number.
 */
import { formatMs } from '../core/duration.js'
import type { AttemptDetails, StageSummary } from '../results/run-result.js'

const LABELS: Array<[keyof Omit<AttemptDetails, 'attempt'>, string]> = [
  ['connect', 'conn setup'],
  ['write', 'req write'],
  ['wait', 'resp wait'],
  ['read', 'resp read'],
]

export function detailsText(details: AttemptDetails[], hedged: boolean): string[] {
  const lines = ['Details (p50, p99, max of completed attempts):']
  for (const d of details) {
    const indent = hedged ? '    ' : '  '
    if (hedged) lines.push(`  ${d.attempt === 0 ? 'original' : `hedge ${d.attempt}`} (${d.write.count} completed)`)
    for (const [key, label] of LABELS) lines.push(`${indent}${`${label}:`.padEnd(12)}${stageText(key, d[key])}`)
  }
  return lines
}

function stageText(key: string, s: StageSummary): string {
  if (s.count === 0) return key === 'connect' ? '- (every attempt reused an open connection)' : '-'
  const figures = `${formatMs(s.p50)}, ${formatMs(s.p99)}, ${formatMs(s.max)}`
  return key === 'connect' ? `${figures} (${s.count} opened a connection)` : figures
}
