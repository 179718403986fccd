import { test } from 'node:test'
import { createHash } from 'node:crypto'
import assert from 'node:assert/strict'
import { compareRuns, compareWithin } from '../src/report/compare.js'
import { HTML_CSP, renderHtml } from '../src/report/html.js'
import { hedgedRunWithTimeline } from './helpers/html-fixture.js'
import { makeConfig, makeGrpcClient, makeHedgedRun, makePhase, makeRunResult, stallingLatencies } from './helpers/result-fixture.js'
import { mergeResults } from '../src/stats/result-merge.js'
import { formatMs } from '../src/core/duration.js'
import { escapeHtml } from '../src/report/escape.js'
import { hedgeVerdict } from '../src/report/verdict.js'

function attr(html: string, name: string): string[] {
  return [...html.matchAll(new RegExp(`${name}="([^"]*)"`, 'g'))].map((m) => m[1]!)
}

test('one run: every chart with one series per phase and metric', () => {
  const html = renderHtml([hedgedRunWithTimeline()])
  assert.deepEqual(attr(html, 'data-chart'), ['percentiles', 'histogram', 'timeline', 'hedges'])
  const series = new Set(attr(html, 'data-series'))
  for (const phase of ['plain', 'hedged']) {
    for (const metric of ['percentiles', 'histogram', 'p50', 'p99', 'rps']) assert.ok(series.has(`${phase}:${metric}`), `${phase}:${metric}`)
  }
  for (const metric of ['p50', 'p99', 'rps']) assert.ok(series.has(`warmup:${metric}`), `warmup:${metric} on the timeline`)
  assert.ok(series.has('hedged:hedges') && series.has('hedged:delay'))
  assert.ok(!series.has('plain:hedges'), 'only hedged phases on the hedging chart')
  assert.ok(!series.has('warmup:percentiles'), 'warm-up is not a measured distribution')
  // Every series has drawing data.
  for (const m of html.matchAll(/<path data-series="([^"]*)" d="([^"]*)"/g)) assert.match(m[2]!, /^M[\d.]+,[\d.]+ [LH]/, `${m[1]} is drawn`)
})

/** The page's script elements: attributes and the exact text between the tags. */
function scripts(html: string): Array<{ attrs: string; text: string }> {
  return [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/gi)].map((m) => ({ attrs: m[1]!, text: m[2]! }))
}

