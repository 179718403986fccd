/**
 * The pages a reader is shown (issue 45), built in process from fixtures: a
 * run, compares of 3 and 6 runs, and a sweep of 12 settings. The browser
 * test checks them; scripts/screenshots.mjs photographs the same pages for
 * the docs.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { compareRuns } from '../../src/report/compare.js'
import { renderHtml } from '../../src/report/html.js'
import { sweepFrontier } from '../../src/report/sweep-frontier.js'
import { renderSweepHtml } from '../../src/report/sweep-html.js'
import { hedgedRunWithTimeline } from './html-fixture.js'
import { makeHedgedRun } from './result-fixture.js'
import { makeSweep, TWELVE_DELAYS } from './sweep-fixture.js'

export interface PicturePage {
  name: string
  file: string
}

const LABELS = ['baseline', 'delay-p90', 'delay-p95', 'budget-5', 'budget-20', 'tied']

function compareOf(count: number): string {
  const runs = LABELS.slice(0, count).map((label, i) => (i === 0 ? { ...hedgedRunWithTimeline(), label } : makeHedgedRun({ label }, i)))
  const comparison = compareRuns(runs.map((result) => ({ name: `2026-12-04T10-00-00Z-${result.label}.json`, result })))
  return renderHtml(runs, { comparison })
}

/** Writes the four pages into `dir`; returns them in order. */
export function writePicturePages(dir: string): PicturePage[] {
  const sweep = makeSweep({ delays: TWELVE_DELAYS, label: 'nightly' })
  const pages: Array<[string, string]> = [
    ['run', renderHtml(hedgedRunWithTimeline())],
    ['compare-3', compareOf(3)],
    ['compare-6', compareOf(6)],
    ['sweep-12', renderSweepHtml(sweep, sweepFrontier(sweep))],
  ]
  return pages.map(([name, html]) => {
    const file = join(dir, `${name}.html`)
    writeFileSync(file, html)
    return { name, file }
  })
}

/** Runs in the page: what a reader meets (a JSON string). */
export const PICTURE_FACTS = `JSON.stringify((() => {
  const boxes = (svg) => [...svg.querySelectorAll('text')].map((t) => { const r = t.getBoundingClientRect(); return { text: t.textContent, x: r.left, y: r.top, w: r.width, h: r.height } }).filter((b) => b.w > 0 && b.h > 0)
  const hit = (a, b) => a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5
  const overlaps = []
  for (const svg of document.querySelectorAll('svg[data-chart]')) {
    const t = boxes(svg)
    for (let i = 0; i < t.length; i++) for (let j = i + 1; j < t.length; j++) if (hit(t[i], t[j])) overlaps.push(svg.getAttribute('data-chart') + ': ' + t[i].text + ' / ' + t[j].text)
  }
  // WCAG 2 contrast of each element's own text against the first opaque background behind it (white when none).
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number)
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4 }).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0)
  const backdrop = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c } return [255, 255, 255] }
  const lowContrast = []
  for (const el of document.querySelectorAll('body *')) {
    if (![...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '')) continue
    const style = getComputedStyle(el)
    const fg = rgb(el instanceof SVGElement ? style.fill : style.color)
    if (fg.length < 3) continue
    const [a, b] = [lum(fg), lum(backdrop(el))]
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)
    if (ratio < 4.5) lowContrast.push(el.tagName + ' "' + el.textContent.trim().slice(0, 30) + '": ' + ratio.toFixed(2))
  }
  const verdict = document.querySelector('.verdict')
  return {
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth,
    overlaps,
    lowContrast: [...new Set(lowContrast)].slice(0, 20),
    verdictBottom: verdict ? verdict.getBoundingClientRect().bottom + scrollY : null,
    staticCharts: [...document.querySelectorAll('svg[data-chart]')].map((s) => { const r = s.getBoundingClientRect(); return { chart: s.getAttribute('data-chart'), drawn: r.width > 0 && r.height > 0, series: [...s.querySelectorAll('[data-series]')].filter((p) => p.getTotalLength() > 0).length } }),
    liveCharts: [...document.querySelectorAll('.live-chart')].map((c) => c.querySelectorAll('canvas').length),
    chartShare: [...document.querySelectorAll('.live-chart')].map((c) => c.querySelector('.uplot').getBoundingClientRect().width / c.parentElement.getBoundingClientRect().width),
    panelSeries: [...document.querySelectorAll('.live-chart .uplot')].map((p) => [...p.querySelectorAll('.u-legend .u-series')].filter((tr) => tr.querySelector('.u-marker')).length),
    scrolledTables: [...document.querySelectorAll('.scroll')].filter((d) => d.scrollWidth > d.clientWidth + 1).map((d) => (d.closest('section')?.querySelector('h2')?.textContent ?? 'answer') + ': ' + d.scrollWidth + ' px'),
  }
})())`

export interface PictureFacts {
  scrollWidth: number
  innerWidth: number
  overlaps: string[]
  /** Texts under 4.5:1 against their background (the first 20). */
  lowContrast: string[]
  verdictBottom: number | null
  staticCharts: Array<{ chart: string; drawn: boolean; series: number }>
  liveCharts: number[]
  /** Each live chart's width as a share of its figure's. */
  chartShare: number[]
  /** Series named in each live chart's panel (its legend). */
  panelSeries: number[]
  /** Tables that scroll sideways inside their box (their section's heading, and their width). */
  scrolledTables: string[]
}
