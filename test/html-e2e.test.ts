/**
 * `hedgebench --html FILE` on REAL runs: the command (main(), in the file's
 * driver process) starts the built-in target (a child `hedgebench serve`)
 * from a temp profile with stalls, runs warm-up, plain and hedged phases,
 * and writes the report. The file must be
 * self-contained, and headless Chromium must draw every chart with every
 * series visible. The browser part is skipped (with a message) when Chromium
 * is absent; this test never installs anything.
 *
 * Nothing here is statistical: the assertions are about what is drawn, not
 * about latency values. Hedges are made certain with a fixed 1 ms hedge delay
 * against a 2-6 ms service time (nearly every request hedges; the 10 %
 * budget caps them at ~10 %, still tens of hedges per second).
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { chromiumAvailable, CHROMIUM_PATH, launchChromium, renderPage, type Browser, type RenderedPage } from './helpers/chromium.js'
import { runMain } from './helpers/main-cases.js'
import { INDEPENDENT_STALLS, profileDir, type ProfileFiles } from './helpers/profiles.js'
import { skipWithout } from './helpers/required-tool.js'

const noChromium = skipWithout(
  chromiumAvailable(),
  'chromium',
  `Chromium not found at ${CHROMIUM_PATH} (apt-get install -y chromium); skipping the browser check of the HTML report from a real run`,
)

let out = ''
let profiles: ProfileFiles | undefined
let profile = ''
let browser: Browser | undefined
let passed = 0
const planned = noChromium ? 1 : 3

before(() => {
  out = mkdtempSync(join(tmpdir(), 'hedgebench-html-e2e-'))
  profiles = profileDir()
  profile = profiles.write('html-stalls', INDEPENDENT_STALLS)
})

after(async () => {
  await browser?.close()
  profiles?.remove()
  // Kept when a test failed, for a look at the report and screenshot (the path is in the diagnostics).
  if (passed === planned) rmSync(out, { recursive: true, force: true })
})

/** A real run through main() (the file's driver process, runMain); returns the HTML file and the run's JSON. */
async function realRun(
  name: string,
  load: string[],
): Promise<{ file: string; html: string; result: { phases: Record<string, { timeline: unknown[]; hedging?: { hedgesSent: number } }> } }> {
  const file = join(out, `${name}.html`)
  const r = await runMain(['--profile', profile, ...load, '--slow', '100', '--hedge-delay', '1ms', '--seed', '3', '--no-save', '-o', 'json', '--html', file], {
    timeoutMs: 60_000,
  })
  assert.equal(r.code, 0, r.stderr)
  return { file, html: readFileSync(file, 'utf8'), result: JSON.parse(r.stdout) }
}

