import { test } from 'node:test'
import assert from 'node:assert/strict'
import { compareRuns, compareWithin } from '../src/report/compare.js'
import { HTML_CSP, renderHtml } from '../src/report/html.js'
import { hedgedRunWithTimeline } from './helpers/html-fixture.js'
import { makeConfig, makeRunResult } from './helpers/result-fixture.js'

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

test('self-contained: CSP, no script, no external reference', () => {
  const html = renderHtml([hedgedRunWithTimeline()], { comparison: compareWithin(hedgedRunWithTimeline()) })
  assert.ok(html.includes(`<meta http-equiv="Content-Security-Policy" content="${HTML_CSP}">`))
  assert.equal(HTML_CSP, "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
  assert.doesNotMatch(html, /<script|<link|<img|<iframe|@import|url\(/i)
  for (const ref of [...attr(html, 'src'), ...attr(html, 'href')]) assert.fail(`external reference ${ref}`)
  // The only URLs are the SVG namespace and the fixture's target URLs printed as text.
  for (const url of html.match(/https?:\/\/[^\s"<]+/g) ?? []) assert.ok(url === 'http://www.w3.org/2000/svg' || url.startsWith('http://127.0.0.1:'), url)
})

test('tables: summary, hedging, configuration, comparison', () => {
  const run = hedgedRunWithTimeline()
  const html = renderHtml([run], { comparison: compareWithin(run), title: 'My report' })
  assert.match(html, /<title>My report<\/title>/)
  for (const heading of ['Run', 'Comparison', 'Summary', 'Hedging', 'Replicas', 'Load generator', 'Configuration']) assert.match(html, new RegExp(`<h2>${heading}</h2>`))
  assert.match(html, /<th scope="row">p99\.9<\/th>.*<td class="better">better<\/td>/)
  assert.match(html, /<th scope="row">hedges sent<\/th><td>\d+<\/td>/)
  assert.match(html, /<th scope="row">concurrency<\/th><td>4<\/td>/)
  assert.match(html, /Authorization: \*\*\*|<th scope="row">headers\.Authorization<\/th><td>\*\*\*<\/td>/)
})

test('everything from the result is HTML-escaped', () => {
  const evil = '<script>alert("x")</script>'
  const run = makeRunResult({ label: evil, warnings: [`warn ${evil}`], config: makeConfig({ headers: { 'X-Evil': evil }, urls: [`http://127.0.0.1:1/?q=${evil}`] }) })
  const html = renderHtml([run, makeRunResult({ label: `${evil}'` })], { title: evil })
  assert.doesNotMatch(html, /<script/i)
  assert.match(html, /&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt;/)
  assert.doesNotMatch(html, /data-series="[^"]*<[^"]*"/)
})

test('several runs: series are named run/phase, from the comparison when it covers them', () => {
  const a = makeRunResult({ label: 'base' })
  const b = hedgedRunWithTimeline()
  const comparison = compareRuns([{ name: 'a.json', result: a }, { name: 'b.json', result: b }])
  const series = new Set(attr(renderHtml([a, b], { comparison }), 'data-series'))
  for (const id of ['a.json/plain:percentiles', 'b.json/plain:percentiles', 'b.json/hedged:percentiles', 'b.json/hedged:hedges', 'a.json/plain:p99']) assert.ok(series.has(id), id)
  const labelled = new Set(attr(renderHtml([a, a]), 'data-series'))
  assert.ok(labelled.has('base/plain:p50') && labelled.has('base #2/plain:p50'), [...labelled].join(' '))
})

test('a run without hedging has no hedging chart; an empty phase still renders', () => {
  const html = renderHtml([makeRunResult()])
  assert.deepEqual(attr(html, 'data-chart'), ['percentiles', 'histogram', 'timeline'])
  const empty = makeRunResult({ phases: {} })
  assert.match(renderHtml([empty]), /No measured phase to chart/)
})
