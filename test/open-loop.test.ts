/**
 * Issue 6: open-loop rate mode and coordinated omission, and the generator
 * checking itself. A target that stops answering for 300 ms must show that
 * stall in the corrected latency (measured from each request's intended
 * start) even when the generator could not send on time, while the
 * uncorrected service time hides most of it, as wrk2 shows with -U.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import { GeneratorMonitor } from '../src/stats/generator-monitor.js'
import { startServer } from './helpers/servers.js'
import type { RequestRecord } from '../src/results/request-record.js'

const PAUSE_MS = 300

/** Answers in 2 ms, except that everything waits while the target is paused (from 400 ms after the first request, for 300 ms). */
async function pausingServer() {
  let first = 0
  return startServer({
    delayMs: () => {
      const now = performance.now()
      if (first === 0) first = now
      const pauseStart = first + 400
      const pauseEnd = pauseStart + PAUSE_MS
      return now >= pauseStart && now < pauseEnd ? pauseEnd - now : 2
    },
  })
}

test('open loop (-q): a stall shows in the corrected latency, sends that fell behind are counted, the service time hides it', async (t) => {
  const server = await pausingServer()
  t.after(() => server.close())
  // 200 requests/s for 1.5 s, at most 5 outstanding: during the 300 ms pause
  // 5 requests are stuck and ~55 more are due, so they are sent late.
  const result = await run({ urls: [server.url], rate: 200, concurrency: 5, requests: 300, warmup: 0, mode: 'plain', seed: 1 })
  const plain = result.phases.plain!
  assert.equal(plain.requests, 300)
  assert.ok(plain.serviceTime, 'open-loop phases report the uncorrected service time')
  // Requests due during the pause (about 60 of 300 = 20 %) waited for it: the
  // corrected p90 must carry a large part of the 300 ms.
  assert.ok(plain.latencyMs.p90 > 100, `corrected p90 ${plain.latencyMs.p90} ms`)
  // Only the ~5 requests in flight when it began saw the pause in their own service time (< 5 %).
  assert.ok(plain.serviceTime.latencyMs.p90 < 50, `service-time p90 ${plain.serviceTime.latencyMs.p90} ms`)
  assert.ok(plain.serviceTime.lateSends >= 20, `late sends ${plain.serviceTime.lateSends}`)
  assert.ok(plain.latencyMs.max >= PAUSE_MS * 0.8, `max ${plain.latencyMs.max} ms`)
  // The schedule held the rate: 300 requests at 200/s take 1.5 s, plus the tail of the last one.
  assert.ok(plain.durationMs >= 1400 && plain.durationMs < 2500, `duration ${plain.durationMs} ms`)
})

test('open loop: no send leaves before its intended start, though a Node timer can fire up to a millisecond early', async (t) => {
  const server = await startServer({ delayMs: 1 })
  t.after(() => server.close())
  const rows: RequestRecord[] = []
  const requestSink = { write: (r: RequestRecord) => (rows.push(r), true), waitForDrain: async () => {} }
  // 400/s for 1 s: every send but the first waits on the schedule's timer. Without the wait for
  // the rest, some fired early and moved their start: 23 of 1000 at 200/s in a trial, dozens of
  // these 400 (a 2.5 ms interval's fraction of a millisecond makes early firings likelier).
  await run({ urls: [server.url], rate: 400, concurrency: 8, requests: 400, warmup: 0, mode: 'plain', seed: 2, requestSink })
  assert.equal(rows.length, 400)
  const first = rows.find((r) => r.seq === 0)!.startMs
  const moved = rows.filter((r) => Math.abs(r.startMs - (first + r.seq * 2.5)) > 0.002)
  assert.deepEqual(
    moved.map((r) => [r.seq, r.startMs]),
    [],
    'sends whose start moved off the schedule',
  )
})

test('closed loop against the same stall: only the requests in flight see it (the tail is understated), and the report says so', async (t) => {
  const server = await pausingServer()
  t.after(() => server.close())
  // Timed (-z), so the phase surely spans the pause (400-700 ms after the first request).
  const result = await run({ urls: [server.url], concurrency: 5, durationMs: 1200, warmup: 0, mode: 'plain', seed: 1 })
  const plain = result.phases.plain!
  assert.equal(plain.serviceTime, undefined)
  assert.ok(plain.latencyMs.max >= PAUSE_MS * 0.8, `max ${plain.latencyMs.max} ms`)
  // 5 requests stalled among the hundreds answered in 2 ms around them
  // (at most 5 per 2 ms outside the pause: ~450 in 900 ms even at a quarter
  // of that pace), so the p90 stays near the 2 ms answers.
  assert.ok(plain.latencyMs.p90 < 50, `closed-loop p90 ${plain.latencyMs.p90} ms`)
  assert.ok(
    result.warnings.some((w) => w.includes('closed loop') && w.includes('-q')),
    result.warnings.join('\n'),
  )
})

test('the generator notices when its own event loop is blocked and says the results are bounded by it', async () => {
  const monitor = new GeneratorMonitor(1)
  // Block the event loop three times for 60 ms: a generator busy with its own work.
  for (let i = 0; i < 3; i++) {
    const until = performance.now() + 60
    while (performance.now() < until);
    await new Promise((r) => setTimeout(r, 15))
  }
  const health = monitor.finish(10)
  assert.ok(health.eventLoopDelayMs.max >= 40, `loop delay max ${health.eventLoopDelayMs.max} ms`)
  assert.equal(health.saturated, true)
  assert.ok(
    health.warnings.some((w) => w.includes('hedge delay')),
    health.warnings.join('\n'),
  )
})

test('an idle generator is not flagged', async () => {
  const monitor = new GeneratorMonitor(1)
  await new Promise((r) => setTimeout(r, 100))
  const health = monitor.finish(1000)
  assert.equal(health.saturated, false, health.warnings.join('\n'))
})
