/** The sweep as text: the frontier table, then the recommendation (both decided in sweep-frontier.ts). */
import { formatMs, formatThreshold } from '../core/duration.js'
import type { SweepFrontier } from './sweep-frontier.js'
import type { SweepResult } from '../results/sweep-result.js'
import { formatTable } from './table.js'

export function renderSweepText(sweep: SweepResult, frontier: SweepFrontier): string {
  const lines: string[] = []
  const finished = sweep.partial ? `, interrupted: ${sweep.settings.length} of ${sweep.planned} settings finished` : ''
  lines.push(`Hedge delay sweep: ${sweep.settings.length} setting${sweep.settings.length === 1 ? '' : 's'}, each a plain and a hedged phase, interleaved${finished}`)
  const threshold = frontier.rows[0]?.slow.thresholdMs
  const header = ['', 'delay', 'from', 'p50', 'p99', 'p99.9', threshold === undefined ? 'slow' : `> ${formatThreshold(threshold)}`, 'extra load', 'errors', 'verdict']
  const body = frontier.rows.map((r) => [
    r.onFrontier ? '*' : '',
    formatMs(r.delayMs),
    r.percentile === null ? 'fixed' : `warm-up p${r.percentile}`,
    formatMs(r.p50),
    formatMs(r.p99),
    formatMs(r['p99.9']),
    `${r.slow.hedged} (plain ${r.slow.plain})`,
    `${r.extraLoadPct.toFixed(1)} %`,
    `${r.errors.hedged} (plain ${r.errors.plain})`,
    r.decision,
  ])
  if (body.length > 0) {
    lines.push('', ...formatTable([header, ...body], ['left', 'right', 'left']))
    lines.push('', '(*) on the frontier: no other setting has both a better tail (p99, then requests over the threshold) and less extra load. Latency is of the hedged phase; extra load is hedges sent per request.')
  }
  lines.push('', frontier.recommendation.sentence)
  if (sweep.warnings.length > 0) lines.push('', 'Warnings:', ...sweep.warnings.map((w) => `  - ${w}`))
  return `${lines.join('\n')}\n`
}
