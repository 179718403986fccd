/**
 * The HTML report in a real browser: headless Chromium loads the file,
 * records every network request and console message, and keeps a
 * screenshot. With scripts off the static SVG charts show; with scripts on
 * the page's one script (allowed by its hash) redraws them as charts to
 * explore, and for a compare of three runs their layout is measured: legend
 * inside the chart, no text over other text, one colour per run, values on
 * hover. Skipped when Chromium is not installed (CI installs Debian's
 * `chromium`); this test never installs anything.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { compareRuns } from '../src/report/compare.js'
import { renderHtml } from '../src/report/html.js'
import { chromiumAvailable, CHROMIUM_PATH, launchChromium, renderPage, type Browser, type PageSession } from './helpers/chromium.js'
import { hedgedRunWithTimeline } from './helpers/html-fixture.js'
import { makeRunResult } from './helpers/result-fixture.js'
import { skipWithout } from './helpers/required-tool.js'

const skip = skipWithout(
  chromiumAvailable(),
  'chromium',
  `Chromium not found at ${CHROMIUM_PATH} (apt-get install -y chromium); skipping the browser check of the HTML report`,
)

// One Chromium for the file.
let browser: Browser | undefined
const chromium = async (): Promise<Browser> => (browser ??= await launchChromium())
after(async () => {
  await browser?.close()
})

const CHARTS = ['percentiles', 'histogram', 'timeline', 'hedges']

test('the HTML report renders in Chromium, fetches nothing, and has every chart and series, with scripts off and on', { skip, timeout: 90_000 }, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'hedgebench-html-'))
  const before = makeRunResult({ label: 'before' })
  const after = hedgedRunWithTimeline()
  const comparison = compareRuns([
    { name: 'before.json', result: before },
    { name: 'after.json', result: after },
  ])
  const file = join(out, 'report.html')
  writeFileSync(file, renderHtml([before, after], { title: 'browser check', comparison }))
  const pageUrl = pathToFileURL(file).href

  // Scripts off: the static SVG charts, every series drawn.
  const still = await renderPage(await chromium(), file, join(out, 'static.png'), { scripts: false })
  assert.equal(still.facts.title, 'browser check')
  assert.deepEqual(still.facts.charts, CHARTS)
  assert.deepEqual(still.facts.liveCharts, [])
  for (const size of still.facts.svgSizes) assert.ok(size.width > 300 && size.height > 150, `chart laid out: ${JSON.stringify(size)}`)
  const ids = new Map(still.facts.series.map((s) => [s.id, s.length]))
  const expected = [
    'before/plain:percentiles',
    'hedged-fixture/plain:percentiles',
    'hedged-fixture/hedged:percentiles',
    'before/plain:histogram',
    'hedged-fixture/hedged:histogram',
    'before/plain:p99',
    'hedged-fixture/warmup:p99',
    'hedged-fixture/hedged:rps',
    'hedged-fixture/hedged:hedges',
    'hedged-fixture/hedged:delay',
  ]
  for (const id of expected) assert.ok((ids.get(id) ?? 0) > 0, `series ${id} drawn (length ${ids.get(id)})`)
  assert.deepEqual(still.requested, [pageUrl], 'nothing but the page itself was requested')
  assert.deepEqual(still.problems, [])

  // Scripts on: the CSP lets the page's one script run (a violation would be a console entry), and it draws
  // every chart on canvas in place of its SVG, one canvas per panel.
  const png = join(out, 'report.png')
  const live = await renderPage(await chromium(), file, png)
  assert.deepEqual(live.facts.liveCharts, [1, 1, 2, 2])
  for (const size of live.facts.svgSizes) assert.deepEqual(size, { width: 0, height: 0 }, 'the SVG charts are hidden once the live ones are drawn')
  assert.deepEqual(live.requested, [pageUrl], 'nothing but the page itself was requested')
  assert.deepEqual(live.problems, [], 'no console errors or CSP violations')
  assert.ok(statSync(png).size > 20_000, 'a screenshot with content')
  t.diagnostic(`report and screenshots kept in ${out}`)
})

interface Box {
  text: string
  x: number
  y: number
  w: number
  h: number
}

interface ChartLayout {
  title: string
  /** The chart's own area (.live-chart) and each panel's (.uplot). */
  area: Box
  panels: Box[]
  /** Legend entries with the panel they belong to. */
  legend: Array<Box & { panel: number; color: string }>
  /** Text laid out as HTML: the title, legend entries, the hint, and each panel's canvas. */
  texts: Box[]
  /** Tick labels uPlot drew on the canvas, per axis: their extent along the axis (page px), and whether a vertical axis's fit its gutter. */
  ticks: Array<{ panel: number; axis: number; horizontal: boolean; spans: Array<[number, number, string]>; fits: boolean }>
}

