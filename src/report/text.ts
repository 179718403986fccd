/**
 * The default report. Each measured phase reads like hey's output (Summary,
 * Response time histogram, Latency distribution, Status code distribution,
 * Error distribution), extended with the tail percentiles and the slow
 * count; a run with both phases ends with the plain | hedged comparison and
 * a one-line verdict, the figure the user came for. Pure: result in, text out.
 */
import { extraLoadPct } from '../results/extra-load.js'
import { change, hedgeVerdict } from './verdict.js'
import { hedgingAdvice } from './hedging-advice.js'
import { formatMs, formatThreshold } from '../core/duration.js'
import { targetsText } from './target-rows.js'
import { statusLabel } from './status-label.js'
import { grpcClientText } from './grpc-client-text.js'
import { detailsText } from './details-text.js'
import { redactUrl } from '../core/redact.js'
import { PERCENTILE_KEYS } from '../results/run-result.js'
import { round3 } from '../core/round.js'
import { askedRate } from './asked-rate.js'
import { phaseScheduleText, schedulesHeader } from './schedule-text.js'
import { protocolsText } from '../results/wire-protocol.js'
import { generatorFailuresText, inFlightText, interruptedText, partialText } from './interrupted-text.js'
import type {
  Figures,
  GeneratorHealth,
  HedgingStats,
  LatencySummary,
  PhaseResult,
  ReplicaFigures,
  EjectionEvent,
  RunResult,
  ServerCrossCheck,
} from '../results/run-result.js'
import { histogramBars, histogramBuckets } from './histogram-bars.js'
import { unsentBreakdown } from './unsent-text.js'
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
import { formatTable } from './table.js'
import { generatorLines, shardBlock } from './generators-text.js'
import { rateShareOf, shareOf } from '../results/shard-share.js'
import { crossCheckVerdict, explainedText } from './server-check-verdict.js'
import { ejectionCause } from './ejection-cause.js'

export interface TextOptions {
  /** ANSI colours for headings, warnings and the verdict (only on a TTY). */
  color?: boolean
  /** Columns the report is to fit (the terminal's): a table too wide for them is laid out narrower. Unlimited when absent. */
  width?: number
}

type Paint = (style: Style, text: string) => string
type Style = 'bold' | 'red' | 'yellow' | 'green' | 'dim'
const ANSI: Record<Style, [number, number]> = { bold: [1, 22], red: [31, 39], yellow: [33, 39], green: [32, 39], dim: [2, 22] }

const painter =
  (color: boolean): Paint =>
  (style, text) =>
    color ? `\u001b[${ANSI[style][0]}m${text}\u001b[${ANSI[style][1]}m` : text

export function renderText(result: RunResult, opts: TextOptions = {}): string {
  const paint = painter(opts.color ?? false)
  const { warmup, plain, hedged } = result.phases
  const blocks: string[][] = [header(result), banner(result, paint)]
  if (warmup) blocks.push(warmupLine(warmup, hedged?.hedging))
  for (const phase of [plain, hedged]) if (phase) blocks.push(phaseReport(phase, result, paint, opts.width))
  if (plain && hedged) blocks.push(comparison(plain, hedged, result, paint))
  blocks.push(targetsText(result))
  blocks.push(shardBlock(result))
  blocks.push(grpcClientText(result))
  blocks.push(footer(result, paint))
  return `${blocks
    .filter((b) => b.length > 0)
    .map((b) => b.join('\n'))
    .join('\n\n')}\n`
}

// ---- run-level blocks ------------------------------------------------------