test("self-contained: CSP allowing one inline script by its hash, the charts' data as JSON, no external reference", () => {
  const html = renderHtml([hedgedRunWithTimeline()], { comparison: compareWithin(hedgedRunWithTimeline()) })
  assert.equal(HTML_CSP, "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
  const [data, code, ...more] = scripts(html)
  assert.deepEqual(more, [], 'two script elements: the data and the code')
  assert.equal(data!.attrs, ' type="application/json" id="hedgebench-charts"')
  assert.equal(code!.attrs, '', 'the code is inline, no src')
  const hash = createHash('sha256').update(code!.text, 'utf8').digest('base64')
  assert.ok(
    html.includes(`<meta http-equiv="Content-Security-Policy" content="${HTML_CSP}; script-src 'sha256-${hash}'">`),
    'the CSP allows exactly the script on the page',
  )
  // The four charts' data, in the order of their figures.
  const specs = JSON.parse(data!.text) as Array<{ title: string }>
  assert.deepEqual(
    specs.map((s) => s.title),
    ['Latency by percentile', 'Response-time histogram', 'Latency and throughput over time', 'Hedging over time'],
  )
  assert.deepEqual(attr(html, 'data-live'), ['0', '1', '2', '3'])
  assert.doesNotMatch(html, /<link|<img|<iframe|@import|url\(/i)
  for (const ref of [...attr(html, 'src'), ...attr(html, 'href')]) assert.fail(`external reference ${ref}`)
  // The only URLs are the SVG namespace, uPlot's own banner and the fixture's target URLs printed as text.
  for (const url of html.match(/https?:\/\/[^\s"<]+/g) ?? [])
    assert.ok(url === 'http://www.w3.org/2000/svg' || url === 'https://github.com/leeoniya/uPlot' || url.startsWith('http://127.0.0.1:'), url)
})

test('tables: summary, hedging, configuration, comparison', () => {
  const run = hedgedRunWithTimeline()
  const html = renderHtml([run], { comparison: compareWithin(run), title: 'My report' })
  assert.match(html, /<title>My report<\/title>/)
  for (const heading of ['Run', 'Plain vs hedged', 'Summary', 'Hedging', 'Replicas', 'Load generator', 'Configuration'])
    assert.match(html, new RegExp(`<h2>${heading}</h2>`))
  // The noise verdict comes first in its row, before the figures it judges.
  assert.match(html, /<th scope="row">p99\.9<\/th><td class="better">better<\/td>/)
  assert.match(html, /<th scope="row">hedges sent<\/th><td>\d+<\/td>/)
  assert.match(html, /<th scope="row">in flight \(-c\)<\/th><td>4<\/td>/)
  assert.match(html, /<th scope="row">header Authorization<\/th><td class="text">\*\*\*<\/td>/)
})

test('the first screen answers: verdict sentence, then the table, then warnings, then charts', () => {
  const run = hedgedRunWithTimeline()
  run.warnings = ['closed loop: something to know']
  // No comparison passed: a lone run with both phases compares its own phases.
  const html = renderHtml([run])
  const at = (pattern: RegExp): number => {
    const m = pattern.exec(html)
    assert.ok(m, `${pattern} present`)
    return m.index
  }
  // The verdict decided once in verdict.ts (the text report prints the same), not a second wording of it.
  const v = hedgeVerdict(run.phases.plain!, run.phases.hedged!, run)
  const verdict = html.indexOf(`<p class="verdict ${v.tone}">${escapeHtml(v.headline)}</p>`)
  assert.ok(verdict > 0, 'the verdict sentence')
  const table = at(/<table class="comparison">/)
  const warnings = at(/<ul class="warnings"><li>closed loop: something to know<\/li>/)
  const chart = at(/<svg data-chart=/)
  const runInfo = at(/<h2>Run<\/h2>/)
  assert.ok(verdict < table && table < warnings && warnings < chart && chart < runInfo, `order ${[verdict, table, warnings, chart, runInfo]}`)
  assert.match(html, /<tr><th>metric<\/th><th>verdict<\/th><th>plain<\/th><th>hedged<\/th><th>change<\/th><th>95% interval<\/th><\/tr>/)
  // Every row of the answer table starts with a verdict word (or "-" for metrics never judged).
  const rows = [...html.slice(table, warnings).matchAll(/<tr><th scope="row">([^<]+)<\/th><td[^>]*>([^<]+)<\/td>/g)]
  assert.ok(rows.length >= 10, `rows: ${rows.length}`)
  for (const r of rows) assert.match(r[2]!, /^(better|worse|within noise|not enough requests|-)$/, `${r[1]} starts with its verdict`)
})

test('configuration: readable names and no null; numbers never wrap', () => {
  const run = hedgedRunWithTimeline()
  const html = renderHtml([run])
  const config = html.slice(html.indexOf('<h2>Configuration</h2>'))
  assert.doesNotMatch(config, />null</)
  assert.match(config, /<th scope="row">rate limit, req\/s \(-q\)<\/th><td class="text">none<\/td>/)
  assert.match(config, /<th scope="row">hedge budget, % of requests \(--hedge-budget\)<\/th>/)
  assert.match(html, /td \{ white-space: nowrap; \}/)
})

test('percentiles: log latency axis, the hedge delay drawn, values on hover at the named percentiles', () => {
  const run = hedgedRunWithTimeline()
  const html = renderHtml([run])
  const chart = /<svg data-chart="percentiles"[\s\S]*?<\/svg>/.exec(html)![0]
  const delay = run.phases.hedged!.hedging!.delayMs
  assert.match(chart, /data-series="hedged:hedge-delay" d="M[\d.]+,([\d.]+) L[\d.]+,\1"/, 'a horizontal line')
  assert.ok(chart.includes(`hedged hedge delay ${formatMs(delay)}`))
  // Log axis: tick labels on a 1-2-5 ladder of milliseconds, not 0, 5, 10, ...
  const ticks = [...chart.matchAll(/<text class="tick" x="[\d.]+" y="[\d.]+" text-anchor="end">([^<]+)<\/text>/g)].map((m) => m[1])
  assert.ok(ticks.length >= 2 && ticks.every((t) => /^(1|2|5)0{0,2} (µs|ms|s)$/.test(t!)), ticks.join(' '))
  const unit: Record<string, number> = { µs: 0.001, ms: 1, s: 1000 }
  const values = ticks.map((t) => Number(t!.split(' ')[0]) * unit[t!.split(' ')[1]!]!)
  assert.ok(
    values.every((v, i) => i === 0 || v > values[i - 1]!),
    `rising: ${ticks.join(' ')}`,
  )
  assert.doesNotMatch(ticks.join(' '), /^0 /)
  assert.match(chart, /<title>hedged p99: [\d.]+ (ms|s)<\/title>/)
  assert.match(chart, /<title>plain p50: [\d.]+ (ms|s)<\/title>/)
})

test('everything from the result is HTML-escaped', () => {
  const evil = '<script>alert("x")</script><!--\u2028'
  const run = makeRunResult({
    label: evil,
    warnings: [`warn ${evil}`],
    config: makeConfig({ headers: { 'X-Evil': evil }, urls: [`http://127.0.0.1:1/?q=${evil}`] }),
  })
  const html = renderHtml([run, makeRunResult({ label: `${evil}'` })], { title: evil })
  // Only the page's own two script elements open and close; the label is in the JSON block, escaped.
  assert.equal(html.match(/<script/gi)?.length, 2)
  assert.equal(html.match(/<\/script/gi)?.length, 2)
  assert.ok(!html.includes('<!--'), 'no comment opener anywhere')
  const block = scripts(html)[0]!.text
  assert.ok(!block.includes('<') && !block.includes('\u2028'), 'the JSON block holds no "<" and no raw U+2028')
  assert.match(html, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/)
  assert.doesNotMatch(html, /data-series="[^"]*<[^"]*"/)
  // The JSON still reads back as the label itself.
  const specs = JSON.parse(scripts(html)[0]!.text) as Array<{ panels: Array<{ series: Array<{ label: string }> }> }>
  const labels = specs.flatMap((s) => s.panels.flatMap((p) => p.series.map((x) => x.label)))
  assert.ok(labels.includes(`${evil}/plain`), labels.join(' | '))
})

test("several runs: series are named run/phase by the comparison's tags (--label, else A, B), a colour per run and a line style per phase", () => {
  const a = makeRunResult({ label: 'base' })
  const b = hedgedRunWithTimeline()
  const comparison = compareRuns([
    { name: 'a.json', result: a },
    { name: 'b.json', result: b },
  ])
  const html = renderHtml([a, b], { comparison })
  const series = new Set(attr(html, 'data-series'))
  for (const id of [
    'base/plain:percentiles',
    'hedged-fixture/plain:percentiles',
    'hedged-fixture/hedged:percentiles',
    'hedged-fixture/hedged:hedges',
    'base/plain:p99',
  ])
    assert.ok(series.has(id), id)
  // Over time: the tail of each phase of each run (p50 and p99 of every phase made 12 lines for two runs).
  assert.ok(!series.has('base/plain:p50'), [...series].join(' '))
  const stroke = (id: string): string =>
    new RegExp(`<path data-series="${id.replace('/', '\\/')}" d="[^"]*" fill="none" stroke="([^"]+)" stroke-width="1\\.8"( stroke-dasharray="[^"]+")?`)
      .exec(html)
      ?.slice(1)
      .join('') ?? 'missing'
  assert.equal(stroke('hedged-fixture/plain:p99'), '#D55E00')
  assert.equal(stroke('hedged-fixture/hedged:p99'), '#D55E00 stroke-dasharray="6 4"')
  assert.equal(stroke('base/plain:p99'), '#0072B2')
  // The runs' own warnings say whose they are; the sentence names only what moved.
  b.warnings = ['something to know']
  const warned = renderHtml([a, b], { comparison })
  assert.ok(warned.includes('<li>hedged-fixture: something to know</li>'))
  assert.doesNotMatch(warned, /better nothing|worse nothing/)
  assert.match(warned, /<p class="verdict">hedged-fixture against base: (worse|better) [^<]*; the rest within noise or not judged\.<\/p>/)
  const labelled = new Set(attr(renderHtml([a, a]), 'data-series'))
  assert.ok(labelled.has('base/plain:p99') && labelled.has('base #2/plain:p99'), [...labelled].join(' '))
})

test('a run without hedging has no hedging chart; an empty phase still renders', () => {
  const html = renderHtml([makeRunResult()])
  assert.deepEqual(attr(html, 'data-chart'), ['percentiles', 'histogram', 'timeline'])
  const empty = makeRunResult({ phases: {} })
  assert.match(renderHtml([empty]), /No measured phase to chart/)
})

test('a phase too short for any point over time gets a sentence instead of a chart', () => {
  const run = hedgedRunWithTimeline()
  // One per-second point and no 100 ms points: nothing to draw a line with.
  run.phases.plain!.timeline = run.phases.plain!.timeline.slice(0, 1)
  delete run.phases.plain!.timelineFine
  run.phases.plain!.durationMs = 80
  const html = renderHtml([run])
  assert.match(html, /<p class="note">plain: 0\.08 s is too short for a chart over time; its figures are in the tables\.<\/p>/)
  assert.ok(!attr(html, 'data-series').includes('plain:p50'), 'no one-dot line for it')
  assert.ok(attr(html, 'data-series').includes('hedged:p50'), 'the other phases are still drawn')
})

test('ejections: the over-time chart marks when a replica was ejected and readmitted, and the replica table counts them', () => {
  const run = hedgedRunWithTimeline()
  const phase = run.phases.hedged!
  const url = phase.replicas[0]!.url
  phase.ejections = [
    { url, atMs: 1200, forMs: 1000, readmittedAtMs: 2250, cause: '5 failures in a row (last: ECONNREFUSED)' },
    // In a mix (--targets), the target whose failure did it comes first.
    { url, atMs: 2260, forMs: 2000, readmittedAtMs: null, cause: '1 failure in a row (last: ECONNREFUSED)', targets: [{ target: 'POST /c', failures: 1 }] },
  ]
  phase.replicas[0]!.ejections = 2
  const html = renderHtml([run])
  const timeline = html.slice(html.indexOf('data-chart="timeline"'))
  const marks = [...timeline.slice(0, timeline.indexOf('</svg>')).matchAll(/data-mark="([^"]*)"/g)].map((m) => m[1])
  // Two ejections and one readmission; the one still out at the end has no readmission mark.
  assert.equal(marks.length, 3, JSON.stringify(marks))
  assert.match(marks[0]!, /ejected at 1\.20 s/)
  assert.match(marks[1]!, /readmitted at 2\.25 s/)
  assert.match(marks[2]!, /ejected at 2\.26 s \(POST \/c: 1 failure in a row/)
  assert.match(marks[0]!, /ejected at 1\.20 s \(5 failures in a row/, 'outside a mix, the cause alone')
  assert.match(html, /Outlier ejections/)
})

test('merged, gRPC-client and h2c results: the generators table, the grpc-js block and the cost of cancels are in the HTML too', () => {
  const shard = (index: number, startMs: number) => {
    const r = makeHedgedRun({
      runId: 'm-1',
      shard: { index, count: 2 },
      host: `pod-${index}`,
      label: `shard-${index}`,
      clock: { minMs: -50, maxMs: 250, samples: 9 },
    })
    for (const p of Object.values(r.phases)) p.wall = { startMs: startMs + p.startOffsetMs, endMs: startMs + p.startOffsetMs + p.durationMs }
    return r
  }
  const merged = mergeResults([
    { result: shard(0, 1_000_000), source: 'a' },
    { result: shard(1, 1_000_003), source: 'b' },
  ])
  const hedged = merged.phases.hedged!
  hedged.streamsResetByCancel = 37
  hedged.connectionsClosedByCancel = 0
  merged.grpcClient = makeGrpcClient(
    7,
    {
      asked: { maxAttempts: 2, hedgingDelayMs: 40, nonFatalStatusCodes: ['UNAVAILABLE'], retryThrottling: null, loadBalancing: 'round_robin' },
      caveats: ["grpc-js has no previous-host exclusion: with round_robin a hedge can land on its original's replica"],
    },
    4,
  )
  const html = renderHtml([merged])
  const rowOf = (first: string) => html.match(new RegExp(`<tr><th scope="row">${first}</th>(.*?)</tr>`))?.[1] ?? ''
  // Generators: one row per shard, with its host and clock offset.
  assert.match(html, /<h2>Generators: merged 2 shards \(shard-0, shard-1\)<\/h2>/)
  assert.match(html, /clock offsets agree \(their bounds overlap\)/)
  for (const i of [0, 1]) assert.match(rowOf(String(i)), new RegExp(`<td class="text">pod-${i}</td>.*\\+100\\.0 ms \\[-50\\.0, \\+250\\.0\\]`))
  // Cancels: streams reset and connections closed.
  assert.match(rowOf('cancels cost'), /37 streams reset, 0 connections closed/)
  // grpc-js: asked vs did, the tail with its column, the caveat.
  const grpc = html.slice(html.indexOf('<h2>Hedged by grpc-js: '))
  assert.ok(grpc.length < html.length, 'a grpc-js section')
  assert.match(grpc, /<th scope="row">Did<\/th><td class="text">200 calls, 207 attempts .* 7 hedges/)
  assert.match(grpc, /<th><\/th><th>plain<\/th><th>hedgebench<\/th><th>grpc-js<\/th>/)
  assert.ok(
    grpc.includes(
      `<th scope="row">p99</th><td>${formatMs(merged.phases.plain!.latencyMs.p99)}</td><td>${formatMs(hedged.latencyMs.p99)}</td><td>${formatMs(merged.grpcClient.latencyMs.p99)}</td></tr>`,
    ),
    'the tail side by side',
  )
  assert.match(grpc, /<li>grpc-js has no previous-host exclusion/)
})

test('over time, a stall is seconds with no request ended: 0/s and a break in the latency lines, not a line drawn across it', async () => {
  const { chartableOverTime, timelineSpec } = await import('../src/report/html-charts.js')
  const { renderChart } = await import('../src/report/svg-chart.js')
  const timelineChart = (sources: Parameters<typeof timelineSpec>[0]): string => renderChart(timelineSpec(sources))
  const run = makeRunResult({ phases: { plain: makePhase('plain', [5, 6, 7], { durationMs: 4000 }) } })
  const plain = run.phases.plain!
  // Requests ended in seconds 0 and 3 only: 1 and 2 were the stall.
  plain.timeline = [0, 3].map((t) => ({ t, requests: 100, errors: 0, p50Ms: 5, p99Ms: 9, hedges: 0, delayMs: null }))
  delete plain.timelineFine
  const source = { name: 'plain', phase: plain, color: '#000' }
  assert.equal(chartableOverTime([source]).charted.length, 1)
  const svg = timelineChart([source])
  for (const t of [1, 2]) assert.match(svg, new RegExp(`at ${t} s: 0/s`), `second ${t} reads 0/s`)
  assert.doesNotMatch(svg, /at 1 s: [\d.]+ ms/, 'no latency drawn where no request ended')
  // A point past the phase's own duration (a merged phase's timeline spans its shards') keeps its place.
  plain.durationMs = 2000
  assert.match(timelineChart([source]), /at 3 s: 100\/s/)
  // One ended request in a 7 s phase is still a phase over time, not "too short".
  plain.timeline = [{ t: 0, requests: 1, errors: 0, p50Ms: 5, p99Ms: 5, hedges: 0, delayMs: null }]
  plain.durationMs = 7000
  assert.equal(chartableOverTime([source]).charted.length, 1)
})

test('issue 30 item 10: the configuration table shows the warm-up that ran and the flags a user typed', () => {
  const run = makeHedgedRun()
  // The default warm-up ran past its 1000 requests to its 2 s minimum.
  run.phases.warmup = makePhase('warmup', stallingLatencies(1461, 3), { durationMs: 2013 })
  run.config = { ...run.config, saturation: { maxErrorRate: 0.25, maxInflight: null, obeyOverload: true }, hedge: { ...run.config.hedge, tied: false } }
  const html = renderHtml([run])
  const row = (name: string): string =>
    new RegExp(`<tr><th scope="row">${name.replace(/[()-.]/g, '\\$&')}</th><td[^>]*>([^<]*)</td></tr>`).exec(html)?.[1] ?? 'missing'
  assert.equal(row('warm-up requests asked (--warmup)'), '1000')
  assert.equal(row('warm-up requests run'), '1461 in 2.01 s')
  assert.equal(row('no hedges above this error rate (--suppress-at-error-rate)'), '25%')
  assert.equal(row('tied requests (--tied)'), 'false')
  assert.equal(row('hedge budget, % of requests (--hedge-budget)'), '10')
  assert.doesNotMatch(html, /saturation\.maxErrorRate|hedge\.tied|>warm-up requests</)
})

test('over time, a last bucket holding only stragglers draws no percentile: the p50 line does not jump to 1 s at the end of the phase', async () => {
  const { timelineSpec, holdsEnough } = await import('../src/report/html-charts.js')
  const run = makeRunResult({ config: makeConfig({ concurrency: 40 }), phases: { plain: makePhase('plain', [5, 6, 7], { durationMs: 6000 }) } })
  const plain = run.phases.plain!
  // Five steady seconds of 1000 requests (p50 10 ms, p99 1 s: one in a hundred stalls), then the 20 requests still in
  // flight when sending stopped: all of them stalled, so that second's p50 and p99 are ~1 s.
  plain.timeline = [0, 1, 2, 3, 4].map((t) => ({ t, requests: 1000, errors: 0, p50Ms: 10, p99Ms: 1000, hedges: 0, delayMs: null }))
  plain.timeline.push({ t: 5, requests: 20, errors: 0, p50Ms: 1010, p99Ms: 1020, hedges: 0, delayMs: null })
  delete plain.timelineFine
  const html = renderHtml([run])
  const timeline = (
    JSON.parse(scripts(html)[0]!.text) as Array<{ title: string; panels: Array<{ series: Array<{ label: string; y: Array<number | null> }> }> }>
  ).find((s) => s.title.startsWith('Latency and throughput'))!
  const y = (label: string): Array<number | null> => timeline.panels.flatMap((p) => p.series).find((s) => s.label === label)!.y
  assert.deepEqual(y('plain:p50'), [10, 10, 10, 10, 10, null])
  assert.deepEqual(y('plain:p99'), [1000, 1000, 1000, 1000, 1000, null])
  assert.deepEqual(y('plain:rps'), [1000, 1000, 1000, 1000, 1000, 20], 'the throughput still shows the last second')
  // The static chart draws the same: no p50 dot at 5 s.
  assert.doesNotMatch(html, /plain:p50 at 5 s/)
  assert.match(html, /plain:p50 at 4 s: 10/)

  // The rule: stragglers (at most the 40 in flight) cannot decide a percentile while fewer than the requests above it.
  assert.equal(holdsEnough(81, 50, 40, 1000), true, '81 requests: the p50 is one of the 41 that are not stragglers')
  assert.equal(holdsEnough(80, 50, 40, 1000), false)
  assert.equal(holdsEnough(4001, 99, 40, 10_000), true)
  assert.equal(holdsEnough(501, 99, 40, 1000), true, 'half the typical count or more is steady traffic')
  assert.equal(holdsEnough(0, 50, 0, 0), false, 'no request ended: nothing to draw')
  // A second with no stragglers to fear (one request, nothing else in flight) is drawn.
  assert.equal(holdsEnough(1, 50, 0, 1000), true)
  const spec = timelineSpec([{ name: 'plain', phase: plain, color: '#000' }])
  assert.equal(spec.panels[0]!.series.find((s) => s.id === 'plain:p50')!.points[5]![1], 1010, "without the run's in-flight count nothing is hidden")
})
