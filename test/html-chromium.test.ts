/**
 * The HTML report in a real browser: headless Chromium loads the file,
 * records every network request, checks the SVG charts and their series,
 * and keeps a screenshot. Skipped when Chromium is not installed (CI
 * installs Debian's `chromium`); this test never installs anything.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { compareRuns } from '../src/report/compare.js'
import { renderHtml } from '../src/report/html.js'
import { chromiumAvailable, CHROMIUM_PATH, launchChromium, renderPage, type Browser } from './helpers/chromium.js'
import { hedgedRunWithTimeline } from './helpers/html-fixture.js'
import { makeRunResult } from './helpers/result-fixture.js'
import { skipWithout } from './helpers/required-tool.js'

const skip = skipWithout(chromiumAvailable(), 'chromium', `Chromium not found at ${CHROMIUM_PATH} (apt-get install -y chromium); skipping the browser check of the HTML report`)

test('the HTML report renders in Chromium, fetches nothing, and has every chart and series', { skip, timeout: 90_000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'hedgebench-html-'))
  const before = makeRunResult({ label: 'before' })
  const after = hedgedRunWithTimeline()
  const comparison = compareRuns([{ name: 'before.json', result: before }, { name: 'after.json', result: after }])
  const file = join(out, 'report.html')
  writeFileSync(file, renderHtml([before, after], { title: 'browser check', comparison }))
  const pageUrl = pathToFileURL(file).href
  const png = join(out, 'report.png')

  let browser: Browser | undefined
  t.after(async () => {
    await browser?.close()
  })
  browser = await launchChromium()
  const { facts, requested, problems } = await renderPage(browser, file, png)
  assert.equal(facts.title, 'browser check')
  assert.deepEqual(facts.charts, ['percentiles', 'histogram', 'timeline', 'hedges'])
  for (const size of facts.svgSizes) assert.ok(size.width > 300 && size.height > 150, `chart laid out: ${JSON.stringify(size)}`)
  const ids = new Map(facts.series.map((s) => [s.id, s.length]))
  const expected = [
    'before/plain:percentiles', 'hedged-fixture/plain:percentiles', 'hedged-fixture/hedged:percentiles',
    'before/plain:histogram', 'hedged-fixture/hedged:histogram',
    'before/plain:p99', 'hedged-fixture/warmup:p99', 'hedged-fixture/hedged:rps',
    'hedged-fixture/hedged:hedges', 'hedged-fixture/hedged:delay',
  ]
  for (const id of expected) assert.ok((ids.get(id) ?? 0) > 0, `series ${id} drawn (length ${ids.get(id)})`)

  assert.deepEqual(requested, [pageUrl], 'nothing but the page itself was requested')
  assert.deepEqual(problems, [], 'no console errors or CSP violations')

  assert.ok(statSync(png).size > 20_000, 'a screenshot with content')
  t.diagnostic(`report and screenshot kept in ${out}`)
})

test('at 1400 px a compare of three runs fits: no table wider than the page, no number wrapped', { skip, timeout: 90_000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'hedgebench-html-'))
  // File names as saved runs have them: long, so the table must not use them as column titles.
  const names = ['2026-12-01T06-13-09Z-before.json', '2026-12-01T06-13-20Z-after.json', '2026-12-01T06-13-31Z-again.json']
  const runs = [makeRunResult({ label: 'before' }), hedgedRunWithTimeline(), hedgedRunWithTimeline()]
  const comparison = compareRuns(runs.map((result, i) => ({ name: names[i]!, result })))
  const file = join(out, 'three.html')
  writeFileSync(file, renderHtml(runs, { comparison }))
  let browser: Browser | undefined
  t.after(async () => {
    await browser?.close()
  })
  browser = await launchChromium()
  const { facts, problems } = await renderPage(browser, file, join(out, 'three.png'), 1400)
  assert.deepEqual(facts.wrappedCells, [], 'cells wrapped at 1400 px')
  assert.equal(facts.wideTables, 0, 'tables wider than the page at 1400 px')
  assert.deepEqual(problems, [])
  t.diagnostic(`report and screenshot kept in ${out}`)
})
