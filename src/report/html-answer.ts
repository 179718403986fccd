/**
 * The first screen of the HTML report: the answer. Did hedging help, and
 * what did it cost? A verdict sentence, then the comparison table with the
 * noise verdict of each row before its figures (as the text report judges
 * them), then the warnings. Charts and details follow in html.ts.
 */
import { generatorFailuresText, interruptedText, partialText } from './interrupted-text.js'
import { compareWithin, type Comparison, type MetricRow } from './compare.js'
import { metricCells } from './compare-format.js'
import { escapeHtml } from './escape.js'
import { hedgeVerdict } from './verdict.js'
import type { RunResult } from '../results/run-result.js'

/** The comparison the answer is about: the caller's, else a lone run's own plain vs hedged. */
export function answerComparison(runs: RunResult[], given: Comparison | undefined): Comparison | null {
  if (given) return given
  const run = runs.length === 1 ? runs[0] : undefined
  return run?.phases.plain && run.phases.hedged ? compareWithin(run) : null
}

export function answerSection(runs: RunResult[], comparison: Comparison | null): string {
  const heading = comparison?.kind === 'runs' ? 'Comparison' : 'Plain vs hedged'
  const parts = [
    `<h2>${heading}</h2>`,
    interruptions(runs),
    comparison?.kind === 'runs'
      ? runSentences(comparison)
          .map((s) => `<p class="verdict">${escapeHtml(s)}</p>`)
          .join('\n')
      : '',
    hedgeVerdicts(runs, comparison),
    comparison ? answerTable(comparison) : '',
    comparison ? `<p class="legend">${escapeHtml(LEGEND)}</p>` : '',
    warningsList(runs, comparison),
  ]
  return `<section class="answer">\n${parts.filter(Boolean).join('\n')}\n</section>`
}

/** One comparison as a page shows it (a watch's segment against the one before): the table, verdicts first, its legend and its warnings. */
export function comparisonBlock(c: Comparison): string {
  const warnings = c.warnings.length > 0 ? `\n<ul class="warnings">${c.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul>` : ''
  return `${answerTable(c)}\n<p class="legend">${escapeHtml(LEGEND)}</p>${warnings}`
}

const LEGEND =
  'better / worse: the 95 % interval of the change excludes 0 and the change is at least 1 %; min, max and stddev are never judged (one request decides them).'

/**
 * Each run's plain vs hedged verdict, decided once in verdict.ts (the text
 * report prints the same): headline, then every further finding. Named by
 * run when several are compared.
 */
function hedgeVerdicts(runs: RunResult[], c: Comparison | null): string {
  const names = c?.kind === 'runs' ? c.runs.map((r) => r.tag) : []
  const items = runs.flatMap((result, i) => {
    const { plain, hedged } = result.phases
    if (!plain || !hedged) return []
    const v = hedgeVerdict(plain, hedged, result)
    const who = runs.length > 1 ? `${names[i] ?? result.label}: ` : ''
    const details = v.details.length > 0 ? `<ul class="verdict-details">${v.details.map((d) => `<li>${escapeHtml(d)}</li>`).join('')}</ul>` : ''
    return [`<p class="verdict ${v.tone}">${escapeHtml(`${who}${v.headline}`)}</p>${details}`]
  })
  if (items.length === 0 && runs.length === 1) {
    const why = runs[0]!.partial ? ` (it was interrupted during ${runs[0]!.stoppedIn ?? 'the run'})` : ''
    return `<p class="verdict">This run has no plain and hedged phase to compare${escapeHtml(why)}: see its figures below.</p>`
  }
  return items.join('\n')
}

/**
 * An interrupted run says so first, with the requests it aborted and how long the hung ones had been in flight (as the text
 * report does); so does a run whose requests failed on the generator's machine (EMFILE).
 */
function interruptions(runs: RunResult[]): string {
  return runs
    .flatMap((result) => {
      const who = runs.length > 1 ? `${result.label}: ` : ''
      const local = Object.values(result.phases).flatMap((p) => {
        const line = generatorFailuresText(p)
        return line ? [`<p class="verdict bad">${escapeHtml(`${who}${p.name}: ${line}`)}</p>`] : []
      })
      const partial = partialText(result)
      if (!partial) return local
      const phases = Object.values(result.phases).flatMap((p) => {
        const line = interruptedText(p)
        return line ? [`<li>${escapeHtml(`${p.name}: ${line}`)}</li>`] : []
      })
      return [
        `<p class="verdict bad">${escapeHtml(who + partial)}</p>${phases.length > 0 ? `<ul class="verdict-details">${phases.join('')}</ul>` : ''}`,
        ...local,
      ]
    })
    .join('\n')
}

/**
 * Several saved runs: for each later run, what moved beyond noise against
 * the first, read from compare's own verdicts, naming only what did
 * ("after against before: worse p50, p99; better slow; the rest within
 * noise or not judged", or "nothing moved beyond noise").
 */
function runSentences(c: Comparison): string[] {
  const base = c.runs[0]!.tag
  return c.runs.slice(1).map((r, i) => {
    const moved = (verdict: string): string[] => c.metrics.filter((m) => m.changes[i + 1]?.verdict === verdict).map((m) => m.metric)
    const found = [
      ['worse', moved('worse')],
      ['better', moved('better')],
    ]
      .filter(([, names]) => names!.length > 0)
      .map(([word, names]) => `${word} ${(names as string[]).join(', ')}`)
    return `${r.tag} against ${base}: ${found.length > 0 ? `${found.join('; ')}; the rest within noise or not judged.` : 'nothing moved beyond noise.'}`
  })
}