function header(result: RunResult): string[] {
  const c = result.config
  const urls = c.urls.length === 1 ? redactUrl(c.urls[0]!, c.showSecrets) : `${c.urls.length} replicas`
  // One shard's own report: its share of the run's -n and -q (the config is the whole run's, for merge).
  const part = result.shard && !result.generators ? result.shard : null
  const size =
    c.requests !== null ? `-n ${part ? `${shareOf(c.requests, part)} of ${c.requests}` : c.requests} per phase` : `-z ${formatMs(c.durationMs ?? 0)} per phase`
  // Interleaved: one window of 2n requests, each one's phase drawn at random, so the phases get about n each.
  const mixed = c.schedule === 'interleaved' && c.mode === 'both' && c.requests !== null ? ' on average' : ''
  const rate =
    c.rate !== null && !c.loadSchedule ? ` · -q ${part ? `${round3(rateShareOf(c.rate, part))}/s of ${c.rate}` : c.rate}/s (open loop)` : schedulesHeader(c)
  const shard = part ? ` · shard ${part.index}/${part.count}` : ''
  const fanout = c.fanout > 1 ? ` · fan-out ${c.fanout}` : ''
  const connections = c.connections !== undefined ? ` · ${c.connections} connection${c.connections === 1 ? '' : 's'} per replica` : ''
  return [
    `hedgebench ${result.version} · ${JSON.stringify(result.label)} · ${result.startedAt} -> ${result.finishedAt}`,
    `${c.method} ${urls} · ${inFlight(c, result.generators?.length ?? 1)} · ${size}${mixed}${rate}${fanout}${connections} · mode ${c.mode} (${c.schedule}) · ${protocolsText(result)}${shard}`,
  ]
}

/**
 * Requests in flight as the run had them: never more than -n (the load
 * generator clamps -c to it); a merged run had -c in every shard.
 */
function inFlight(c: RunResult['config'], generators: number): string {
  if (generators > 1) return `-c ${c.concurrency} per shard x ${generators} (${c.concurrency * generators} in flight)`
  if (c.requests === null || c.requests >= c.concurrency) return `-c ${c.concurrency}`
  return `-c ${c.requests} (-c ${c.concurrency} clamped to -n ${c.requests})`
}

/** What must not be missed: an interrupted run and the run's warnings. */
function banner(result: RunResult, paint: Paint): string[] {
  const lines: string[] = []
  const partial = partialText(result)
  if (partial) lines.push(paint('red', partial))
  for (const warning of result.warnings) lines.push(paint('yellow', `WARNING: ${warning}`))
  return lines
}

function footer(result: RunResult, paint: Paint): string[] {
  const lines: string[] = []
  if (result.warnings.length > 0) lines.push(paint('yellow', `${result.warnings.length} warning(s), listed at the top of this report`))
  if (result.partial) lines.push(paint('red', `PARTIAL: interrupted during ${result.stoppedIn ?? 'the run'}`))
  return lines
}

/**
 * The warm-up is excluded from every statistic; one line says what it was.
 * Its p95 covers every warm-up request, while a delay derived from the
 * warm-up leaves out its first requests, so the line says why the two differ.
 */
function warmupLine(w: PhaseResult, hedging: HedgingStats | undefined): string[] {
  const line = `Warm-up (excluded from statistics): ${w.requests} requests in ${formatMs(w.durationMs)}, p50 ${formatMs(w.latencyMs.p50)}, p95 ${formatMs(w.latencyMs.p95)} (all of them), ${w.errors} errors${w.interrupted ? `, ${w.interrupted} interrupted${inFlightText(w)}` : ''}`
  const basis = hedging?.warmupBasis
  if (!basis) return [line]
  // What was left out, counted: a default warm-up that ran past its requests (its least duration) left out fewer than half.
  const left = basis.of - basis.requests
  return [
    line,
    // A merged source reads "per target, …" or "per shard, …": no article before it.
    `  the hedge delay is not this p95: it is ${hedging!.delaySource.startsWith('per ') ? '' : 'the '}${hedging!.delaySource}${left > 0 ? `, leaving out the first ${left}, which warm connections and the JIT` : ''}`,
  ]
}

// ---- one phase, in hey's order ---------------------------------------------

function phaseReport(phase: PhaseResult, result: RunResult, paint: Paint, width = Infinity): string[] {
  const sections: string[][] = [
    [paint('bold', `=== ${phase.name} phase ===`)],
    summary(phase),
    responseHistogram(phase),
    latencyDistribution(phase.latencyMs, phase.serviceTime !== undefined),
    phase.details ? detailsText(phase.details, phase.hedging !== undefined) : [],
    statusCodes(phase),
    errorDistribution(phase),
    phase.hedging ? hedging(phase, phase.hedging, result, paint) : [],
    replicas(phase.replicas, phase.hedging !== undefined, paint, result.config.showSecrets, width),
    phase.ejections?.length ? ejections(phase.ejections, result.config.showSecrets) : [],
    phase.calls ? fanoutCalls(phase.calls) : [],
    phase.serviceTime ? serviceTime(phase, phase.serviceTime, askedRate(result)) : [],
    phaseScheduleText(phase, result.config),
    phase.server ? serverCheck(coveredPhases(phase.server, phase, result.phases), phase, phase.server, paint) : [],
    generator(phase.generator, paint),
  ]
  if (phase.requests === 0 && result.partial) sections.splice(1, 0, ['  (no request finished in this phase before the stop)'])
  // A blank line between sections, as hey prints them.
  return sections.filter((s) => s.length > 0).flatMap((s, i) => (i === 0 ? s : ['', ...s]))
}

