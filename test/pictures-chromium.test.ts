/**
 * The pages people read (issue 45) in Chromium, at 1280 px and at a phone's
 * 390 px: a run, a compare of 3 and of 6 runs, a sweep of 12 settings. No
 * console or CSP error, every chart drawn, no two texts of a chart over
 * each other, no panel of more than 8 series, every text's contrast at
 * WCAG AA (4.5:1); at 1280 px no sideways scroll (the page's nor a
 * table's), charts at the page's full width, the verdict within the first
 * 800 px. Skipped without Chromium, as html-chromium.test.ts.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromiumAvailable, CHROMIUM_PATH, launchChromium, renderPage, type Browser } from './helpers/chromium.js'
import { PICTURE_FACTS, type PictureFacts, writePicturePages } from './helpers/picture-pages.js'
import { skipWithout } from './helpers/required-tool.js'

const skip = skipWithout(chromiumAvailable(), 'chromium', `Chromium not found at ${CHROMIUM_PATH}; skipping the browser check of the pages`)

let browser: Browser | undefined
after(async () => {
  await browser?.close()
})

const out = mkdtempSync(join(tmpdir(), 'hedgebench-pictures-'))
const pages = writePicturePages(out)

for (const page of pages) {
  for (const width of [1280, 390]) {
    test(`${page.name} at ${width} px: no console error, every chart drawn, no text over text${width === 1280 ? ', no horizontal scroll, the verdict on the first screen' : ''}`, {
      skip,
      timeout: 60_000,
    }, async (t) => {
      browser ??= await launchChromium()
      const png = join(out, `${page.name}-${width}.png`)
      const { problems, extra } = await renderPage(browser, page.file, png, { width, evaluate: (p) => p.evaluate<PictureFacts>(PICTURE_FACTS) })
      const facts = extra as PictureFacts
      t.diagnostic(`${png}: ${JSON.stringify({ ...facts, overlaps: facts.overlaps.length })}`)
      assert.deepEqual(problems, [], 'no console errors or CSP violations')
      assert.ok(facts.staticCharts.length > 0, 'charts on the page')
      const live = facts.liveCharts.length > 0
      if (live) for (const canvases of facts.liveCharts) assert.ok(canvases > 0, 'a live chart drawn')
      else for (const c of facts.staticCharts) assert.ok(c.drawn && c.series > 0, `${c.chart} drawn`)
      assert.deepEqual(facts.overlaps, [], 'no text over other text in a chart')
      assert.deepEqual(facts.lowContrast, [], 'text below WCAG AA contrast (4.5:1)')
      // A legend of more than 8 lines is matched by colour alone (the sweep's chart names each point where it is, no legend).
      for (const n of facts.panelSeries) assert.ok(n <= 8, `a panel of ${n} series: ${JSON.stringify(facts.panelSeries)}`)
      if (width === 1280) {
        assert.ok(facts.scrollWidth <= facts.innerWidth, `no horizontal scroll: the page is ${facts.scrollWidth} px wide`)
        assert.deepEqual(facts.scrolledTables, [], 'no table scrolls sideways in its box')
        for (const share of facts.chartShare) assert.ok(share > 0.97, `a chart at full width: ${JSON.stringify(facts.chartShare)}`)
        assert.ok(facts.verdictBottom !== null && facts.verdictBottom <= 800, `the verdict within the first 800 px (ends at ${facts.verdictBottom})`)
      }
    })
  }
}
