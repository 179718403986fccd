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
import { compareRuns } from '../src/compare.js'
import { renderHtml } from '../src/render/html.js'
import { chromiumAvailable, CHROMIUM_PATH, launchChromium, type Browser } from './helpers/chromium.js'
import { hedgedRunWithTimeline } from './helpers/html-fixture.js'
import { makeRunResult } from './helpers/result-fixture.js'

const skip = chromiumAvailable() ? false : `Chromium not found at ${CHROMIUM_PATH} (apt-get install -y chromium); skipping the browser check of the HTML report`

interface PageFacts {
  charts: string[]
  series: Array<{ id: string; length: number }>
  svgSizes: Array<{ width: number; height: number }>
  title: string
}

const FACTS = `JSON.stringify({
  charts: [...document.querySelectorAll('svg[data-chart]')].map((s) => s.getAttribute('data-chart')),
  series: [...document.querySelectorAll('[data-series]')].map((p) => ({ id: p.getAttribute('data-series'), length: p.getTotalLength() })),
  svgSizes: [...document.querySelectorAll('svg[data-chart]')].map((s) => { const r = s.getBoundingClientRect(); return { width: r.width, height: r.height } }),
  title: document.title,
})`

test('the HTML report renders in Chromium, fetches nothing, and has every chart and series', { skip, timeout: 90_000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'hedgebench-html-'))
  const before = makeRunResult({ label: 'before' })
  const after = hedgedRunWithTimeline()
  const comparison = compareRuns([{ name: 'before.json', result: before }, { name: 'after.json', result: after }])
  const file = join(out, 'report.html')
  writeFileSync(file, renderHtml([before, after], { title: 'browser check', comparison }))
  const pageUrl = pathToFileURL(file).href

  let browser: Browser | undefined
  t.after(async () => {
    await browser?.close()
  })
  browser = await launchChromium()
  const { targetId } = (await browser.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string }
  const { sessionId } = (await browser.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string }
  for (const domain of ['Network', 'Page', 'Runtime', 'Log']) await browser.send(`${domain}.enable`, {}, sessionId)
  await browser.send('Emulation.setDeviceMetricsOverride', { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId)
  await browser.send('Page.navigate', { url: pageUrl }, sessionId)
  await browser.waitFor((e) => e.method === 'Page.loadEventFired' && e.sessionId === sessionId, 20_000)

  const result = (await browser.send('Runtime.evaluate', { expression: FACTS, returnByValue: true }, sessionId)) as { result: { value: string } }
  const facts = JSON.parse(result.result.value) as PageFacts
  assert.equal(facts.title, 'browser check')
  assert.deepEqual(facts.charts, ['percentiles', 'histogram', 'timeline', 'hedges'])
  for (const size of facts.svgSizes) assert.ok(size.width > 300 && size.height > 150, `chart laid out: ${JSON.stringify(size)}`)
  const ids = new Map(facts.series.map((s) => [s.id, s.length]))
  const expected = [
    'before.json/plain:percentiles', 'after.json/plain:percentiles', 'after.json/hedged:percentiles',
    'before.json/plain:histogram', 'after.json/hedged:histogram',
    'before.json/plain:p50', 'after.json/warmup:p99', 'after.json/hedged:rps',
    'after.json/hedged:hedges', 'after.json/hedged:delay',
  ]
  for (const id of expected) assert.ok((ids.get(id) ?? 0) > 0, `series ${id} drawn (length ${ids.get(id)})`)

  const requested = browser.events.filter((e) => e.method === 'Network.requestWillBeSent' && e.sessionId === sessionId).map((e) => (e.params.request as { url: string }).url)
  assert.deepEqual(requested, [pageUrl], 'nothing but the page itself was requested')
  const problems = browser.events.filter((e) => e.method === 'Log.entryAdded' || (e.method === 'Runtime.consoleAPICalled' && e.params.type === 'error'))
  assert.deepEqual(problems.map((e) => JSON.stringify(e.params).slice(0, 300)), [], 'no console errors or CSP violations')

  const shot = (await browser.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true }, sessionId)) as { data: string }
  const png = join(out, 'report.png')
  writeFileSync(png, Buffer.from(shot.data, 'base64'))
  assert.ok(statSync(png).size > 20_000, 'a screenshot with content')
  t.diagnostic(`report and screenshot kept in ${out}`)
})
