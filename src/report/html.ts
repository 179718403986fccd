/**
 * One self-contained HTML report for one or more runs: inline CSS, inline
 * SVG charts, and one inline script (live-charts.ts) that redraws them as
 * charts to explore; a Content-Security-Policy forbids fetching anything and
 * running any other script, so the file can be mailed, archived or opened
 * offline and never phones home. Every value from a result (labels, URLs,
 * headers, warnings) is escaped.
 */
import {
  attemptsPerRequestText,
  cancelCostText,
  cancellationSuccessText,
  coveredPhases,
  coveredText,
  loserRuntimeText,
  suppressedText,
  triggerWinWarning,
  utilisationText,
  workText,
} from './hedging-telemetry.js'
import type { Comparison } from './compare.js'
import { labelledStatuses } from './status-label.js'
import { configEntries, readableConfigValue } from '../results/config-entries.js'
import { formatMs } from '../core/duration.js'
import type { HedgingStats, PhaseName, PhaseResult, RunResult, StageSummary } from '../results/run-result.js'
import { extraLoadPct } from '../results/extra-load.js'
import { protocolsText, replicaProtocolLabel } from '../results/wire-protocol.js'
import { hedgingAdvice } from './hedging-advice.js'
import { escapeHtml } from './escape.js'
import { PALETTE, renderChart, type ChartSpec } from './svg-chart.js'
import { chartableOverTime, hedgesSpec, histogramSpec, percentileSpec, timelineSpec, type ChartSource } from './html-charts.js'
import { LIVE_CSS, LIVE_DATA_ID, LIVE_SCRIPT, liveChartData, scriptSource } from './live-charts.js'
import { answerComparison, answerSection } from './html-answer.js'
import { readableConfig } from './config-names.js'
import { generatorTable, mergeFacts } from './generators-text.js'
import { grpcClientFacts, grpcClientTail } from './grpc-client-text.js'
import { unsentBreakdown } from './unsent-text.js'
import { crossCheckLabel } from './server-check-verdict.js'
import { TARGET_HEADER, targetCells, targetRows } from './target-rows.js'
import { ejectionCause } from './ejection-cause.js'

export interface HtmlOptions {
  title?: string
  /** Shown as a table above the charts; its run names also name the runs' series. */
  comparison?: Comparison
}

/** The policy of a page without charts; a page with charts adds `script-src` with its one script's hash. */
export const HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

const MEASURED: PhaseName[] = ['plain', 'hedged']
const TIMELINE_PHASES: PhaseName[] = ['warmup', 'plain', 'hedged']

/** One run, as the other renderers take it, or several side by side (a comparison's). */
export function renderHtml(input: RunResult | RunResult[], opts: HtmlOptions = {}): string {
  const runs = Array.isArray(input) ? input : [input]
  const given = opts.comparison?.kind === 'runs' ? pageNames(opts.comparison) : opts.comparison
  const named = nameRuns(runs, given)
  const title = opts.title ?? (runs.length === 1 ? `hedgebench: ${runs[0]?.label ?? 'run'}` : `hedgebench: ${runs.length} runs`)
  const measured = sourcesOf(named, MEASURED)
  const all = sourcesOf(named, TIMELINE_PHASES)
  const comparison = answerComparison(runs, given)
  const charts: ChartSpec[] = []
  const figure = (spec: ChartSpec): string => {
    charts.push(spec)
    return `<figure data-live="${charts.length - 1}">${renderChart(spec)}</figure>`
  }
  const body = [
    `<h1>${escapeHtml(title)}</h1>`,
    answerSection(runs, comparison),
    measured.length > 0
      ? section('Latency', [...split(percentileSpec, measured), ...split(histogramSpec, measured)].map(figure).join(''))
      : '<p>No measured phase to chart.</p>',
    overTimeSection(all, measured, figure),
    comparison ? configDifferences(comparison) : '',
    runsSection(named),
    summarySection(all),
    hedgingSection(measured, named),
    detailsSection(measured),
    replicasSection(all, named),
    ...named.map(targetsSection),
    serverSection(all),
    generatorSection(all),
    ...named.map(mergeSection),
    ...named.map(grpcClientSection),
    configSection(named),
  ]
  return page(title, body.filter((part) => part !== '').join('\n'), charts)
}

