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
import { fill, textWidth } from '../core/wrap.js'

export interface CompareTextOptions {
  /** Arrows and ANSI colours for better/worse (the command passes isTTY && !NO_COLOR). */
  color: boolean
  /** Each run's own plain vs hedged verdict (verdict.ts), named by run when several are compared. */
  verdicts?: Array<{ run: string; verdict: HedgeVerdict }>
  /** Columns to fit the metric table in (the terminal's); unlimited when absent. */
  width?: number
}

export function renderCompareText(c: Comparison, opts: CompareTextOptions = { color: false }): string {
  const sections = [
    runsSection(c, opts.width),
    baselineSetLine(c),
    configSection(c, opts.width),
    warningsSection(c, opts.width),
    metricsTables(c, opts),
    verdictSection(c, opts),
    legend(c, opts.width),
  ]
  return `${sections.filter((s) => s !== '').join('\n\n')}\n`
}

/** With compare --baseline: what the first column is, and what else judges the changes. */
function baselineSetLine(c: Comparison): string {
  if (!c.baselineSet) return ''
  return `Baseline ${c.runs[0]!.tag}: the mean of ${c.baselineSet.length} baseline runs (${c.baselineSet.join(', ')}); their spread is a noise floor`
}

function runsSection(c: Comparison, width = Infinity): string {
  const title =
    c.kind === 'within' ? `Comparing the plain and hedged phases of "${c.runs[0]?.label ?? ''}"` : `Comparing ${c.runs.length} runs against the first`
  const file = (r: Comparison['runs'][number]): string => (c.kind === 'runs' && r.tag !== r.label ? `${r.name} "${r.label}"` : r.name)
  const facts = (r: Comparison['runs'][number], i: number): string[] => [
    `${r.phase} phase`,
    `${r.requests} requests in ${(r.durationMs / 1000).toFixed(1)} s${r.partial ? ' (interrupted)' : ''}`,
    i === 0 ? '(baseline)' : '',
  ]
  const tag = (i: number): string => (c.kind === 'runs' ? c.runs[i]!.tag : `#${i + 1}`)
  // Runs named by their tags alone (a watch's segments) would show each name twice.
  if (c.runs.every((r, i) => file(r) === tag(i)))
    return `${title}\n${table(
      c.runs.map((r, i) => [tag(i), ...facts(r, i)]),
      '  ',
    )}`
  const wide = table(
    c.runs.map((r, i) => [tag(i), file(r), ...facts(r, i)]),
    '  ',
  )
  if (widest(wide) <= width) return `${title}\n${wide}`
  // Long file names: each run's file on a line of its own under its figures.
  const lines = table(
    c.runs.map((r, i) => [tag(i), ...facts(r, i)]),
    '  ',
  )
    .split('\n')
    .flatMap((line, i) => [line, `     ${file(c.runs[i]!)}`])
  return `${title}\n${lines.join('\n')}`
}

function configSection(c: Comparison, width = Infinity): string {
  if (c.configDifferences.length === 0) return c.kind === 'runs' ? 'Configuration: identical' : ''
  const header = ['', ...c.runs.map((r) => r.tag)]
  const rows = c.configDifferences.map((d) => [d.key, ...d.values.map((v) => readableConfigValue(d.key, v))])
  const wide = table([header, ...rows], '  ')
  if (widest(wide) <= width) return `Configuration differs, compare with care:\n${wide}`
  // Too wide side by side (URL lists): each setting, then each run's value on its own line.
  const lines = c.configDifferences.flatMap((d) => [
    `  ${d.key}`,
    ...table(
      d.values.map((v, i) => [c.runs[i]!.tag, readableConfigValue(d.key, v)]),
      '    ',
    ).split('\n'),
  ])
  return `Configuration differs, compare with care:\n${lines.join('\n')}`
}

function warningsSection(c: Comparison, width = Infinity): string {
  return c.warnings.length === 0 ? '' : `Warnings:\n${c.warnings.map((w) => fill(`! ${w}`, width, '  ', '    ')).join('\n')}`
}

/**
 * Every metric in one table when it fits the width; otherwise one table per
 * later run against the first ("B against A"), which is what a reader
 * compares anyway, rather than lines the terminal wraps.
 */
function metricsTables(c: Comparison, opts: CompareTextOptions): string {
  const width = opts.width ?? Infinity
  const all = metricsTable(
    c,
    c.runs.map((_, i) => i),
    opts.color,
    FULL,
  )
  if (widest(all) <= width) return all
  // Narrower, step by step: one table per later run; the reasons behind "not enough requests" as notes below; the intervals left out.
  for (const layout of [FULL, NOTES_BELOW, NO_INTERVALS]) {
    const tables =
      c.runs.length <= 2
        ? [metricsTable(c, [0, 1], opts.color, layout)]
        : c.runs.slice(1).map((r, i) => `${r.tag} against ${c.runs[0]!.tag}:\n${metricsTable(c, [0, i + 1], opts.color, layout)}`)
    const text = tables.join('\n\n')
    if (widest(text) <= width || layout === NO_INTERVALS)
      return layout === NO_INTERVALS
        ? `${text}\n${fill(`(95 % intervals left out to fit ${width} columns: a wider terminal, or -o csv, shows them)`, width, '  ')}`
        : text
  }
  return all
}