/** Runs in the page: every live chart's boxes, read from the DOM and from uPlot's own axes (its tick labels are on canvas). */
const LAYOUT = `JSON.stringify([...document.querySelectorAll('.live-chart')].map((chart) => {
  const box = (el, text) => { const r = el.getBoundingClientRect(); return { text: text ?? el.textContent, x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height } }
  const measure = document.createElement('canvas').getContext('2d')
  const panels = [...chart.querySelectorAll('.uplot')]
  const legend = panels.flatMap((p, i) => [...p.querySelectorAll('.u-legend .u-series')].filter((tr) => tr.querySelector('.u-marker')).map((tr) => ({ ...box(tr), panel: i, color: getComputedStyle(tr.querySelector('.u-marker')).borderTopColor })))
  const texts = [box(chart.querySelector('.live-title')), ...legend, box(chart.querySelector('.live-hint')), ...panels.map((p) => box(p.querySelector('.u-wrap'), 'canvas'))]
  const ticks = chart.plots.flatMap((u, panel) => u.axes.map((a, axis) => {
    measure.font = a.font[0]
    const horizontal = a.side % 2 === 0
    const over = u.over.getBoundingClientRect()
    const spans = (a._splits || []).map((v, i) => [v, a._values && a._values[i]]).filter(([, label]) => label != null && label !== '').map(([v, label]) => {
      const at = u.valToPos(v, horizontal ? 'x' : 'y') + (horizontal ? over.left + scrollX : over.top + scrollY)
      const size = horizontal ? measure.measureText(label).width : a.font[1]
      return [at - size / 2, at + size / 2, label]
    })
    const widest = Math.max(0, ...(a._values || []).filter(Boolean).map((label) => measure.measureText(label).width))
    // A vertical axis's labels fit the gutter uPlot keeps for them; a horizontal axis's are checked against the panel's box.
    const fits = horizontal || widest + a.ticks.size + a.gap <= a._size
    return { panel, axis, horizontal, spans, fits }
  }))
  return { title: chart.querySelector('.live-title').textContent, area: box(chart, ''), panels: panels.map((p) => box(p, '')), legend, texts, ticks }
}))`

const overlap = (a: Box, b: Box): boolean => a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5
const inside = (a: Box, outer: Box): boolean =>
  a.x >= outer.x - 0.5 && a.y >= outer.y - 0.5 && a.x + a.w <= outer.x + outer.w + 0.5 && a.y + a.h <= outer.y + outer.h + 0.5

/** Moves the real mouse (CDP input) to the middle of the timeline's upper panel; returns both panels' legend values. */
async function hover(page: PageSession): Promise<string[][]> {
  const at = await page.evaluate<{ x: number; y: number }>(`(() => {
    const over = [...document.querySelectorAll('.live-chart')].find((c) => c.querySelector('.live-title').textContent.startsWith('Latency and throughput'))?.querySelector('.u-over')
    if (!over) return JSON.stringify({ x: 0, y: 0 })
    over.scrollIntoView({ block: 'center' })
    const r = over.getBoundingClientRect()
    return JSON.stringify({ x: r.left + r.width * 0.3, y: r.top + r.height / 2 })
  })()`)
  await page.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: at.x, y: at.y })
  return page.evaluate<string[][]>(`new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(JSON.stringify(
    [...[...document.querySelectorAll('.live-chart')].find((c) => c.querySelector('.live-title').textContent.startsWith('Latency and throughput'))?.querySelectorAll('.uplot') ?? []]
      .map((p) => [...p.querySelectorAll('.u-legend .u-value')].map((v) => v.textContent)))))))`)
}

