/**
 * A generator with a skewed clock: its own start times look synchronized,
 * but the target's Date headers give it away. Three shards run in-process
 * with an injected wall clock (0, +300 ms, -200 ms) against one server
 * that stamps every response with a fresh Date (no per-second cache), so
 * each bound is rigorous: the true offset (server - local = -skew) must lie
 * inside every shard's bounds, and the merged report must flag the spread.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import type { RunResult } from '../src/results/run-result.js'
import { mergeResults } from '../src/stats/result-merge.js'
import { combineOffsets, dateHeaderMs, ClockOffsetEstimator } from '../src/stats/clock-offset.js'
import { renderText } from '../src/report/text.js'
import { startServer, type CountingServer } from './helpers/servers.js'

const SKEWS = [0, 300, -200]
let server: CountingServer
let shards: RunResult[]

before(async () => {
  server = await startServer({
    handle: (req, res) => {
      req.resume()
      setTimeout(() => res.writeHead(200, { date: new Date().toUTCString() }).end('ok\n'), 1)
    },
  })
  const startAt = Date.now() + 400
  // -z 1.3 s: every shard's run crosses at least one second boundary of the
  // server's clock, which is what narrows the bounds below a second.
  shards = await Promise.all(
    SKEWS.map((skew, index) =>
      run({
        urls: [server.url],
        durationMs: 1300,
        rate: 240,
        concurrency: 4,
        mode: 'plain',
        warmup: 0,
        runId: 'skew',
        shard: { index, count: 3 },
        startAt,
        wallClock: () => Date.now() + skew,
      }),
    ),
  )
})

after(() => server.close())

test("each generator's clock offset bounds hold its true offset, narrowed below a second", () => {
  for (const [i, r] of shards.entries()) {
    const c = r.clock!
    assert.ok(c.samples > 0, `shard ${i} read Date headers`)
    assert.ok(c.minMs <= -SKEWS[i]! && -SKEWS[i]! <= c.maxMs, `shard ${i}: true offset ${-SKEWS[i]!} ms in [${c.minMs}, ${c.maxMs}]`)
    assert.ok(c.maxMs - c.minMs < 1000, `shard ${i}: bounds ${c.maxMs - c.minMs} ms wide`)
    // Only a few responses are read: those near a second boundary, and a sparse baseline.
    assert.ok(c.samples < r.phases.plain!.requests, `shard ${i}: ${c.samples} of ${r.phases.plain!.requests} responses read`)
  }
})

test("the merge flags the offset spread that the generators' own start times hide", () => {
  const merged = mergeResults(shards.map((result, i) => ({ result, source: `shard ${i}` })))
  const m = merged.merge!
  const widths = shards.map((r) => r.clock!.maxMs - r.clock!.minMs)
  // The midpoints are within half their bounds' width of the truth, so their
  // spread is the true 500 ms (+300 vs -200) within the two widest half-widths.
  const slack = (Math.max(...widths) + widths.sort((a, b) => b - a)[1]!) / 2
  assert.ok(Math.abs(m.offsetSpreadMs! - 500) <= slack, `offset spread ${m.offsetSpreadMs} ms, expected 500 ± ${slack}`)
  assert.ok(m.offsetGapMs! > 0, 'the bounds are provably apart')
  assert.ok(
    merged.warnings.some((w) => w.startsWith("the generators' clocks disagree")),
    merged.warnings.join('\n'),
  )
  // Each waited for --start-at by its own clock, so by their own clocks the
  // starts differ only by their lateness (how late each timer fired on this
  // machine), not by the 500 ms the target saw between them.
  const late = shards.map((r) => r.start!.lateMs)
  assert.ok(Math.abs(m.startSpreadMs - (Math.max(...late) - Math.min(...late))) <= 0.2, `self-reported start spread ${m.startSpreadMs} ms = lateness spread`)
  assert.ok(Math.abs(m.targetStartSpreadMs! - 500) <= slack + m.startSpreadMs, `start spread seen by the target ${m.targetStartSpreadMs} ms`)
  assert.match(renderText(merged), /WARNING: the generators' clocks disagree/)
})

test("a Date header is read from undici's raw header list; bounds from one response", () => {
  const raw = [Buffer.from('Content-Length'), Buffer.from('3'), Buffer.from('Date'), Buffer.from('Tue, 01 Dec 2026 07:00:05 GMT')]
  assert.equal(dateHeaderMs(raw), Date.parse('2026-12-01T07:00:05Z'))
  assert.equal(dateHeaderMs(raw.slice(0, 2)), null)
  const e = new ClockOffsetEstimator(() => 0)
  const d = Date.parse('2026-12-01T07:00:05Z')
  // Sent at local d+100, received at d+140, server said second d: offset in [d - (d+140), d + 1000 - (d+100)] = [-140, 900].
  e.observe(d + 100, d + 140, d)
  assert.deepEqual(e.result(), { minMs: -140, maxMs: 900, samples: 1 })
  // The next second seen by a response sent at d+990, received at d+1010: offset >= d+1000 - (d+1010) = -10.
  e.observe(d + 990, d + 1010, d + 1000)
  assert.deepEqual(e.result(), { minMs: -10, maxMs: 900, samples: 2 })
})

test("--workers 2: the worker threads read Date headers too, and their bounds combine into the result's", async () => {
  const r = await run({ urls: [server.url], durationMs: 1300, rate: 200, concurrency: 4, mode: 'plain', warmup: 0, workers: 2 })
  const c = r.clock!
  assert.ok(c.samples > 0, 'samples from the workers')
  // The server stamps a fresh Date from the same system clock: the true offset is 0.
  assert.ok(c.minMs <= 0 && 0 <= c.maxMs, `true offset 0 in [${c.minMs}, ${c.maxMs}]`)
  assert.ok(c.maxMs - c.minMs < 1000, `bounds ${c.maxMs - c.minMs} ms wide`)
})

test('bounds of several estimators of one clock intersect; disjoint ones give the hull', () => {
  assert.deepEqual(combineOffsets([{ minMs: -10, maxMs: 50, samples: 3 }, null, { minMs: 0, maxMs: 80, samples: 2 }]), { minMs: 0, maxMs: 50, samples: 5 })
  assert.deepEqual(
    combineOffsets([
      { minMs: -10, maxMs: 0, samples: 1 },
      { minMs: 5, maxMs: 9, samples: 1 },
    ]),
    { minMs: -10, maxMs: 9, samples: 2 },
  )
  assert.equal(combineOffsets([null, null]), null)
})

test('quietFor: how long until the estimator could want a Date, so that the wall clock is read only then', () => {
  const e = new ClockOffsetEstimator(() => 0)
  // Nothing known: one sample per 50 ms.
  assert.equal(e.quietFor(1000), 0)
  assert.equal(e.quietFor(1010), 40)
  assert.equal(e.quietFor(1050), 0)
  // Bounds [-10, 10] (20 ms wide): the server's second starts at local ...000 give or take 10 ms; a send within
  // 10 + 20 ms of a boundary is wanted, at most one per 2 ms; elsewhere, the wait is until 30 ms before the next one.
  e.observe(4990, 5000, 4000)
  e.observe(5990, 6010, 6000)
  assert.deepEqual(e.result(), { minMs: -10, maxMs: 10, samples: 2 })
  assert.equal(e.quietFor(7500), 470)
  assert.equal(e.wants(7500 + 470), true)
  assert.equal(e.quietFor(7971), 1)
  assert.equal(e.quietFor(8020), 0)
  assert.equal(e.quietFor(8031), 939)
})

test('quietFor: the boundary predicted from the middle of the bounds; a gap ends at exactly its length; a second wide is not yet known', () => {
  // Bounds [100, 140]: the server's clock is 120 ms ahead, give or take 20; a send is wanted within 20 + 20 ms of a boundary.
  const e = new ClockOffsetEstimator(() => 0)
  e.observe(960, 1000, 1100 - 1000) // offset in [100 - 1000, 100 + 1000 - 960] = [-900, 140]
  e.observe(1880, 1900, 2000) // [2000 - 1900, 2000 + 1000 - 1880] = [100, 1120]
  assert.deepEqual(e.result(), { minMs: 100, maxMs: 140, samples: 2 })
  // Sent at 7500: the server reads 7620, 380 ms before its next second, whose window opens 40 ms before it.
  assert.equal(e.quietFor(7500), 340)
  assert.equal(e.quietFor(7840), 0)
  assert.equal(e.quietFor(7842), 0, 'the 2 ms gap has passed, exactly')
  assert.equal(e.quietFor(7843), 1)
  // Bounds a whole second wide say nothing of where the boundary is: the 50 ms baseline gap, not the boundary's window.
  const wide = new ClockOffsetEstimator(() => 0)
  wide.observe(1000, 1000, 1000)
  assert.deepEqual(wide.result(), { minMs: 0, maxMs: 1000, samples: 1 })
  assert.equal(wide.quietFor(5000), 0)
  assert.equal(wide.quietFor(5010), 40)
})

test('a response outside the bounds so far (a clock stepped) widens them to the hull of both', () => {
  const e = new ClockOffsetEstimator(() => 0)
  e.observe(960, 1000, 1100 - 1000)
  e.observe(1880, 1900, 2000)
  assert.deepEqual(e.result(), { minMs: 100, maxMs: 140, samples: 2 })
  // Offset in [5000 - 3010, 5000 + 1000 - 3000] = [1990, 3000]: above the bounds.
  e.observe(3000, 3010, 5000)
  assert.deepEqual(e.result(), { minMs: 100, maxMs: 3000, samples: 3 })
  // And below: [0 - 4010, 0 + 1000 - 4000] = [-4010, -3000].
  e.observe(4000, 4010, 0)
  assert.deepEqual(e.result(), { minMs: -4010, maxMs: 3000, samples: 4 })
})