/**
 * compare's table with each later run's verdict moved before the figures, so
 * the answer is read first. Saved runs are named #1, #2 … in the columns
 * (file names are long) and listed above the table.
 */
function answerTable(c: Comparison): string {
  if (c.runs.length > 2) return stackedTable(c)
  const later = c.runs.slice(1)
  const k = c.runs.length
  const tag = (i: number): string => c.runs[i]!.tag
  const suffix = (i: number): string => (k > 2 ? ` ${tag(i)}` : '')
  const header = [
    'metric',
    ...later.map((_, i) => `verdict${suffix(i + 1)}`),
    ...c.runs.map((_, i) => tag(i)),
    ...later.flatMap((_, i) => [`change${suffix(i + 1)}`, `95% interval${suffix(i + 1)}`]),
  ]
  const names =
    c.kind === 'runs'
      ? `<ul class="runs">${c.runs.map((r, i) => `<li>${escapeHtml(`${r.tag}${r.name === r.tag ? '' : `: ${r.name}`}${r.tag !== r.label ? ` "${r.label}"` : ''}${i === 0 ? ' (baseline)' : ''}`)}</li>`).join('')}</ul>\n`
      : ''
  const rows = c.metrics.map((m) => verdictFirst(m, k))
  const cls = (text: string): string => (text === 'better' ? ' class="better"' : text === 'worse' ? ' class="worse"' : '')
  const head = `<tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>`
  const body = rows
    .map((r) => `<tr>${r.map((cell, i) => (i === 0 ? `<th scope="row">${escapeHtml(cell)}</th>` : answerCell(cell, cls(cell)))).join('')}</tr>`)
    .join('\n')
  return `${names}<div class="scroll"><table class="comparison"><thead>${head}</thead><tbody>\n${body}\n</tbody></table></div>`
}

/**
 * Three runs or more: a column per run, each later run's cell holding its
 * verdict, its value and its change (the interval on hover), so six runs fit
 * a 1280 px page where a column per figure took 2,900 px.
 */
function stackedTable(c: Comparison): string {
  const names = `<ul class="runs">${c.runs.map((r, i) => `<li>${escapeHtml(`${r.tag}: ${r.name}${r.tag !== r.label ? ` "${r.label}"` : ''}${i === 0 ? ' (baseline)' : ''}`)}</li>`).join('')}</ul>\n`
  const head = `<tr><th>metric</th>${c.runs.map((r, i) => `<th>${escapeHtml(i === 0 ? `${r.tag} (baseline)` : r.tag)}</th>`).join('')}</tr>`
  const body = c.metrics
    .map((m) => {
      const cells = metricCells(m)
      const k = c.runs.length
      const runCells = c.runs.map((_, i) => {
        const value = cells[1 + i]!
        if (i === 0) return `<td>${escapeHtml(value)}</td>`
        const [change, interval, verdict] = cells.slice(1 + k + 3 * (i - 1), 4 + k + 3 * (i - 1))
        const few = /^not enough requests (\(.*\))$/.exec(verdict!)
        const word = few ? 'not enough requests' : verdict!
        // "text": a cell of three lines, not a figure that must stay on one.
        const cls = ` class="text${word === 'better' ? ' better' : word === 'worse' ? ' worse' : ''}"`
        const title = few ? few[1]! : interval && interval !== '-' ? `95 % interval ${interval}` : ''
        return `<td${cls}${title ? ` title="${escapeHtml(title)}"` : ''}>${escapeHtml(word)}<span class="sub">${escapeHtml(value)}</span><span class="sub">${escapeHtml(change ?? '')}</span></td>`
      })
      return `<tr><th scope="row">${escapeHtml(m.metric)}</th>${runCells.join('')}</tr>`
    })
    .join('\n')
  return `${names}<div class="scroll"><table class="comparison"><thead>${head}</thead><tbody>\n${body}\n</tbody></table></div>`
}

/** "not enough requests (n = 400 for p99.9; needs 3688)" keeps the table narrow: the words in the cell, the why on hover. */
function answerCell(cell: string, cls: string): string {
  const few = /^not enough requests (\(.*\))$/.exec(cell)
  if (few) return `<td class="few" title="${escapeHtml(few[1]!)}">not enough requests</td>`
  return `<td${cls}>${escapeHtml(cell)}</td>`
}

/** metricCells is [metric, values x k, (change, interval, verdict) x (k-1)]: reorder to [metric, verdicts, values, (change, interval)]. */
function verdictFirst(m: MetricRow, k: number): string[] {
  const cells = metricCells(m)
  const values = cells.slice(1, 1 + k)
  const triples = Array.from({ length: k - 1 }, (_, i) => cells.slice(1 + k + 3 * i, 4 + k + 3 * i))
  return [cells[0]!, ...triples.map((t) => t[2]!), ...values, ...triples.flatMap((t) => [t[0]!, t[1]!])]
}

function warningsList(runs: RunResult[], comparison: Comparison | null): string {
  // Several runs: each run's own warnings say whose they are (compare's already name their run).
  const tags = comparison?.kind === 'runs' ? comparison.runs.map((r) => r.tag) : runs.map((r) => r.label)
  const own = runs.flatMap((r, i) => r.warnings.map((w) => (runs.length > 1 ? `${tags[i] ?? r.label}: ${w}` : w)))
  const warnings = [...new Set([...own, ...(comparison?.warnings ?? [])])]
  if (warnings.length === 0) return ''
  return `<h2>Warnings</h2>\n<ul class="warnings">${warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul>`
}