/**
 * On a page the runs are named by their --label (a cell wraps where a
 * terminal's column could not): a run left unlabelled ("run", the default),
 * or two runs of one label, by its file name, without ".json".
 */
function pageNames(c: Comparison): Comparison {
  const own = (label: string): boolean => label !== '' && label !== 'run' && c.runs.filter((r) => r.label === label).length === 1
  return { ...c, runs: c.runs.map((r) => ({ ...r, tag: own(r.label) ? r.label : r.name.replace(/\.json$/, '') })) }
}

interface NamedRun {
  name: string
  result: RunResult
}

/** Names from the comparison (file names) when it covers these runs, else labels; made unique. */
function nameRuns(runs: RunResult[], comparison: Comparison | undefined): NamedRun[] {
  const fromComparison = comparison?.kind === 'runs' && comparison.runs.length === runs.length
  const seen = new Map<string, number>()
  return runs.map((result, i) => {
    const base = (fromComparison ? comparison.runs[i]?.tag : result.label) || `run ${i + 1}`
    const count = (seen.get(base) ?? 0) + 1
    seen.set(base, count)
    return { name: count > 1 ? `${base} #${count}` : base, result }
  })
}

/**
 * One chart source per phase; series ids are the phase name, or "run/phase"
 * for several runs. One run: a colour per phase, following the full phase
 * list so a phase keeps its colour in every chart. Several runs: a colour
 * per run and a line style per phase (colours were reused past 8 phases, and
 * two runs' plain and hedged could not be told apart).
 */
function sourcesOf(runs: NamedRun[], phases: PhaseName[]): ChartSource[] {
  const all = runs.flatMap(({ name, result }, r) =>
    TIMELINE_PHASES.flatMap((p) => {
      const phase = result.phases[p]
      return phase ? [{ name: runs.length > 1 ? `${name}/${p}` : p, phase, key: p, run: r, runPhases: result.phases, inFlight: result.config.concurrency }] : []
    }),
  )
  return all.flatMap(({ key, run, ...src }, i) => {
    if (!phases.includes(key)) return []
    return runs.length > 1 ? [{ ...src, color: PALETTE[run % PALETTE.length]!, dash: PHASE_DASH[key] }] : [{ ...src, color: PALETTE[i % PALETTE.length]! }]
  })
}

/** Several runs: plain solid, hedged dashed, warm-up dotted. */
const PHASE_DASH: Record<PhaseName, string> = { warmup: '2 3', plain: '', hedged: '6 4' }

/** The most series a chart's panel holds (a reader matches lines to names within a panel): past it, by colour alone. */
export const MAX_SERIES = 8

/**
 * A chart of these sources, or several when one would hold more than
 * MAX_SERIES series in a panel (a compare of many runs): one per phase, then each phase
 * in as few equal parts as keep every chart within it. A source keeps its
 * colour (its run's) in every part.
 */
export function split(build: (sources: ChartSource[]) => ChartSpec, sources: ChartSource[]): ChartSpec[] {
  const whole = build(sources)
  if (seriesIn(whole) <= MAX_SERIES) return [whole]
  const phases = [...new Set(sources.map((s) => s.phase.name))]
  return phases.flatMap((phase) => {
    const group = sources.filter((s) => s.phase.name === phase)
    for (let parts = 1; parts <= group.length; parts++) {
      const size = Math.ceil(group.length / parts)
      const chunks = Array.from({ length: Math.ceil(group.length / size) }, (_, i) => group.slice(i * size, (i + 1) * size))
      const specs = chunks.map(build)
      if (parts < group.length && specs.some((spec) => seriesIn(spec) > MAX_SERIES)) continue
      return specs.map((spec, i) => ({ ...spec, title: `${spec.title}: ${phase}${specs.length > 1 ? ` (${i + 1} of ${specs.length})` : ''}` }))
    }
    return []
  })
}

function seriesIn(spec: ChartSpec): number {
  return Math.max(0, ...spec.panels.map((p) => p.series.filter((s) => !s.noLine).length))
}

// ---- tables ----------------------------------------------------------------

export function table(header: string[], rows: string[][], caption?: string): string {
  const head = `<tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr>`
  const body = rows
    .map(
      (r) =>
        `<tr>${r.map((c, i) => (i === 0 ? `<th scope="row">${escapeHtml(c)}</th>` : `<td${FIGURE.test(c) ? '' : ' class="text"'}>${escapeHtml(c)}</td>`)).join('')}</tr>`,
    )
    .join('\n')
  return `<div class="scroll"><table>${caption ? `<caption>${escapeHtml(caption)}</caption>` : ''}<thead>${head}</thead><tbody>\n${body}\n</tbody></table></div>`
}

