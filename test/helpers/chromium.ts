/**
 * Headless Chromium driven over the DevTools protocol with undici's
 * WebSocket, for tests that must see a page the way a browser does. Nothing
 * is installed here: callers skip when CHROMIUM_PATH is absent. Every wait
 * is bounded, and `close()` kills the whole process group we started.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { WebSocket } from 'undici'

export const CHROMIUM_PATH = '/usr/bin/chromium'

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH)
}

export interface CdpEvent {
  method: string
  params: Record<string, unknown>
  sessionId?: string
}

export interface Browser {
  /** Sends a command (to a page session when `sessionId` is given) and waits for its result. */
  send(method: string, params?: Record<string, unknown>, sessionId?: string): Promise<Record<string, unknown>>
  /** Every event received so far, in order. */
  events: CdpEvent[]
  /** Resolves with the first event (from now or already received) matching. */
  waitFor(match: (e: CdpEvent) => boolean, timeoutMs?: number): Promise<CdpEvent>
  close(): Promise<void>
}

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--remote-debugging-port=0',
]

export async function launchChromium(timeoutMs = 20_000): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'hedgebench-chromium-'))
  // Own process group, so close() can end Chromium and its helpers by our pid alone.
  const child = spawn(CHROMIUM_PATH, [...FLAGS, `--user-data-dir=${profile}`, 'about:blank'], { detached: true, stdio: ['ignore', 'ignore', 'pipe'] })
  const cleanup = async (): Promise<void> => {
    await killGroup(child)
    rmSync(profile, { recursive: true, force: true })
  }
  try {
    const url = await devtoolsUrl(child, timeoutMs)
    const ws = await connect(url, timeoutMs)
    return client(ws, cleanup)
  } catch (err) {
    await cleanup()
    throw err
  }
}

/** Chromium prints "DevTools listening on ws://..." on stderr once it is ready. */
function devtoolsUrl(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let stderr = ''
    const timer = setTimeout(() => done(new Error(`no DevTools URL from Chromium within ${timeoutMs} ms; stderr: ${stderr.slice(-500)}`)), timeoutMs)
    const onData = (chunk: Buffer): void => {
      stderr += chunk.toString()
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(stderr)
      if (match) done(null, match[1])
    }
    const onExit = (code: number | null): void => done(new Error(`Chromium exited (${code}) before DevTools was ready: ${stderr.slice(-500)}`))
    function done(err: Error | null, url?: string): void {
      clearTimeout(timer)
      child.stderr?.off('data', onData)
      child.off('exit', onExit)
      // Keep draining stderr so Chromium never blocks on a full pipe.
      child.stderr?.resume()
      if (err) reject(err)
      else resolve(url!)
    }
    child.stderr?.on('data', onData)
    child.on('exit', onExit)
  })
}

function connect(url: string, timeoutMs: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    const timer = setTimeout(() => reject(new Error(`DevTools WebSocket did not open within ${timeoutMs} ms`)), timeoutMs)
    ws.addEventListener('open', () => {
      clearTimeout(timer)
      resolve(ws)
    })
    ws.addEventListener('error', () => {
      clearTimeout(timer)
      reject(new Error(`cannot connect to ${url}`))
    })
  })
}

function client(ws: WebSocket, cleanup: () => Promise<void>): Browser {
  let nextId = 1
  const pending = new Map<number, { resolve(v: Record<string, unknown>): void; reject(e: Error): void }>()
  const events: CdpEvent[] = []
  const waiters = new Set<{ match(e: CdpEvent): boolean; resolve(e: CdpEvent): void }>()
  ws.addEventListener('message', (ev) => {
    const msg = JSON.parse(String(ev.data)) as {
      id?: number
      result?: Record<string, unknown>
      error?: { message: string }
      method?: string
      params?: Record<string, unknown>
      sessionId?: string
    }
    if (msg.id !== undefined) {
      const p = pending.get(msg.id)
      pending.delete(msg.id)
      if (msg.error) p?.reject(new Error(`CDP error: ${msg.error.message}`))
      else p?.resolve(msg.result ?? {})
      return
    }
    if (!msg.method) return
    const event: CdpEvent = { method: msg.method, params: msg.params ?? {}, ...(msg.sessionId ? { sessionId: msg.sessionId } : {}) }
    events.push(event)
    for (const w of waiters) if (w.match(event)) w.resolve(event)
  })
  return {
    events,
    send(method, params = {}, sessionId) {
      const id = nextId++
      ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }))
      return withTimeout(new Promise((resolve, reject) => pending.set(id, { resolve, reject })), 15_000, `CDP ${method}`)
    },
    waitFor(match, timeoutMs = 15_000) {
      const seen = events.find(match)
      if (seen) return Promise.resolve(seen)
      let waiter!: { match(e: CdpEvent): boolean; resolve(e: CdpEvent): void }
      const found = new Promise<CdpEvent>((resolve) => {
        waiter = { match, resolve }
        waiters.add(waiter)
      })
      return withTimeout(found, timeoutMs, 'waiting for a CDP event').finally(() => waiters.delete(waiter))
    },
    async close() {
      try {
        ws.close()
      } catch {
        // Already closed: Chromium is killed below either way.
      }
      await cleanup()
    },
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** SIGKILL to the process group we created (helpers included), then wait (bounded) for the exit. */
async function killGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined) return
  const running = child.exitCode === null && child.signalCode === null
  const exited = running ? new Promise<void>((resolve) => child.once('exit', () => resolve())) : Promise.resolve()
  try {
    process.kill(-child.pid, 'SIGKILL')
  } catch {
    // The group is gone already.
  }
  await withTimeout(exited, 5000, 'Chromium exit').catch(() => undefined)
}