interface Layout {
  notes: 'inline' | 'below'
  intervals: boolean
}
const FULL: Layout = { notes: 'inline', intervals: true }
const NOTES_BELOW: Layout = { notes: 'below', intervals: true }
const NO_INTERVALS: Layout = { notes: 'below', intervals: false }

/** The table of the runs at `shown` (the first is the baseline): metric, their values, then change, interval and verdict of each later one. */
function metricsTable(c: Comparison, shown: number[], color: boolean, layout: Layout): string {
  const table = metricsTableOnly(c, shown, color, layout)
  if (layout.notes === 'inline') return table
  const notes = shown
    .slice(1)
    .flatMap((i) =>
      c.metrics.flatMap((m) => (m.changes[i]?.note ? [`  * ${m.metric}${shown.length > 2 ? ` ${c.runs[i]!.tag}` : ''}: ${m.changes[i]!.note}`] : [])),
    )
  return notes.length > 0 ? `${table}\n${notes.join('\n')}` : table
}

function metricsTableOnly(c: Comparison, shown: number[], color: boolean, layout: Layout): string {
  const later = shown.slice(1)
  const suffix = (i: number): string => (later.length > 1 ? ` ${c.runs[i]!.tag}` : '')
  const per = layout.intervals ? 3 : 2
  const header = [
    'metric',
    ...shown.map((i) => c.runs[i]!.tag),
    ...later.flatMap((i) => [`change${suffix(i)}`, ...(layout.intervals ? [`95% interval${suffix(i)}`] : []), `verdict${suffix(i)}`]),
  ]
  const k = c.runs.length
  // metricCells gives every run: [metric, values x k, (change, interval, verdict) x (k-1)]; keep the shown ones.
  const rows = c.metrics.map((m) => {
    const cells = metricCells(m)
    return [
      cells[0]!,
      ...shown.map((i) => cells[1 + i]!),
      ...later.flatMap((i) => {
        const [change, interval, verdict] = cells.slice(1 + k + 3 * (i - 1), 4 + k + 3 * (i - 1))
        const judged = layout.notes === 'below' && m.changes[i]?.note ? `${m.changes[i]!.verdict} *` : verdict!
        // Narrowest: the change in percent alone when there is one (both values stand beside it).
        const shortChange = layout.intervals ? change! : (/\(([^()]*)\)$/.exec(change!)?.[1] ?? change!)
        return [shortChange, ...(layout.intervals ? [interval!] : []), judged]
      }),
    ]
  })
  if (!color) return table([header, ...rows], '  ')
  // Verdict cells are every per-th column after the values; colour them once padded.
  const firstVerdict = 1 + shown.length + per - 1
  const paintCell = (row: number, col: number, cell: string): string => {
    const change = row > 0 && col >= firstVerdict && (col - firstVerdict) % per === 0 ? c.metrics[row - 1]?.changes[later[(col - firstVerdict) / per]!] : null
    return change ? paint(cell, change) : cell
  }
  return tableLines([header, ...rows], '  ', paintCell).join('\n')
}

function widest(text: string): number {
  return Math.max(0, ...text.split('\n').map(textWidth))
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

function legend(c: Comparison, columns = Infinity): string {
  if (c.runs.length < 2) return ''
  return fill(
    'Verdict: better / worse when the 95 % interval of the change excludes 0 and the change is at least 1 %; min, max and stddev are never judged (one extreme request decides them); ' +
      '"not enough requests": the interval of that percentile would run past the slowest (or fastest) request measured, so it cannot be judged, and a relative --fail-if on it fails closed (--allow-unjudged lets it pass).',
    columns,
  )
}

function table(rows: string[][], indent: string): string {
  return tableLines(rows, indent).join('\n')
}

type CellDecorator = (row: number, col: number, paddedCell: string) => string

/** Left-aligned columns, two spaces apart, trailing spaces trimmed. */
function tableLines(rows: string[][], indent: string, decorate: CellDecorator = (_r, _c, cell) => cell): string[] {
  const widths: number[] = []
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, textWidth(cell))))
  return rows.map((row, r) => `${indent}${row.map((cell, i) => decorate(r, i, cell + ' '.repeat((widths[i] ?? 0) - textWidth(cell)))).join('  ')}`.trimEnd())
}
