#!/usr/bin/env node
/**
 * `npm run screenshots`: the pages the browser test checks (a run, compares
 * of 3 and 6 runs, a sweep of 12 settings; test/helpers/picture-pages.ts),
 * photographed in Chromium at 1280 px into docs/img/, for docs/report.md and
 * docs/sweep.md. Each picture is the page's first screen (1280 x 800, the
 * sweep's a little taller to hold its chart) at 3/4 scale, so that each PNG
 * stays small. Needs the build (dist/) and /usr/bin/chromium.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const { writePicturePages } = await import(pathToFileURL(join(root, 'dist/test/helpers/picture-pages.js')).href)
const { chromiumAvailable, CHROMIUM_PATH, launchChromium } = await import(pathToFileURL(join(root, 'dist/test/helpers/chromium.js')).href)

if (!chromiumAvailable()) {
  process.stderr.write(`screenshots: Chromium not found at ${CHROMIUM_PATH}\n`)
  process.exit(2)
}
const HEIGHT = { 'sweep-12': 1000 }
const out = join(root, 'docs', 'img')
mkdirSync(out, { recursive: true })
const work = mkdtempSync(join(tmpdir(), 'hedgebench-screenshots-'))
const browser = await launchChromium()
try {
  for (const page of writePicturePages(work)) {
    const height = HEIGHT[page.name] ?? 800
    const { targetId } = await browser.send('Target.createTarget', { url: 'about:blank' })
    const { sessionId } = await browser.send('Target.attachToTarget', { targetId, flatten: true })
    await browser.send('Page.enable', {}, sessionId)
    await browser.send('Emulation.setDeviceMetricsOverride', { width: 1280, height, deviceScaleFactor: 1, mobile: false }, sessionId)
    await browser.send('Page.navigate', { url: pathToFileURL(page.file).href }, sessionId)
    await browser.waitFor((e) => e.method === 'Page.loadEventFired' && e.sessionId === sessionId, 20_000)
    const shot = await browser.send('Page.captureScreenshot', { format: 'png', clip: { x: 0, y: 0, width: 1280, height, scale: 0.75 } }, sessionId)
    const file = join(out, `${page.name}.png`)
    writeFileSync(file, Buffer.from(shot.data, 'base64'))
    await browser.send('Target.closeTarget', { targetId })
    process.stdout.write(`${file}: ${Math.round(statSync(file).size / 1024)} kB\n`)
  }
} finally {
  await browser.close()
  rmSync(work, { recursive: true, force: true })
}