/** What a report page shows a browser: its charts, their series (drawn length and box), laid-out sizes, title. */
export interface PageFacts {
  title: string
  charts: string[]
  /** The interactive charts drawn by the page's script: canvases in each `.live-chart` (none with scripts off). */
  liveCharts: number[]
  series: Array<{ id: string; length: number; box: number }>
  svgSizes: Array<{ width: number; height: number }>
  /** Figure cells (not class "text") whose text wraps onto a second line (a Range over the text gives one rect per line). */
  wrappedCells: string[]
  /** Tables wider than the page's content column. */
  wideTables: number
}

const PAGE_FACTS = `JSON.stringify({
  title: document.title,
  charts: [...document.querySelectorAll('svg[data-chart]')].map((s) => s.getAttribute('data-chart')),
  liveCharts: [...document.querySelectorAll('.live-chart')].map((c) => c.querySelectorAll('canvas').length),
  series: [...document.querySelectorAll('[data-series]')].map((p) => ({ id: p.getAttribute('data-series'), length: p.getTotalLength(), box: (() => { const r = p.getBoundingClientRect(); return r.width + r.height })() })),
  svgSizes: [...document.querySelectorAll('svg[data-chart]')].map((s) => { const r = s.getBoundingClientRect(); return { width: r.width, height: r.height } }),
  wrappedCells: [...document.querySelectorAll('td:not(.text)')].filter((td) => { const r = document.createRange(); r.selectNodeContents(td); return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1 }).map((td) => td.textContent),
  wideTables: [...document.querySelectorAll('table')].filter((t) => t.getBoundingClientRect().width > document.body.clientWidth).length,
})`

export interface RenderedPage {
  facts: PageFacts
  /** Every URL the page requested (the page itself included). */
  requested: string[]
  /** Console errors and log entries (CSP violations land here). */
  problems: string[]
}

export interface PageOptions {
  /** Viewport width in px (1280). */
  width?: number
  /** false: scripts off, as a reader who disabled them sees the page (the static SVG charts). Default on. */
  scripts?: boolean
  /** Run in the page once it has loaded, before its facts are read; its JSON result is returned as `extra`. */
  evaluate?: (page: PageSession) => Promise<unknown>
}

/** A loaded tab: send commands to it, evaluate an expression in it (one that returns, or resolves to, a JSON string). */
export interface PageSession {
  send(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>>
  evaluate<T>(expression: string): Promise<T>
}

/** Loads a local HTML file in a new tab, reads its facts, writes a full-page screenshot to `png`. */
export async function renderPage(browser: Browser, file: string, png: string, options: number | PageOptions = {}): Promise<RenderedPage & { extra?: unknown }> {
  const { width = 1280, scripts = true, evaluate } = typeof options === 'number' ? { width: options } : options
  const { targetId } = (await browser.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string }
  const { sessionId } = (await browser.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string }
  for (const domain of ['Network', 'Page', 'Runtime', 'Log']) await browser.send(`${domain}.enable`, {}, sessionId)
  await browser.send('Emulation.setDeviceMetricsOverride', { width, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId)
  if (!scripts) await browser.send('Emulation.setScriptExecutionDisabled', { value: true }, sessionId)
  await browser.send('Page.navigate', { url: pathToFileURL(file).href }, sessionId)
  await browser.waitFor((e) => e.method === 'Page.loadEventFired' && e.sessionId === sessionId, 20_000)
  const page: PageSession = {
    send: (method, params = {}) => browser.send(method, params, sessionId),
    async evaluate<T>(expression: string): Promise<T> {
      const r = (await browser.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId)) as {
        result: { value: string }
        exceptionDetails?: unknown
      }
      if (r.exceptionDetails) throw new Error(`page evaluation failed: ${JSON.stringify(r.exceptionDetails).slice(0, 500)}`)
      return JSON.parse(r.result.value) as T
    },
  }
  const facts = await page.evaluate<PageFacts>(PAGE_FACTS)
  const extra = evaluate ? await evaluate(page) : undefined
  const shot = (await browser.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: true }, sessionId)) as { data: string }
  writeFileSync(png, Buffer.from(shot.data, 'base64'))
  const mine = browser.events.filter((e) => e.sessionId === sessionId)
  await browser.send('Target.closeTarget', { targetId })
  return {
    facts,
    requested: mine.filter((e) => e.method === 'Network.requestWillBeSent').map((e) => (e.params.request as { url: string }).url),
    problems: mine
      .filter((e) => e.method === 'Log.entryAdded' || (e.method === 'Runtime.consoleAPICalled' && e.params.type === 'error'))
      .map((e) => JSON.stringify(e.params).slice(0, 300)),
    ...(evaluate ? { extra } : {}),
  }
}
