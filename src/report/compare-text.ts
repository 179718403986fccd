/**
 * `hedgebench compare` as text: the runs, what differs in their
 * configuration (first, so it is read before the numbers), warnings, then
 * one row per metric with every run's value and, for each later run, its
 * change against the first, the 95 % interval and the verdict.
 */
import type { Comparison, MetricChange, Verdict } from './compare.js'
import { metricCells } from './compare-format.js'
import { readableConfigValue } from '../results/config-entries.js'
import type { HedgeVerdict } from './verdict.js'

export interface CompareTextOptions {
  /** Arrows and ANSI colours for better/worse (the command passes isTTY && !NO_COLOR). */
  color: boolean
  /** Each run's own plain vs hedged verdict (verdict.ts), named by run when several are compared. */
  verdicts?: Array<{ run: string; verdict: HedgeVerdict }>
}

export function renderCompareText(c: Comparison, opts: CompareTextOptions = { color: false }): string {
  const sections = [runsSection(c), configSection(c), warningsSection(c), metricsTable(c, opts.color), verdictSection(c, opts), legend(c)]
  return `${sections.filter((s) => s !== '').join('\n\n')}\n`
}

function runsSection(c: Comparison): string {
  const title = c.kind === 'within' ? `Comparing the plain and hedged phases of "${c.runs[0]?.label ?? ''}"` : `Comparing ${c.runs.length} runs against the first`
  const rows = c.runs.map((r, i) => [
    `#${i + 1}`,
    r.name,
    c.kind === 'runs' ? `"${r.label}"` : '',
    `${r.phase} phase`,
    `${r.requests} requests in ${(r.durationMs / 1000).toFixed(1)} s${r.partial ? ' (interrupted)' : ''}`,
    i === 0 ? '(baseline)' : '',
  ])
  return `${title}\n${table(rows, '  ')}`
}

function configSection(c: Comparison): string {
  if (c.configDifferences.length === 0) return c.kind === 'runs' ? 'Configuration: identical' : ''
  const header = ['', ...c.runs.map((r) => r.name)]
  const rows = c.configDifferences.map((d) => [d.key, ...d.values.map((v) => readableConfigValue(d.key, v))])
  return `Configuration differs, compare with care:\n${table([header, ...rows], '  ')}`
}

function warningsSection(c: Comparison): string {
  return c.warnings.length === 0 ? '' : `Warnings:\n${c.warnings.map((w) => `  ! ${w}`).join('\n')}`
}

function metricsTable(c: Comparison, color: boolean): string {
  const later = c.runs.slice(1)
  const suffix = (name: string): string => (later.length > 1 ? ` ${name}` : '')
  const header = ['metric', ...c.runs.map((r) => r.name), ...later.flatMap((r) => [`change${suffix(r.name)}`, `95% interval${suffix(r.name)}`, `verdict${suffix(r.name)}`])]
  const rows = c.metrics.map((m) => metricCells(m))
  if (!color) return table([header, ...rows], '  ')
  // Verdict cells are every third column after the values; colour them once padded.
  const firstVerdict = 1 + c.runs.length + 2
  const paintCell = (row: number, col: number, cell: string): string => {
    const change = row > 0 && col >= firstVerdict && (col - firstVerdict) % 3 === 0 ? c.metrics[row - 1]?.changes[1 + (col - firstVerdict) / 3] : null
    return change ? paint(cell, change) : cell
  }
  return tableLines([header, ...rows], '  ', paintCell).join('\n')
}

const TONE_ANSI: Record<HedgeVerdict['tone'], string> = { good: '\u001b[32m', neutral: '\u001b[33m', bad: '\u001b[31m' }

/** The verdict the run report prints, in the same words ("Verdict: …" or "Verdict for b.json: …"). */
function verdictSection(c: Comparison, opts: CompareTextOptions): string {
  return (opts.verdicts ?? [])
    .map(({ run, verdict }) => {
      const lines = [`Verdict${c.kind === 'runs' ? ` for ${run}` : ''}: ${verdict.headline}`, ...verdict.details.map((d) => `  ! ${d}`)]
      return opts.color ? lines.map((l) => `${TONE_ANSI[verdict.tone]}${l}${RESET}`).join('\n') : lines.join('\n')
    })
    .join('\n')
}

const ANSI: Record<Verdict, string> = { better: '\u001b[32m', worse: '\u001b[31m', 'within noise': '', 'not enough requests': '' }
const RESET = '\u001b[0m'

/** An arrow for the direction of the change and a colour for better/worse; the arrow takes two columns of padding. */
function paint(paddedCell: string, change: MetricChange): string {
  if (change.verdict !== 'better' && change.verdict !== 'worse') return paddedCell
  const word = paddedCell.trimEnd()
  const pad = paddedCell.slice(word.length + 2)
  return `${ANSI[change.verdict]}${change.abs > 0 ? '▲' : '▼'} ${word}${RESET}${pad}`
}

function legend(c: Comparison): string {
  if (c.runs.length < 2) return ''
  return 'Verdict: better / worse when the 95 % interval of the change excludes 0 and the change is at least 1 %; min, max and stddev are never judged (one extreme request decides them); ' +
    '"not enough requests": the interval of that percentile would run past the slowest (or fastest) request measured, so it cannot be judged and --fail-if ignores it.'
}

function table(rows: string[][], indent: string): string {
  return tableLines(rows, indent).join('\n')
}

type CellDecorator = (row: number, col: number, paddedCell: string) => string

/** Left-aligned columns, two spaces apart, trailing spaces trimmed. */
function tableLines(rows: string[][], indent: string, decorate: CellDecorator = (_r, _c, cell) => cell): string[] {
  const widths: number[] = []
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, width(cell))))
  return rows.map((row, r) => `${indent}${row.map((cell, i) => decorate(r, i, cell + ' '.repeat((widths[i] ?? 0) - width(cell)))).join('  ')}`.trimEnd())
}

function width(cell: string): number {
  return [...cell].length
}