const pct = (part: number, whole: number): string => (whole > 0 ? `${((part / whole) * 100).toFixed(2)}%` : '0.00%')

/** HTTP/2 streams the server left unprocessed and that went again: counted once, not errors. */
const resentText = (n: number): string =>
  `${n} stream${n === 1 ? '' : 's'} refused by a GOAWAY (or REFUSED_STREAM) before the server processed ${n === 1 ? 'it' : 'them'}, resent`

function summary(p: PhaseResult): string[] {
  const rows = [
    ['Total:', formatMs(p.durationMs)],
    ['Slowest:', formatMs(p.latencyMs.max)],
    ['Fastest:', formatMs(p.latencyMs.min)],
    ['Average:', formatMs(p.latencyMs.mean)],
    ['Stddev:', formatMs(p.latencyMs.stddev)],
    ['Requests/sec:', p.rps.toFixed(2)],
    [
      'Requests:',
      `${p.requests} (${p.attempts} attempt${p.attempts === 1 ? '' : 's'} on the wire, ${p.connectionsOpened} connection${p.connectionsOpened === 1 ? '' : 's'} opened)`,
    ],
    ['Errors:', `${p.errors} (${pct(p.errors, p.requests)})`],
    ...(p.streamsResentAfterGoaway ? [['Resent:', resentText(p.streamsResentAfterGoaway)]] : []),
    ...(p.interrupted ? [['Interrupted:', interruptedText(p)!]] : []),
    ...(p.generatorFailures ? [['Generator failures:', generatorFailuresText(p)!]] : []),
    ['Slow:', `${p.slow.count} requests over ${formatThreshold(p.slow.thresholdMs)} (${pct(p.slow.count, p.requests)})`],
    ['Total data:', formatBytes(p.bytes)],
    ['Size/request:', formatBytes(p.requests > 0 ? Math.round(p.bytes / p.requests) : 0)],
  ]
  return ['Summary:', ...indent(formatTable(rows, ['left', 'left']))]
}

function responseHistogram(p: PhaseResult): string[] {
  if (p.requests === 0) return []
  const buckets = histogramBuckets(p.histogram, p.latencyMs.min, p.latencyMs.max)
  // A saved file whose histogram was damaged still reports its figures (as compare and the HTML report do).
  if (buckets === null) return ['Response time histogram:', '  (not shown: the saved histogram cannot be read; the file is damaged or was edited)']
  return ['Response time histogram:', ...indent(histogramBars(buckets))]
}

/** hey's "N% in X" lines, down to p99.99; in open loop, said to be from the intended start. */
function latencyDistribution(l: LatencySummary, openLoop: boolean): string[] {
  const rows = PERCENTILE_KEYS.map((key) => [`${key.slice(1)}%`, 'in', formatMs(l[key])])
  const from = openLoop ? ["  (from each request's intended start on the -q schedule: corrected for coordinated omission, as wrk2's)"] : []
  return ['Latency distribution:', ...from, ...indent(formatTable(rows, ['right', 'left', 'right']))]
}

function statusCodes(f: Figures): string[] {
  const entries = Object.entries(f.statusCodes).sort(([a], [b]) => Number(a) - Number(b))
  if (entries.length === 0) return []
  return ['Status code distribution:', ...entries.map(([code, n]) => `  [${statusLabel(Number(code))}] ${n} responses`)]
}

/** Transport errors by kind, and failed answers by what their server said (`[30] UNAVAILABLE: simulated unavailable`, as ghz lists them). */
function errorDistribution(f: Figures): string[] {
  const entries = [...Object.entries(f.errorKinds), ...Object.entries(f.errorMessages ?? {})].sort(([, a], [, b]) => b - a)
  if (entries.length === 0) return []
  return ['Error distribution:', ...entries.map(([kind, n]) => `  [${n}] ${kind}`)]
}

