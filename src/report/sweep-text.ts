/** The sweep as text: the frontier table with each figure's 95 % interval, then the recommendation (both decided in sweep-frontier.ts), and a mix's per target (sweep-targets.ts). */
import { formatMs, formatThreshold } from '../core/duration.js'
import type { Figure, LaneFigures, SweepFrontier } from './sweep-frontier.js'
import type { SweepResult } from '../results/sweep-result.js'
import { formatTable } from './table.js'
import { crossCheckLabel } from './server-check-verdict.js'
import { targetFrontiers, targetsSweepText } from './sweep-targets.js'

/** `lead` ("Hedging sweep"), with the sweep's --label when it was given one (a run's default label is "run"). */
export function sweepTitle(sweep: SweepResult, lead: string): string {
  const label = sweep.run.label
  return label === '' || label === 'run' ? lead : `${lead} ${label}`
}

/** `width`: the columns to fit (the terminal's); a frontier table wider than that is written one lane a line. */
export function renderSweepText(sweep: SweepResult, frontier: SweepFrontier, width = Infinity): string {
  const lines: string[] = []
  const n = sweep.settings.length
  const finished = sweep.partial ? `, interrupted: what each lane measured until then` : ''
  lines.push(`${sweepTitle(sweep, 'Hedging sweep')}: ${n} setting${n === 1 ? '' : 's'} and a plain lane, interleaved in one window${finished}`)
  const rows = frontier.rows
  const attempts = new Set(rows.map((r) => r.maxAttempts)).size > 1
  const budgets = new Set(rows.map((r) => r.budgetPct)).size > 1
  const server = showsServerWork(sweep)
  const header = [
    '',
    'delay',
    'from',
    ...(attempts ? ['attempts'] : []),
    ...(budgets ? ['budget'] : []),
    'requests',
    'p50',
    'p99',
    'p99.9',
    `> ${formatThreshold(frontier.slowThresholdMs)}`,
    'extra load',
    ...(server ? ['server work'] : []),
    'errors',
    'verdict',
  ]
  const figures = (f: LaneFigures): string[] => [
    String(f.requests),
    msFigure(f.p50),
    msFigure(f.p99),
    msFigure(f['p99.9']),
    countFigure(f.slow),
    pctFigure(f.extraLoadPct),
    ...(server ? [f.serverWorkPct ? pctFigure(f.serverWorkPct) : '-'] : []),
    countFigure(f.errors),
  ]
  const plain = ['', 'none', 'plain', ...(attempts ? [''] : []), ...(budgets ? [''] : []), ...figures(frontier.plain), '']
  const body = rows.map((r) => [
    r.onFrontier ? '*' : '',
    formatMs(r.delayMs),
    r.percentile === null ? 'fixed' : `warm-up p${r.percentile}`,
    ...(attempts ? [String(r.maxAttempts)] : []),
    ...(budgets ? [r.budgetPct === null ? 'off' : `${r.budgetPct}%`] : []),
    ...figures(r),
    r.decision,
  ])
  if (rows.length > 0) {
    const table = formatTable([header, plain, ...body], ['left', 'right', 'left'])
    const lead = 3 + (attempts ? 1 : 0) + (budgets ? 1 : 0)
    lines.push('', ...(Math.max(...table.map((l) => l.length)) <= width ? table : laneLines(header, [plain, ...body], lead)))
    lines.push(
      '',
      '[low, high]: 95 % interval (none: too few requests to bound it). (*) on the frontier: neither the plain lane nor another setting is clearly better on the tail (p99, p99.9, p99.99, requests over the threshold: better on one, worse on none) or on extra load (hedges sent per request) without being clearly worse on either.',
    )
    if (server) lines.push(SERVER_WORK_LEGEND)
  }
  lines.push('', frontier.recommendation.sentence)
  lines.push(...targetsSweepText(sweep, targetFrontiers(sweep, frontier.maxExtraPct)))
  const window = sweep.server
  if (window) {
    lines.push(
      '',
      `Servers received ${window.received} requests; the lanes sent ${window.clientAttempts} attempts${window.match ? ' (they match)' : ` (${crossCheckLabel(window)})`}.`,
    )
    lines.push(laneCountsLine(sweep))
  }
  if (sweep.warnings.length > 0) lines.push('', 'Warnings:', ...sweep.warnings.map((w) => `  - ${w}`))
  return `${lines.join('\n')}\n`
}

/**
 * The table too wide for the terminal: each lane on a line of its own (the
 * setting, then each figure named by its column), which the output fills
 * to the width with a hanging indent.
 */
function laneLines(header: string[], rows: string[][], lead: number): string[] {
  return rows.map((row) => {
    const setting = row.slice(0, lead).filter((cell) => cell !== '')
    const figures = header.slice(lead, -1).map((name, i) => `${name} ${row[lead + i]}`)
    const verdict = row.at(-1) ? `; ${row.at(-1)}` : ''
    return `${setting.join(' ')}: ${figures.join(', ')}${verdict}`
  })
}

/** The server-work column is shown when the servers' count was read (--server-stats): '-' in it where they do not count a lane. */
export function showsServerWork(sweep: SweepResult): boolean {
  return sweep.server !== undefined || sweep.plainServer !== undefined || sweep.settings.some((s) => s.server)
}

export const SERVER_WORK_LEGEND =
  "server work: the servers' own count of each lane (told apart by the x-hedgebench-lane header its requests carried): the requests they executed beyond one per original, per original; -: the servers do not count per lane."

/** Whether each lane's count at the servers is its attempts, or that the servers do not count lanes apart. */
function laneCountsLine(sweep: SweepResult): string {
  const counts = [
    ...(sweep.plainServer ? [{ label: 'none', server: sweep.plainServer }] : []),
    ...sweep.settings.flatMap((s) => (s.server ? [{ label: s.label, server: s.server }] : [])),
  ]
  if (counts.length === 0) return 'The servers do not count the lanes apart (no per-lane counts in their stats): no server work per setting.'
  const off = counts.filter((c) => !c.server.match)
  if (off.length === 0) return "Each lane's count at the servers is its attempts, exactly."
  return `MISMATCH per lane: ${off.map((c) => `${c.label} received ${c.server.received} of ${c.server.clientAttempts} attempts`).join('; ')}.`
}

/** A figure with its interval, as the sweep's text and HTML tables show it. */
export function msFigure(f: Figure): string {
  return f.interval ? `${formatMs(f.value)} [${formatMs(f.interval[0])}, ${formatMs(f.interval[1])}]` : formatMs(f.value)
}

export function countFigure(f: Figure): string {
  return f.interval ? `${f.value} [${Math.floor(f.interval[0])}, ${Math.ceil(f.interval[1])}]` : String(f.value)
}

export function pctFigure(f: Figure): string {
  return f.interval ? `${f.value.toFixed(1)} % [${f.interval[0].toFixed(1)}, ${f.interval[1].toFixed(1)}]` : `${f.value.toFixed(1)} %`
}
