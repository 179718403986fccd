/**
 * hey's "Details" breakdown (issue #16) on real runs against a server on
 * 127.0.0.1 that sends its headers 20 ms after the request arrives and its
 * body 80 ms after that.
 *
 * Bounds, for the p50 of each stage:
 * - resp wait (request written -> headers seen) cannot be under 20 ms: the
 *   server's timer starts after the request reached it, and never fires early.
 *   Up to +35 ms covers timer lateness and two processes sharing 2 loaded cores.
 * - resp read (headers seen -> last byte) is 80 ms, minus however late the
 *   client handled the headers (an event-loop delay: up to 20 ms allowed at
 *   p50), plus the same +35 ms.
 * The two ranges, [19, 55] and [60, 115], do not overlap: stages swapped,
 * merged, or counted from another start would fall outside them.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { runMain } from './helpers/main-cases.js'
import { startServer, type CountingServer } from './helpers/servers.js'
import type { PhaseResult, RunResult } from '../src/results/run-result.js'
import { renderHtml } from '../src/report/html.js'

const HEADERS_AFTER_MS = 20
const BODY_AFTER_MS = 80
const SLACK_MS = 35
/** How late the client may handle the headers, which shortens the read stage it measures. */
const HANDLING_MS = 20

const servers: CountingServer[] = []
after(async () => {
  await Promise.all(servers.map((s) => s.close()))
})

async function twoStepServer(): Promise<CountingServer> {
  const s = await startServer({
    handle: (req, res) => {
      req.resume()
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/plain' })
        res.flushHeaders()
        setTimeout(() => res.end('ok\n'), BODY_AFTER_MS)
      }, HEADERS_AFTER_MS)
    },
  })
  servers.push(s)
  return s
}

async function run(args: string[]): Promise<{ result: RunResult; text: string }> {
  const json = await runMain([...args, '-o', 'json', '--no-save'], { timeoutMs: 30_000 })
  assert.equal(json.code, 0, json.stderr)
  return { result: JSON.parse(json.stdout) as RunResult, text: '' }
}

function within(label: string, value: number, floor: number, below = 1): void {
  assert.ok(value >= floor - below && value <= floor + SLACK_MS, `${label} ${value} ms, expected ${floor - below}..${floor + SLACK_MS} ms`)
}

test('plain phase: wait and read are told apart; reused connections have no setup', async () => {
  const s = await twoStepServer()
  const { result } = await run([s.url, '-n', '20', '-c', '2', '--warmup', '4', '--mode', 'plain'])
  const details = (result.phases.plain as PhaseResult).details
  assert.ok(details && details.length === 1, JSON.stringify(details))
  const d = details[0]!
  assert.equal(d.write.count, 20)
  within('resp wait p50', d.wait.p50, HEADERS_AFTER_MS)
  within('resp read p50', d.read.p50, BODY_AFTER_MS, HANDLING_MS)
  // The warm-up opened both connections: in the phase, every attempt reused one.
  assert.equal(d.connect.count, 0)
  assert.ok(d.write.p50 < 5, `req write p50 ${d.write.p50} ms: a small GET is one socket write`)
})

test("--disable-keepalive: every attempt opened its connection, and the text report shows hey's Details", async () => {
  const s = await twoStepServer()
  const { result } = await run([s.url, '-n', '10', '-c', '2', '--warmup', '2', '--mode', 'plain', '--disable-keepalive'])
  const d = result.phases.plain!.details![0]!
  assert.equal(d.connect.count, 10)
  assert.ok(d.connect.p50 >= 0 && d.connect.p50 < SLACK_MS, `connect p50 ${d.connect.p50} ms on loopback`)
  const text = await runMain([s.url, '-n', '4', '-c', '1', '--warmup', '1', '--mode', 'plain', '--disable-keepalive', '--no-save'])
  const figure = String.raw`\d+(\.\d+)? (µs|ms|s)`
  const three = `${figure}, ${figure}, ${figure}`
  assert.match(
    text.stdout,
    new RegExp(
      String.raw`Details \(p50, p99, max of completed attempts\):\n {2}conn setup: +${three} \(4 opened a connection\)\n {2}req write: +${three}\n {2}resp wait: +${three}\n {2}resp read: +${three}\n`,
    ),
  )
})

test('hedged phase: one breakdown per attempt number', async () => {
  const s = await twoStepServer()
  // A 10 ms delay against a 100 ms answer fires a hedge for every request (budget off).
  const { result } = await run([
    s.url,
    '-n',
    '12',
    '-c',
    '2',
    '--warmup',
    '2',
    '--mode',
    'hedged',
    '--hedge-delay',
    '10ms',
    '--hedge-budget',
    'off',
    '--cancel',
    'ignore',
  ])
  const details = result.phases.hedged!.details!
  assert.deepEqual(
    details.map((d) => d.attempt),
    [0, 1],
  )
  // With --cancel ignore every copy that left completes: 12 originals, and one hedge per timer
  // that fired before its original's answer (all 12 on an idle machine; a loop stalled past 90 ms
  // on a loaded one fires a timer after its request was decided, and no hedge leaves).
  const hedges = result.phases.hedged!.hedging!.hedgesSent
  assert.ok(hedges >= 6 && hedges <= 12, `hedges sent ${hedges}`)
  assert.equal(details[0]!.write.count, 12)
  assert.equal(details[1]!.write.count, hedges)
  for (const d of details) within(`attempt ${d.attempt} resp wait p50`, d.wait.p50, HEADERS_AFTER_MS)
  // The HTML report has the same breakdown, one row per attempt number.
  const html = renderHtml([result])
  assert.match(html, /<h2>Details<\/h2>/)
  assert.match(html, /<th scope="row">hedged original<\/th><td>12<\/td>/)
  assert.match(html, new RegExp(`<th scope="row">hedged hedge 1</th><td>${hedges}</td>`))
  // One run may be given as the other renderers take it: the same page.
  assert.equal(renderHtml(result), html)
})