// ---- hedging ---------------------------------------------------------------

function hedging(p: PhaseResult, h: HedgingStats, result: RunResult, paint: Paint): string[] {
  const how = h.parallel && !h.tied ? 'all attempts sent at once (--parallel)' : h.delaySource
  const rows = [
    ['Delay:', `${formatMs(h.delayMs)} (${how})`],
    ...(h.adaptive
      ? [['Adaptive delay:', `min ${formatMs(h.delayUsedMs.min)} / p50 ${formatMs(h.delayUsedMs.p50)} / max ${formatMs(h.delayUsedMs.max)}`]]
      : []),
    ['Policy:', `max ${h.maxAttempts} attempts, budget ${h.budgetPct === null ? 'off' : `${h.budgetPct}%`}, cancel ${h.cancelMode}`],
    ...optionalRow('Allowed by:', result.config.hedge.allowedBy ?? null),
    ['Hedges sent:', `${h.hedgesSent} (${signedPct(extraLoadPct(p))} extra load); ${h.unsent} more stopped before the wire${unsentBreakdown(h)}`],
    ...(h.tiedDropped === undefined
      ? []
      : [
          [
            'Tied:',
            `${h.tiedDropped} copies dropped by their server (409: the twin had started elsewhere)${h.tiedDropped === 0 ? '; none at all: does the target implement tied requests? (docs/policy.md, tied requests)' : ''}`,
          ],
        ]),
    ['Trigger rate:', `${h.triggerRate.toFixed(1)}% of requests fired a hedge`],
    ['Wins:', `hedge ${h.hedgeWins} / original ${h.originalWins}`],
    ['Cancelled:', `${h.cancelled} attempts aborted; ${h.lateDiscarded} late answers discarded`],
    ...optionalRow('Cancels:', cancelCostText(p)),
    [
      'Budget denied:',
      `${h.budgetDenied}${h.slowBudgetDenied ? `; ${h.slowBudgetDenied} requests over ${formatThreshold(p.slow.thresholdMs)} were among those refused` : ''}`,
    ],
    ['Deadline suppressed:', String(h.deadlineSuppressed)],
    ...optionalRow('Saturation suppressed:', suppressedText(h)),
    ['Non-fatal triggered:', String(h.nonFatalTriggered)],
    ...optionalRow('Loser runtime:', loserRuntimeText(h)),
    ...optionalRow('Attempts per request:', attemptsPerRequestText(h)),
    ['Timer lateness:', `p50 ${formatMs(h.timerLatenessMs.p50)} / p99 ${formatMs(h.timerLatenessMs.p99)} / max ${formatMs(h.timerLatenessMs.max)}`],
    ['Connections opened:', String(p.connectionsOpened)],
  ]
  const warning = triggerWinWarning(h)
  const advice = hedgingAdvice(p, result.config).map((line) => paint('yellow', `  ! ${line}`))
  return ['Hedging:', ...indent(formatTable(rows, ['left', 'left'])), ...(warning ? [`  Note: ${warning}`] : []), ...advice, ...perAttempt(h.perAttempt)]
}

const optionalRow = (label: string, text: string | null): string[][] => (text === null ? [] : [[label, text]])

function perAttempt(attempts: HedgingStats['perAttempt']): string[] {
  if (attempts.length === 0) return []
  const rows = [
    ['attempt', 'count', 'p50', 'p99', 'p99.9', 'max'],
    ...attempts.map((a) => [
      a.attempt === 0 ? '0 (original)' : `${a.attempt} (hedge)`,
      String(a.count),
      ...(['p50', 'p99', 'p99.9', 'max'] as const).map((k) => formatMs(a.latencyMs[k])),
    ]),
  ]
  return ['  Latency per attempt (from its own start):', ...indent(formatTable(rows), 4)]
}

// ---- per-replica and the optional sections ---------------------------------

