/**
 * A mark splits the second it falls in: against a simulated target whose
 * latency changes at the very moment of the mark (a fast and a slow sim
 * target behind a forwarding switch flipped with the mark), the segment
 * before the mark holds none of the slow requests, the change at the mark
 * is judged worse and `--fail-if 'hedged.p99>+10%'` holds. And the marks
 * that cannot start a segment: a second one at the same time, one past -z.
 */
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { Agent, createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startTarget, type Target } from '../src/sim/target.js'
import { compareSegments, parseFailIf, renderWatchHtml, renderWatchText, watch, watchGates, Watch } from '../src/index.js'
import { runMain } from './helpers/main-cases.js'
import { gateExitCode } from '../src/cli/gate-exit.js'
import { decodeHistogram } from '../src/stats/histogram.js'

/** 2 ms on every request; the slow one adds SLOW_MS. */
const FAST = { name: 'fast', description: 'fast', file: null, replicas: 1, seed: 5, model: { base: { type: 'fixed' as const, ms: 2 } } }
const SLOW_MS = 300
const SLOW = { ...FAST, name: 'slow', description: 'slow', model: { ...FAST.model, addMs: SLOW_MS } }

/** An HTTP forwarder to one of two upstreams: each request goes to the one chosen when it arrives. */
async function startSwitch(upstreams: [string, string]): Promise<{ url: string; flip(): void; close(): Promise<void> }> {
  let current = 0
  const agent = new Agent({ keepAlive: true, maxSockets: 256 })
  const server: Server = createServer((req, res) => {
    const to = new URL(req.url ?? '/', upstreams[current])
    const out = request(to, { method: req.method, headers: req.headers, agent }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers)
      up.pipe(res)
    })
    out.on('error', () => res.destroy())
    req.pipe(out)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/x`,
    flip: () => {
      current = 1
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      agent.destroy()
    },
  }
}

const targets: Target[] = [await startTarget({ profile: FAST }), await startTarget({ profile: SLOW })]
const flipper = await startSwitch([targets[0]!.urls[0]!, targets[1]!.urls[0]!])
after(async () => {
  await flipper.close()
  await Promise.all(targets.map((t) => t.close()))
})

test("a mark in the middle of a second: the slow requests after it are all the new segment's, the change is worse and the gate holds", {
  timeout: 60_000,
}, async () => {
  // The flip and the mark in one tick, half a second into second 5 of the window.
  let at: NodeJS.Timeout | undefined
  const w: Watch = new Watch({
    urls: [flipper.url],
    rate: 200,
    durationMs: 9000,
    warmup: 40,
    seed: 11,
    onSecond: (s) => {
      if (s.t !== 4) return
      at = setTimeout(() => {
        flipper.flip()
        assert.equal(w.mark('slow', 'api').taken, true)
      }, 500)
    },
  })
  const result = await w.run()
  clearTimeout(at)
  assert.equal(result.marks.length, 1)
  const mark = result.marks[0]!
  assert.ok(mark.atS > 4 && mark.atS < 6, `the mark inside a second, not on its edge: ${mark.atS}`)
  const [before, slow] = result.segments
  assert.equal(before!.toS, mark.atS)
  assert.equal(slow!.fromS, mark.atS)
  for (const lane of ['plain', 'hedged'] as const) {
    // No request sent after the flip finished before the mark: the first segment is all fast.
    assert.ok(decodeHistogram(before!.lanes[lane].histogram).maxValue < SLOW_MS * 1000, `${lane}: a slow request before the mark`)
    assert.equal(before!.lanes[lane].requests + slow!.lanes[lane].requests, result.run.phases[lane]!.requests)
  }
  for (const c of compareSegments(result)) {
    const p99 = c.comparison.metrics.find((m) => m.metric === 'p99')!
    assert.equal(p99.changes[1]?.verdict, 'worse', `${c.lane}: ${JSON.stringify(p99)}`)
  }
  const gates = watchGates([parseFailIf('hedged.p99>+10%')], result)
  assert.deepEqual(
    gates.checks.map((c) => c.holds),
    [true],
  )
  // The reports say it at the top, one line per mark, and name each segment once in compare's tables.
  const comparisons = compareSegments(result)
  const text = renderWatchText(result, comparisons, gates, { color: false })
  const atMark = /^At the marks:\n {2}at "slow": plain p99 .+ -> .+, worse; hedged p99 .+ -> .+, worse$/m
  assert.match(text, atMark)
  assert.ok(text.search(atMark) < text.indexOf('segment  seconds'), 'ahead of the tables')
  assert.match(text, /^ {2}start {2}plain phase {2}\d+ requests/m)
  const html = renderWatchHtml(result, comparisons, gates)
  assert.match(html, /<h2>At the marks<\/h2>\n<ul><li>at &quot;slow&quot;: plain p99 .+, worse; hedged p99 .+, worse<\/li>/)
  // Compare's tables (verdict first), no preformatted text as wide as its intervals.
  assert.doesNotMatch(html, /<pre>/)
  assert.equal(html.match(/<table class="comparison">/g)?.length, 2)
  // A generator starved by a busy machine makes any gate inconclusive (exit 3), as compare's do; otherwise the run fails.
  assert.equal(gateExitCode(gates.checks, gates.inconclusive, false), gates.inconclusive.length > 0 ? 3 : 1)
})

test('two --mark-at at the same second: the second one has no traffic in its segment and is ignored with a line, no empty segment', {
  timeout: 60_000,
}, async () => {
  const notes: string[] = []
  const result = await watch({
    urls: targets[0]!.urls,
    rate: 100,
    durationMs: 3000,
    warmup: 20,
    seed: 2,
    marksAt: [{ atS: 2 }, { atS: 2 }],
    onNote: (line) => notes.push(line),
  })
  assert.deepEqual(
    result.segments.map((s) => [s.name, s.fromS]),
    [
      ['start', 0],
      ['at 2s', 2],
    ],
  )
  assert.deepEqual(
    notes.filter((l) => l.startsWith('mark')),
    ['mark "at 2s" (--mark-at): a new segment from 2 s', 'mark "at 2s" (--mark-at) ignored: no traffic yet in segment "at 2s"'],
  )
})

test('--mark-at at or past -z: exit 2 and one line, as other bad input, before any traffic', { timeout: 60_000 }, async () => {
  const [past, atEnd] = await Promise.all([
    runMain(['watch', ...targets[0]!.urls, '-q', '100', '-z', '5s', '--mark-at', '50s', '--no-save']),
    runMain(['watch', ...targets[0]!.urls, '-q', '100', '-z', '5s', '--mark-at', '2s', '--mark-at', '5s=end', '--no-save']),
  ])
  assert.deepEqual(
    [past.code, past.stdout, past.stderr],
    [2, '', 'hedgebench: --mark-at 50s is not inside the watch (-z 5s): a mark starts a segment before the window ends\n'],
  )
  assert.deepEqual(
    [atEnd.code, atEnd.stderr],
    [2, 'hedgebench: --mark-at 5s is not inside the watch (-z 5s): a mark starts a segment before the window ends\n'],
  )
  assert.throws(() => new Watch({ urls: targets[0]!.urls, rate: 100, durationMs: 5000, marksAt: [{ atS: 50 }] }), /--mark-at 50s is not inside the watch/)
})