/**
 * A cell holding a figure ("14.8 ms", "-3", "[+1.9 ms, +2.5 ms]", "200: 100")
 * never wraps; words and lists ("200: 467, 500: 86, UND_ERR_SOCKET: 47", URLs) may.
 */
const FIGURE = /^(\[|[-+±(]?\d[^,]*$|-$)/

function section(heading: string, content: string): string {
  return `<section><h2>${escapeHtml(heading)}</h2>\n${content}\n</section>`
}

function runsSection(runs: NamedRun[]): string {
  const rows = runs.map(({ name, result }) => [
    name,
    result.label,
    result.startedAt,
    result.finishedAt,
    result.partial ? `interrupted in ${result.stoppedIn ?? '?'}` : 'complete',
    protocolsText(result),
    result.version,
  ])
  return section(runs.length === 1 ? 'Run' : 'Runs', table(['run', 'label', 'started', 'finished', 'status', 'protocol', 'hedgebench'], rows))
}

/** Between saved runs only (a run's own phases share one configuration). */
function configDifferences(c: Comparison): string {
  if (c.kind !== 'runs') return ''
  if (c.configDifferences.length === 0) return section('Configuration differences', "<p>The runs' configurations are identical.</p>")
  const rows = c.configDifferences.map((d) => [readableConfig(d.key), ...d.values.map((v) => readableConfigValue(d.key, v))])
  return section('Configuration differences', table(['setting', ...c.runs.map((r) => r.name)], rows, 'These differ between the runs: compare with care'))
}

/**
 * Over-time charts for phases with enough seconds to draw a line; a phase
 * shorter than that gets a sentence instead of a chart of one point.
 */
function overTimeSection(all: ChartSource[], measured: ChartSource[], figure: (spec: ChartSpec) => string): string {
  const { charted, tooShort } = chartableOverTime(all)
  const hedged = chartableOverTime(measured).charted.filter((s) => s.phase.hedging)
  const notes = tooShort.map(
    (s) =>
      `<p class="note">${escapeHtml(`${s.name}: ${(s.phase.durationMs / 1000).toFixed(2)} s is too short for a chart over time; its figures are in the tables.`)}</p>`,
  )
  const charts = [charted.length > 0 ? split(timelineSpec, charted) : [], hedged.length > 0 ? split(hedgesSpec, hedged) : []].flat().map(figure)
  const content = [...notes, ...charts].filter(Boolean).join('\n')
  return content ? section('Over time', content) : ''
}

function summarySection(sources: ChartSource[]): string {
  const header = ['phase', 'requests', 'ok', 'errors', 'req/s', 'min', 'p50', 'p90', 'p95', 'p99', 'p99.9', 'p99.99', 'max', 'mean', 'slow', 'status codes']
  const rows = sources.map(({ name, phase: p }) => {
    const l = p.latencyMs
    return [
      name,
      String(p.requests),
      String(p.ok),
      String(p.errors),
      p.rps.toFixed(1),
      ...[l.min, l.p50, l.p90, l.p95, l.p99, l['p99.9'], l['p99.99'], l.max, l.mean].map(formatMs),
      `${p.slow.count} over ${formatMs(p.slow.thresholdMs)}`,
      codes(p),
    ]
  })
  return section('Summary', table(header, rows))
}

function codes(p: PhaseResult): string {
  const all = { ...labelledStatuses(p.statusCodes), ...p.errorKinds }
  const said = Object.entries(p.errorMessages ?? {}).map(([k, v]) => `[${v}] ${k}`)
  return [
    Object.entries(all)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', '),
    ...said,
  ].join('; ')
}

function hedgingSection(sources: ChartSource[], runs: NamedRun[]): string {
  const hedged = sources.filter((s): s is ChartSource & { phase: { hedging: HedgingStats } } => s.phase.hedging !== undefined)
  if (hedged.length === 0) return ''
  const rows: Array<[string, (h: HedgingStats, p: PhaseResult) => string]> = [
    ['hedge delay', (h) => `${formatMs(h.delayMs)} (${h.delaySource})`],
    [
      'delay used',
      (h) =>
        `${formatMs(h.delayUsedMs.min)} / ${formatMs(h.delayUsedMs.p50)} / ${formatMs(h.delayUsedMs.max)} (min / p50 / max)${h.adaptive ? ', adaptive' : ''}`,
    ],
    ['max attempts', (h) => `${h.maxAttempts}${h.parallel ? ', parallel' : ''}`],
    ['budget', (h) => (h.budgetPct === null ? 'off' : `${h.budgetPct} %`)],
    ['cancel mode', (h) => h.cancelMode],
    ['hedges sent', (h) => String(h.hedgesSent)],
    ['stopped before the wire', (h) => `${h.unsent}${unsentBreakdown(h)}`],
    ['tied copies dropped (409)', (h) => (h.tiedDropped === undefined ? '-' : String(h.tiedDropped))],
    ['extra load', (_h, p) => `${extraLoadPct(p).toFixed(2)} %`],
    ['trigger rate', (h) => `${h.triggerRate.toFixed(2)} %`],
    ['wins (hedge / original)', (h) => `${h.hedgeWins} / ${h.originalWins}`],
    ['cancelled', (h) => String(h.cancelled)],
    ['cancels cost', (_h, p) => cancelCostText(p) ?? '-'],
    ['late answers discarded', (h) => String(h.lateDiscarded)],
    ['denied by budget', (h) => String(h.budgetDenied)],
    ['suppressed by deadline', (h) => String(h.deadlineSuppressed)],
    ['suppressed by saturation', (h) => suppressedText(h) ?? '0'],
    ['fired on non-fatal error', (h) => String(h.nonFatalTriggered)],
    ['loser runtime', (h) => loserRuntimeText(h) ?? '-'],
    ['attempts per request', (h) => attemptsPerRequestText(h) ?? '-'],
    ['note', (h) => triggerWinWarning(h) ?? '-'],
    ['timer lateness', (h) => `${formatMs(h.timerLatenessMs.p50)} / ${formatMs(h.timerLatenessMs.p99)} / ${formatMs(h.timerLatenessMs.max)} (p50 / p99 / max)`],
  ]
  const perAttempt = hedged.flatMap(({ name, phase }) =>
    phase.hedging.perAttempt.map((a) => [
      `${name} attempt ${a.attempt}`,
      String(a.count),
      formatMs(a.latencyMs.p50),
      formatMs(a.latencyMs.p99),
      formatMs(a.latencyMs.max),
    ]),
  )
  const advice = runs.flatMap(({ name, result }) => {
    const phase = result.phases.hedged
    return phase ? hedgingAdvice(phase, result.config).map((line) => `<li>${escapeHtml(runs.length > 1 ? `${name}: ${line}` : line)}</li>`) : []
  })
  return section(
    'Hedging',
    // Several runs' columns: their cells wrap, so the table fits the page.
    `<div class="wrap">${table(
      ['', ...hedged.map((s) => s.name)],
      rows.map(([label, get]) => [label, ...hedged.map((s) => get(s.phase.hedging, s.phase))]),
    )}</div>\n` +
      (advice.length > 0 ? `<ul class="warnings">${advice.join('')}</ul>\n` : '') +
      table(['attempt', 'count', 'p50', 'p99', 'max'], perAttempt, 'Latency of each attempt, from its own start'),
  )
}

/** hey's Details: where completed attempts' time went, per phase and attempt number (see details-text.ts). */
function detailsSection(sources: ChartSource[]): string {
  const stage = (s: StageSummary): string => (s.count === 0 ? '-' : `${formatMs(s.p50)} / ${formatMs(s.p99)} / ${formatMs(s.max)}`)
  const rows = sources.flatMap(({ name, phase }) =>
    (phase.details ?? []).map((d) => [
      phase.hedging ? `${name} ${d.attempt === 0 ? 'original' : `hedge ${d.attempt}`}` : name,
      String(d.write.count),
      `${stage(d.connect)}${d.connect.count > 0 ? ` (${d.connect.count})` : ''}`,
      stage(d.write),
      stage(d.wait),
      stage(d.read),
    ]),
  )
  if (rows.length === 0) return ''
  return section(
    'Details',
    table(
      ['attempts', 'completed', 'conn setup (opened)', 'req write', 'resp wait', 'resp read'],
      rows,
      'Where the time of completed attempts went: p50 / p99 / max',
    ),
  )
}

function replicasSection(sources: ChartSource[], runs: NamedRun[]): string {
  const rows = sources.flatMap(({ name, phase, runPhases }) => {
    const result = runs.find((r) => r.result.phases === runPhases)?.result
    return phase.replicas.map((r) => [
      name,
      r.url,
      result ? replicaProtocolLabel(result, r.url) : '-',
      String(r.requests),
      String(r.attempts),
      String(r.wins),
      String(r.cancelled),
      String(r.errors),
      r.ejections === undefined ? '-' : String(r.ejections),
      formatMs(r.latencyMs.p50),
      formatMs(r.latencyMs.p99),
    ])
  })
  if (rows.length === 0) return ''
  const events = sources.flatMap(({ name, phase }) =>
    (phase.ejections ?? []).map((e) => [
      name,
      e.url,
      formatMs(e.atMs),
      formatMs(e.forMs),
      e.readmittedAtMs === null ? 'still out' : formatMs(e.readmittedAtMs),
      ejectionCause(e),
    ]),
  )
  const ejectionTable =
    events.length > 0
      ? `\n${table(['phase', 'url', 'ejected at', 'for', 'readmitted at', 'cause'], events, 'Outlier ejections (times from the phase start)')}`
      : ''
  return section(
    'Replicas',
    table(['phase', 'url', 'protocol', 'finished', 'attempts', 'wins', 'cancelled', 'errors', 'ejected', 'p50', 'p99'], rows) + ejectionTable,
  )
}

/** A mix (--targets): each target's measured phases (target-rows.ts), a run's table under its name. */
function targetsSection({ name, result }: NamedRun): string {
  const rows = targetRows(result)
  return rows.length === 0 ? '' : section('Targets', table(TARGET_HEADER, rows.map(targetCells), name))
}

/** The target's own account (--server-stats, the built-in replicas): counts, work done, confirmed cancels, utilisation. */
function serverSection(sources: ChartSource[]): string {
  const rows = sources.flatMap(({ name, phase, runPhases }) => {
    const s = phase.server
    if (!s) return []
    return [
      [
        name,
        `${s.received} / ${s.clientAttempts} ${crossCheckLabel(s)}${coveredText(s)}`,
        workText(s, coveredPhases(s, phase, runPhases ?? {})) ?? '-',
        cancellationSuccessText(s, phase.hedging) ?? '-',
        utilisationText(s) ?? '-',
      ],
    ]
  })
  if (rows.length === 0) return ''
  return section('Server cross-check', table(['phase', 'received / client attempts', 'work', 'cancellation success', 'utilisation (mean executing)'], rows))
}

function generatorSection(sources: ChartSource[]): string {
  const rows = sources.map(({ name, phase: { generator: g } }) => [
    name,
    g.eventLoopDelayMs.samples === 0
      ? '- (phase under one 10 ms sample)'
      : `${formatMs(g.eventLoopDelayMs.p50)} / ${formatMs(g.eventLoopDelayMs.p99)} / ${formatMs(g.eventLoopDelayMs.max)}`,
    g.gc ? `${g.gc.count} (${g.gc.young} young) / ${formatMs(g.gc.totalMs)} / ${formatMs(g.gc.maxMs)}` : '',
    `${g.cpuPct.toFixed(1)} %${g.cpuJudged === false ? ' (phase too short to judge)' : ''}`,
    `${g.cores}${g.machineCores ? ` on ${g.machineCores} cores` : ''}`,
    g.saturated ? `yes${g.saturatedBy?.length ? ` (${g.saturatedBy.join(', ')})` : ''}` : 'no',
    g.warnings.join('; '),
  ])
  return section(
    'Load generator',
    table(
      ['phase', 'event-loop delay p50 / p99 / max', 'GC pauses count / total / longest', 'CPU (of one core)', 'generator threads', 'saturated', 'warnings'],
      rows,
    ),
  )
}

/** A merged result's generators (see generators-text.ts): the merge's figures, then one row per generator. */
function mergeSection({ name, result }: NamedRun): string {
  const rows = generatorTable(result)
  if (rows.length === 0) return ''
  const facts = mergeFacts(result)
    .map((line) => `<p>${escapeHtml(line)}</p>`)
    .join('\n')
  return section(`Generators: ${name}`, `${facts}\n${table(rows[0]!, rows.slice(1))}`)
}

/** --hedge-by grpc-js (see grpc-client-text.ts): asked vs did, the tail beside the other phases, the caveats. */
function grpcClientSection({ name, result }: NamedRun): string {
  const g = result.grpcClient
  if (!g) return ''
  const tail = grpcClientTail(result)
  const caveats = g.caveats.length > 0 ? `\n<ul class="warnings">${g.caveats.map((c) => `<li>${escapeHtml(c)}</li>`).join('')}</ul>` : ''
  return section(
    `Hedged by ${g.client}: ${name}`,
    `${table(['', ''], grpcClientFacts(g))}\n${table(tail[0]!, tail.slice(1), "Tail: plain, hedgebench and the client's own hedging")}${caveats}`,
  )
}

function configSection(runs: NamedRun[]): string {
  const entries = runs.map((r) => configEntries(r.result.config))
  const keys = [...new Set(entries.flatMap((e) => [...e.keys()]))]
  const rows = keys.flatMap((k) => [
    [readableConfig(k), ...entries.map((e) => readableConfigValue(k, e.get(k) ?? ''))],
    // What the warm-up did, beside what was asked: the default one runs past its count to a minimum duration.
    ...(k === 'warmup' ? [['warm-up requests run', ...runs.map((r) => warmupRan(r.result))]] : []),
    // What --skip-first left out of each phase, as the text report's "Skipped:" line says it.
    ...(k === 'skipFirst' ? [['requests left out (--skip-first)', ...runs.map((r) => skippedText(r.result))]] : []),
  ])
  return section('Configuration', table(['setting', ...runs.map((r) => r.name)], rows))
}

/** "plain 7, hedged 7": each phase's requests sent first and left out of every figure, or "none". */
function skippedText(result: RunResult): string {
  const parts = Object.values(result.phases).flatMap((p) => (p?.skipped === undefined ? [] : [`${p.name} ${p.skipped}`]))
  return parts.length > 0 ? parts.join(', ') : 'none'
}

/** "1461 in 2.01 s", or "none". */
function warmupRan(result: RunResult): string {
  const w = result.phases.warmup
  return w ? `${w.requests} in ${formatMs(w.durationMs)}` : 'none'
}

// ---- page ------------------------------------------------------------------

const CSS = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; margin: 24px auto; max-width: 1400px; padding: 0 16px; }
.verdict { font-size: 17px; font-weight: 600; margin: 8px 0; } .legend, .note { color: #555; font-size: 13px; }
.scroll { overflow-x: auto; } table.comparison { font-size: 13px; }
.wrap td { white-space: normal; } .wrap td.text { min-width: 0; } td .sub { display: block; color: #555; font-size: 12px; }
td { white-space: nowrap; } td.text { white-space: normal; overflow-wrap: anywhere; min-width: 8em; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0 16px; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: right; vertical-align: top; }
thead th, tbody th { background: #f6f6f6; text-align: left; }
td.better { color: #1a7f37; font-weight: 600; } td.worse { color: #c62828; font-weight: 600; }
.warnings li { color: #8a5300; }
.verdict { font-weight: 600; } .verdict.good { color: #1a7f37; } .verdict.neutral { color: #8a5300; } .verdict.bad { color: #c62828; }
figure { margin: 16px 0; } svg { max-width: 100%; height: auto; font: 12px system-ui, sans-serif; background: #fff; }
svg .title { font-size: 14px; font-weight: 600; } svg .tick, svg .legend { fill: #444; } svg .axis { fill: #222; }
svg .grid { stroke: #e5e5e5; } svg .frame { fill: none; stroke: #bbb; }
`

/**
 * The page; with charts, their data as a JSON block and the one script that
 * draws them, allowed by the hash of its exact text.
 */
export function page(title: string, body: string, charts: ChartSpec[] = []): string {
  const csp = charts.length > 0 ? `${HTML_CSP}; script-src ${scriptSource(LIVE_SCRIPT)}` : HTML_CSP
  const scripts =
    charts.length > 0 ? `\n<script type="application/json" id="${LIVE_DATA_ID}">${liveChartData(charts)}</script>\n<script>${LIVE_SCRIPT}</script>` : ''
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="hedgebench">
<title>${escapeHtml(title)}</title>
<style>${CSS}${charts.length > 0 ? LIVE_CSS : ''}</style>
</head>
<body>
${body}${scripts}
</body>
</html>
`
}