/** A replica erroring or answering far worse than the others is marked, so a broken one stands out. */
/** `shown`: the names --show-secret kept in the URLs (the figures carry them redacted otherwise). */
function replicas(list: ReplicaFigures[], hedged: boolean, paint: Paint, shown: readonly string[] = [], width = Infinity): string[] {
  if (list.length === 0) return []
  const ejecting = list.some((r) => r.ejections !== undefined)
  const rows = [
    ['url', 'attempts', 'ok', 'errors', 'p50', 'p99', 'max', 'wins', ...(hedged ? ['cancelled'] : []), ...(ejecting ? ['ejected'] : []), ''],
    ...list.map((r) => [
      redactUrl(r.url, shown),
      String(r.attempts),
      String(r.ok),
      String(r.errors),
      formatMs(r.latencyMs.p50),
      formatMs(r.latencyMs.p99),
      formatMs(r.latencyMs.max),
      String(r.wins),
      ...(hedged ? [String(r.cancelled)] : []),
      ...(ejecting ? [String(r.ejections ?? 0)] : []),
      replicaFlag(r, list),
    ]),
  ]
  const red = (line: string, flagged: boolean): string => (flagged ? paint('red', line) : line)
  const lines = formatTable(rows)
  if (Math.max(...lines.map((l) => l.length)) + 2 <= width) return ['Replicas:', ...indent(lines.map((l) => red(l, l.endsWith('!'))))]
  // Too wide for the terminal (URLs are long): each replica's URL on a line of its own above its figures.
  const [header, ...figures] = formatTable(
    rows.map((r) => r.slice(1)),
    rows[0]!.slice(1).map(() => 'right' as const),
  )
  const narrow = figures.flatMap((line, i) => [red(rows[i + 1]![0]!, line.endsWith('!')), red(line, line.endsWith('!'))])
  return ['Replicas:', ...indent([header!, ...narrow])]
}

/** When outlier detection took a replica out, and when it came back (on probation). */
function ejections(events: EjectionEvent[], shown: readonly string[] = []): string[] {
  const lines = events.map((e) => {
    const back = e.readmittedAtMs === null ? 'still out at the end' : `readmitted at ${formatMs(e.readmittedAtMs)}`
    return `${redactUrl(e.url, shown)} ejected at ${formatMs(e.atMs)} for ${formatMs(e.forMs)} (${ejectionCause(e)}); ${back}`
  })
  return ['Ejections:', ...indent(lines)]
}

/**
 * Compared with the other replicas together: no attempts, twice their error
 * rate (and 5 %+), or three times their median. The median is of replicas
 * that mostly answered: a dead one's fast refusals are not a latency to be
 * slow against.
 */
function replicaFlag(r: ReplicaFigures, list: ReplicaFigures[]): string {
  const others = list.filter((x) => x !== r)
  const otherAttempts = others.reduce((n, x) => n + x.requests, 0)
  if (others.length === 0 || otherAttempts === 0) return ''
  if (r.requests === 0) return '<- no answers !'
  const rate = r.errors / r.requests
  const otherRate = others.reduce((n, x) => n + x.errors, 0) / otherAttempts
  if (rate >= 0.05 && rate >= 2 * otherRate) return `<- ${(rate * 100).toFixed(1)}% errors !`
  const otherP50 = median(others.filter((x) => x.requests > 0 && 2 * x.errors < x.requests).map((x) => x.latencyMs.p50))
  if (otherP50 > 0 && r.latencyMs.p50 > 3 * otherP50) return '<- slow !'
  return ''
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? 0 : sorted[Math.floor((sorted.length - 1) / 2)]!
}

function fanoutCalls(calls: Figures & { fanout: number }): string[] {
  const l = calls.latencyMs
  return [
    `Fan-out calls (${calls.fanout} per request; a request waits for all of them):`,
    `  ${calls.requests} calls, ${calls.errors} errors, ${calls.slow.count} over ${formatThreshold(calls.slow.thresholdMs)} (${pct(calls.slow.count, calls.requests)})`,
    `  p50 ${formatMs(l.p50)} · p99 ${formatMs(l.p99)} · p99.9 ${formatMs(l['p99.9'])} · max ${formatMs(l.max)}`,
  ]
}