test('a compare of three runs at 1400 px: tables fit, and each live chart keeps its legend inside, no text over other text, a colour per run, values on hover', {
  skip,
  timeout: 90_000,
}, async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'hedgebench-html-'))
  // File names as saved runs have them: long, so the table must not use them as column titles.
  const names = ['2026-12-01T06-13-09Z-before.json', '2026-12-01T06-13-20Z-after.json', '2026-12-01T06-13-31Z-again.json']
  const runs = [makeRunResult({ label: 'before' }), hedgedRunWithTimeline(), hedgedRunWithTimeline()]
  const comparison = compareRuns(runs.map((result, i) => ({ name: names[i]!, result })))
  const file = join(out, 'three.html')
  writeFileSync(file, renderHtml(runs, { comparison }))
  const png = join(out, 'three.png')
  const { facts, problems, extra } = await renderPage(await chromium(), file, png, {
    width: 1400,
    evaluate: async (page) => ({
      layout: await page.evaluate<ChartLayout[]>(LAYOUT),
      pageWidth: await page.evaluate<number>('JSON.stringify(document.documentElement.scrollWidth)'),
      hovered: await hover(page),
    }),
  })
  const { layout, pageWidth, hovered } = extra as { layout: ChartLayout[]; pageWidth: number; hovered: string[][] }
  t.diagnostic(`report and screenshot kept in ${out}`)
  assert.deepEqual(problems, [], 'no console errors or CSP violations')
  assert.deepEqual(facts.wrappedCells, [], 'cells wrapped at 1400 px')
  assert.equal(facts.wideTables, 0, 'tables wider than the page at 1400 px')
  assert.ok(pageWidth <= 1400, `the page is ${pageWidth} px wide`)

  assert.deepEqual(
    layout.map((c) => c.title),
    ['Latency by percentile', 'Response-time histogram', 'Latency and throughput over time', 'Hedging over time'],
  )
  for (const chart of layout) {
    assert.ok(chart.area.x + chart.area.w <= 1400, `${chart.title} within the page`)
    assert.ok(chart.legend.length > 0, `${chart.title} has a legend`)
    for (const item of chart.legend) {
      assert.ok(
        inside(item, chart.panels[item.panel]!),
        `${chart.title}: legend entry "${item.text}" inside its chart ${JSON.stringify([item, chart.panels[item.panel]])}`,
      )
    }
    for (const [i, a] of chart.texts.entries()) {
      for (const b of chart.texts.slice(i + 1)) assert.ok(!overlap(a, b), `${chart.title}: "${a.text}" overlaps "${b.text}"`)
    }
    for (const axis of chart.ticks) {
      assert.ok(axis.spans.length >= 2, `${chart.title} panel ${axis.panel} axis ${axis.axis} has tick labels`)
      assert.ok(axis.fits, `${chart.title} panel ${axis.panel} axis ${axis.axis}: tick labels fit their gutter`)
      const panel = chart.panels[axis.panel]!
      if (axis.horizontal)
        for (const [lo, hi, label] of axis.spans) assert.ok(lo >= panel.x && hi <= panel.x + panel.w, `${chart.title}: tick "${label}" inside its chart`)
      const sorted = [...axis.spans].sort((a, b) => a[0] - b[0])
      for (let i = 1; i < sorted.length; i++)
        assert.ok(sorted[i]![0] >= sorted[i - 1]![1], `${chart.title} panel ${axis.panel}: tick "${sorted[i - 1]![2]}" overlaps "${sorted[i]![2]}"`)
    }
    // One colour per run: a run's series share it, no two runs share one.
    const colours = new Map<string, Set<string>>()
    for (const item of chart.legend) {
      const run = /^([^/]+)\//.exec(item.text)?.[1]
      if (run) colours.set(run, (colours.get(run) ?? new Set()).add(item.color))
    }
    const runColours = [...colours.values()].map((set) => [...set])
    for (const set of runColours) assert.equal(set.length, 1, `${chart.title}: a run's series share one colour: ${JSON.stringify([...colours])}`)
    assert.equal(new Set(runColours.flat()).size, colours.size, `${chart.title}: a colour per run: ${JSON.stringify([...colours])}`)
  }
  const timeline = layout.find((c) => c.title.startsWith('Latency and throughput'))!
  assert.equal(new Set(timeline.legend.map((l) => /^([^/]+)\//.exec(l.text)?.[1]).filter(Boolean)).size, 3, 'three runs on the timeline')

  // Hover: the panel under the mouse and the one sharing its cursor both show values (the time, a latency, a rate).
  const [latency, rate] = hovered
  assert.match(latency![0]!, /^[\d.]+ s$/, `the time under the cursor: ${JSON.stringify(hovered)}`)
  assert.ok(
    latency!.slice(1).some((v) => /^[\d.]+ (ms|s)$/.test(v)),
    `a latency under the cursor: ${JSON.stringify(latency)}`,
  )
  assert.ok(
    rate!.slice(1).some((v) => /^\d+\/s$/.test(v)),
    `a rate in the synced panel: ${JSON.stringify(rate)}`,
  )
  assert.ok(statSync(png).size > 20_000, 'a screenshot with content')
})
