/**
 * A --server-stats URL that cannot be read is reported, in the text report
 * and in the JSON's warnings, instead of silently dropping the cross-check
 * (trust issue #12 item 14).
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { RunResult } from '../src/results/run-result.js'
import { startServer, type CountingServer } from './helpers/servers.js'
import { runMain } from './helpers/main-cases.js'

const closers: Array<() => Promise<unknown>> = []
after(async () => {
  await Promise.all(closers.map((c) => c()))
})

async function target(): Promise<CountingServer> {
  const s = await startServer({ delayMs: 1 })
  closers.push(() => s.close())
  return s
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/stats` }
}

async function runWithStats(url: string, statsUrl: string, format: 'json' | 'text'): Promise<string> {
  const r = await runMain([url, '-n', '10', '-c', '1', '--warmup', '0', '--mode', 'plain', '--no-save', '-o', format, '--server-stats', statsUrl], {
    timeoutMs: 60_000,
  })
  assert.equal(r.code, 0, r.stderr)
  return r.stdout
}

test('nothing listening at --server-stats: a warning in the JSON and the report, no cross-check', async () => {
  const t = await target()
  // A port that was just free: listen, note it, close.
  const { server, url: statsUrl } = await listen(() => {})
  await new Promise((r) => server.close(r))
  const result = JSON.parse(await runWithStats(t.url, statsUrl, 'json')) as RunResult
  assert.equal(result.phases.plain!.server, undefined)
  assert.ok(
    result.warnings.includes(`--server-stats ${statsUrl} could not be read: nothing listening (ECONNREFUSED); no server cross-check`),
    result.warnings.join('\n'),
  )
  const text = await runWithStats(t.url, statsUrl, 'text')
  assert.match(text, /^WARNING: --server-stats \S+ could not be read: nothing listening \(ECONNREFUSED\); no server cross-check$/m)
})

test('a --server-stats URL that answers something other than the stats JSON', async () => {
  const t = await target()
  const html = await listen((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>'))
  const other = await listen((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'))
  for (const s of [html.server, other.server]) closers.push(() => new Promise((r) => s.close(r)))
  const notJson = JSON.parse(await runWithStats(t.url, html.url, 'json')) as RunResult
  assert.ok(
    notJson.warnings.some((w) => w === `--server-stats ${html.url} could not be read: it answered something that is not JSON; no server cross-check`),
    notJson.warnings.join('\n'),
  )
  const wrongShape = JSON.parse(await runWithStats(t.url, other.url, 'json')) as RunResult
  assert.ok(
    wrongShape.warnings.some((w) => w.includes('its JSON has no "totals" with numbers received, completed, cancelled, hedgeHeader')),
    wrongShape.warnings.join('\n'),
  )
})