/** Open loop: latency from the scheduled send is the headline; this is from the actual send. */
function serviceTime(phase: PhaseResult, s: NonNullable<PhaseResult['serviceTime']>, rate: number | null): string[] {
  const l = s.latencyMs
  const late =
    s.lateSends === 0
      ? '0 sends left later than scheduled'
      : `${s.lateSends} sends left later than scheduled: every -c slot was busy (raise -c when the target's stalls hold them), or the generator fell behind`
  return [
    'Service time (from the actual send, not corrected for coordinated omission):',
    `  p50 ${formatMs(l.p50)} · p99 ${formatMs(l.p99)} · p99.9 ${formatMs(l['p99.9'])} · max ${formatMs(l.max)}`,
    `  ${late}`,
    ...(rate === null ? [] : [`  rate: ${phase.rps.toFixed(1)}/s achieved of ${rate}/s asked (over the phase, the last answers' wait included)`]),
  ]
}

function serverCheck(covered: PhaseResult[], phase: PhaseResult, s: ServerCrossCheck, paint: Paint): string[] {
  const verdict = crossCheckVerdict(s) === 'MATCH' ? paint('green', 'MATCH') : paint('red', 'MISMATCH')
  // A shortfall within the early cancels is said as such, in place of the count and its verdict.
  const explained = explainedText(s, coveredText(s))
  const work = workText(s, covered)
  const cancels = cancellationSuccessText(s, phase.hedging)
  const busy = utilisationText(s)
  return [
    'Server cross-check:',
    explained ? `  ${explained}` : `  server received ${s.received} vs client attempts ${s.clientAttempts}${coveredText(s)}: ${verdict}`,
    `  completed ${s.completed}, cancelled ${s.cancelled}, carrying the hedge header ${s.hedgeHeader}${s.stalled === undefined ? '' : `, stalled on purpose ${s.stalled}`}`,
    ...(work ? [`  work: ${work}`] : []),
    ...(cancels ? [`  cancellation success: ${cancels}`] : []),
    ...(busy ? [`  replica utilisation (mean requests executing): ${busy}`] : []),
  ]
}

function generator(g: GeneratorHealth, paint: Paint): string[] {
  return ['Generator:', ...generatorLines(g).map((line) => `  ${line}`), ...g.warnings.map((w) => paint('yellow', `  WARNING: ${w}`))]
}

// ---- plain vs hedged ---------------------------------------------------------

function comparison(plain: PhaseResult, hedged: PhaseResult, result: RunResult, paint: Paint): string[] {
  const latencyRow = (key: keyof LatencySummary, label: string = key): string[] => [
    label,
    formatMs(plain.latencyMs[key]),
    formatMs(hedged.latencyMs[key]),
    change(plain.latencyMs[key], hedged.latencyMs[key]),
  ]
  const countRow = (label: string, a: number, b: number, fmt: (n: number) => string = String): string[] => [label, fmt(a), fmt(b), change(a, b)]
  const rows = [
    ['', 'plain', 'hedged', 'change'],
    ...PERCENTILE_KEYS.map((key) => latencyRow(key)),
    latencyRow('mean'),
    latencyRow('max'),
    countRow(`over ${formatThreshold(plain.slow.thresholdMs)}`, plain.slow.count, hedged.slow.count),
    countRow('errors', plain.errors, hedged.errors),
    // Extra load, not the change in attempts: under -z the phases differ in size.
    ['extra load', signedPct(extraLoadPct(plain)), signedPct(extraLoadPct(hedged)), ''],
    countRow('requests/s', plain.rps, hedged.rps, (n) => n.toFixed(2)),
  ]
  return [paint('bold', '=== plain vs hedged ==='), ...indent(formatTable(rows)), '', ...verdict(plain, hedged, result, paint)]
}

const signedPct = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`

const TONE: Record<ReturnType<typeof hedgeVerdict>['tone'], Style> = { good: 'green', bad: 'red', neutral: 'yellow' }

function verdict(plain: PhaseResult, hedged: PhaseResult, result: RunResult, paint: Paint): string[] {
  const v = hedgeVerdict(plain, hedged, result)
  return [paint(TONE[v.tone], `Verdict: ${v.headline}`), ...v.details.map((d) => paint(TONE[v.tone], `  ! ${d}`))]
}

// ---- small formatting helpers ------------------------------------------------

function indent(lines: string[], by = 2): string[] {
  const pad = ' '.repeat(by)
  return lines.map((l) => pad + l)
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`
  return `${(n / 1024 ** 3).toFixed(2)} GiB`
}
