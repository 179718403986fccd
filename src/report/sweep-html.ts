/**
 * The sweep as one self-contained HTML page: the frontier chart (extra load
 * across, the p99 up; the plain lane and each setting a point, with its 95 %
 * intervals as whiskers), the table and the recommendation, all decided in
 * sweep-frontier.ts; a mix (--targets) then each target without hedging and
 * at its recommended setting (sweep-targets.ts). Built on the run report's
 * chart and page primitives, so it keeps the same CSP.
 */
import { formatMs } from '../core/duration.js'
import { escapeHtml } from './escape.js'
import { page, table } from './html.js'
import { chartsFor, frontierChart } from './frontier-chart.js'
import { percentileJudgeable } from '../stats/noise.js'
import type { LaneFigures, SweepFrontier } from './sweep-frontier.js'
import { countFigure, msFigure, pctFigure, SERVER_WORK_LEGEND, showsServerWork, sweepTitle } from './sweep-text.js'
import type { SweepResult } from '../results/sweep-result.js'
import { TARGET_CHOICE_HEADER, targetChoiceRows, targetFrontiers, targetSentences, type TargetFrontier } from './sweep-targets.js'
import { targetCells } from './target-rows.js'

export function renderSweepHtml(sweep: SweepResult, frontier: SweepFrontier): string {
  const title = `${sweepTitle(sweep, 'hedgebench sweep')}: ${sweep.settings.length} settings${sweep.partial ? ' (interrupted)' : ''}`
  const body = [
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="verdict">${escapeHtml(frontier.recommendation.sentence)}</p>`,
    frontier.rows.length > 0 ? frontierFigures(frontier) : '<p>No setting finished: nothing to chart.</p>',
    frontier.rows.length > 0 ? frontierTable(frontier, showsServerWork(sweep)) : '',
    targetsTable(sweep, targetFrontiers(sweep, frontier.maxExtraPct)),
    sweep.warnings.length > 0 ? `<h2>Warnings</h2><ul>${sweep.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul>` : '',
  ]
  return page(title, body.filter((b) => b !== '').join('\n'))
}

/** One chart per tail percentile the lanes can bound (p99.9 from its request count on), with the caption that names what is marked. */
function frontierFigures(frontier: SweepFrontier): string {
  return chartsFor(frontier, percentileJudgeable)
    .map((key) => {
      const { svg, unplaced } = frontierChart(frontier, key)
      const crowded = unplaced.length > 0 ? ` Not named on the chart for lack of room (see the table): ${unplaced.join('; ')}.` : ''
      return `<figure>${svg}<figcaption>${escapeHtml(frontierCaption(frontier) + crowded)}</figcaption></figure>`
    })
    .join('\n')
}

/** What the marks mean, in words: the recommended setting by name, the ones that cannot be told from it, the shapes. */
export function frontierCaption(frontier: SweepFrontier): string {
  const rec = frontier.recommendation
  const chosen =
    rec.label === null
      ? 'No setting is recommended (see the sentence above).'
      : `Recommended: ${rec.label}, ringed and named at its point.` +
        (rec.indistinguishable.length > 0 ? ` Marked ≈: cannot be told apart from it on the tail: ${rec.indistinguishable.join(', ')}.` : '')
  return `${chosen} The square at 0 % is the plain lane (no hedging); filled dots are on the frontier, hollow ones are beaten by another lane on tail or cost; the dashed line joins the frontier; whiskers are 95 % intervals.`
}

function frontierTable(frontier: SweepFrontier, server: boolean): string {
  const header = [
    'setting',
    'delay',
    'from',
    'attempts',
    'budget',
    'p50',
    'p99',
    'p99.9',
    'slow',
    'extra load',
    ...(server ? ['server work'] : []),
    'errors',
    'verdict',
    'frontier',
  ]
  const work = (f: LaneFigures): string[] => (server ? [f.serverWorkPct ? pctFigure(f.serverWorkPct) : '-'] : [])
  const plain = frontier.plain
  const rows = [
    [
      'no hedging',
      '',
      'plain lane',
      '1',
      '',
      msFigure(plain.p50),
      msFigure(plain.p99),
      msFigure(plain['p99.9']),
      countFigure(plain.slow),
      pctFigure(plain.extraLoadPct),
      ...work(plain),
      countFigure(plain.errors),
      '',
      '',
    ],
    ...frontier.rows.map((r) => [
      r.label,
      formatMs(r.delayMs),
      r.percentile === null ? 'fixed' : `warm-up p${r.percentile}`,
      String(r.maxAttempts),
      r.budgetPct === null ? 'off' : `${r.budgetPct} %`,
      msFigure(r.p50),
      msFigure(r.p99),
      msFigure(r['p99.9']),
      countFigure(r.slow),
      pctFigure(r.extraLoadPct),
      ...work(r),
      countFigure(r.errors),
      r.decision,
      r.onFrontier ? 'yes' : '',
    ]),
  ]
  const caption = `Latency is of each lane; extra load is hedges sent per request; [low, high] is the 95 % interval. On the frontier: neither the plain lane nor another setting is clearly better on tail or extra load without being clearly worse on either.${server ? ` ${SERVER_WORK_LEGEND}` : ''}`
  return `<h2>Settings</h2>\n<div class="wrap">${table(header, rows, caption)}</div>`
}

/** A mix: each target's plain lane and recommended setting, then each recommendation in words; nothing for a sweep of one request. */
function targetsTable(sweep: SweepResult, list: readonly TargetFrontier[]): string {
  if (list.length === 0) return ''
  const caption =
    'Each target its own frontier over its own lanes, each delay from its own warm-up. Setting none: its plain lane (no hedging); the other row: its recommended setting (none when no setting is recommended or a write was sent once). Extra load is hedges sent per request.'
  const sentences = targetSentences(list)
    .map(({ name, sentence }) => `<li><b>${escapeHtml(name)}</b>: ${escapeHtml(sentence)}</li>`)
    .join('')
  return `<h2>Per target</h2>\n<div class="wrap">${table(TARGET_CHOICE_HEADER, targetChoiceRows(sweep, list).map(targetCells), caption)}</div>\n<ul>${sentences}</ul>`
}