/** Every way an HTML page can make the browser fetch something. */
function externalReferences(html: string): string[] {
  const patterns = [
    /<script\b[^>]*\bsrc\s*=/gi,
    /<link\b[^>]*>/gi,
    /<(?:img|iframe|object|embed|audio|video|source|track|image|use|feImage)\b[^>]*\b(?:src|href|data|xlink:href)\s*=\s*["']?(?!#|data:)[^"'\s>]+/gi,
    /\b(?:src|href|xlink:href|action|poster|srcset)\s*=\s*["']?\s*(?:https?:)?\/\//gi,
    /url\(\s*["']?(?!data:|#)[^)"']+/gi,
    /@import\b/gi,
    /@font-face\b/gi,
    /<meta\b[^>]*http-equiv\s*=\s*["']?refresh/gi,
  ]
  return patterns.flatMap((p) => [...html.matchAll(p)].map((m) => m[0]))
}

/**
 * The page twice: with scripts off (the static SVG charts, whose facts are
 * returned), then as it runs, where its one script redraws every chart
 * (a canvas per panel). Requests and problems of both loads are returned.
 */
async function render(file: string): Promise<RenderedPage> {
  browser ??= await launchChromium()
  const png = file.replace(/\.html$/, '.png')
  const still = await renderPage(browser, file, png.replace(/\.png$/, '-static.png'), { scripts: false })
  assert.deepEqual(still.facts.liveCharts, [], 'scripts off: the static charts only')
  const live = await renderPage(browser, file, png)
  assert.equal(live.facts.liveCharts.length, CHARTS.length, "every chart redrawn by the page's script")
  for (const canvases of live.facts.liveCharts) assert.ok(canvases > 0, `a live chart has ${canvases} canvases`)
  assert.ok(statSync(png).size > 20_000, 'a screenshot with content')
  return { facts: still.facts, requested: [...still.requested, ...live.requested], problems: [...still.problems, ...live.problems] }
}

const CHARTS = ['percentiles', 'histogram', 'timeline', 'hedges']
const SERIES = [
  'plain:percentiles',
  'hedged:percentiles',
  'plain:histogram',
  'hedged:histogram',
  'warmup:p50',
  'plain:p50',
  'plain:p99',
  'plain:rps',
  'hedged:p50',
  'hedged:p99',
  'hedged:rps',
  'hedged:hedges',
  'hedged:delay',
]

// Timed phases of 1.5 s: two per-second points each, so the timeline has lines to draw.
const TIMED = ['-z', '1.5s', '-c', '4', '--warmup', '200']

test('--html on a real plain+hedged run writes one self-contained file with every chart and series', async (t) => {
  const { html, result } = await realRun('timed', TIMED)
  t.diagnostic(`report in ${out}`)
  assert.ok(result.phases.plain && result.phases.hedged, 'both phases ran')
  assert.ok((result.phases.hedged.hedging?.hedgesSent ?? 0) > 0, 'hedges were sent')
  assert.ok(result.phases.plain.timeline.length >= 2, 'a timed phase of 1.5 s has two per-second points')
  assert.match(html, /^<!doctype html>/i)
  assert.deepEqual(externalReferences(html), [], 'nothing that would make a browser fetch')
  assert.deepEqual(
    [...html.matchAll(/<svg data-chart="([^"]+)"/g)].map((m) => m[1]),
    CHARTS,
  )
  const ids = new Set([...html.matchAll(/data-series="([^"]+)"/g)].map((m) => m[1]))
  for (const id of SERIES) assert.ok(ids.has(id), `series ${id} in the file`)
  passed++
})

test("the real run's report renders in Chromium: nothing fetched, no errors, every series drawn", { skip: noChromium, timeout: 90_000 }, async () => {
  const file = join(out, 'timed.html')
  const { facts, requested, problems } = await render(file)
  assert.deepEqual(facts.charts, CHARTS)
  for (const size of facts.svgSizes) assert.ok(size.width > 300 && size.height > 150, `chart laid out: ${JSON.stringify(size)}`)
  const lengths = new Map(facts.series.map((s) => [s.id, s.length]))
  for (const id of SERIES) assert.ok((lengths.get(id) ?? 0) > 0, `series ${id} drawn (length ${lengths.get(id)})`)
  for (const s of facts.series) assert.ok(s.length > 0, `every series is visible: ${s.id} has length ${s.length}`)
  assert.deepEqual(requested, [pathToFileURL(file).href, pathToFileURL(file).href], 'nothing but the page itself was requested, in either load')
  assert.deepEqual(problems, [], 'no console errors or CSP violations')
  passed++
})

test('a short run (phases of a few hundred ms): over-time charts from 100 ms points, drawn in Chromium', { skip: noChromium, timeout: 90_000 }, async () => {
  // 400 requests at -c 8 of a 2-6 ms service: a few hundred ms per phase (more on a loaded machine, still
  // far under the 5 s that fine points cover), and never under the 200 ms two 100 ms points need.
  const { file, html, result } = await realRun('short', ['-n', '400', '-c', '8', '--warmup', '50'])
  for (const name of ['plain', 'hedged']) {
    const phase = result.phases[name] as unknown as { durationMs: number; timelineFine?: Array<{ t: number }> }
    assert.ok(phase.durationMs < 5000, `${name} lasted ${phase.durationMs} ms`)
    // Not one dot per second: points every 100 ms (t in seconds: 0, 0.1, 0.2 ...).
    assert.ok((phase.timelineFine?.length ?? 0) >= 2, `${name} fine points: ${JSON.stringify(phase.timelineFine?.map((p) => p.t))}`)
    assert.ok(phase.timelineFine!.every((p) => Math.abs(p.t * 10 - Math.round(p.t * 10)) < 1e-9))
  }
  assert.match(html, /<g data-markers="plain:p50">/, 'few points: each drawn as a dot with its value on hover')
  const { facts, requested, problems } = await render(file)
  assert.deepEqual(facts.charts, CHARTS)
  for (const s of facts.series) assert.ok(s.length > 0, `series ${s.id} is visible (length ${s.length})`)
  assert.deepEqual(requested, [pathToFileURL(file).href, pathToFileURL(file).href])
  assert.deepEqual(problems, [])
  passed++
})
