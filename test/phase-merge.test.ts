/**
 * --workers N merges each worker's phase into one PhaseResult: merging two
 * snapshots must give exactly what one PhaseStats recording everything gives
 * (counters, histograms, summaries, hedging stats, per replica, per attempt,
 * service time, the timeline, the delay basis).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { HedgeObserver, HedgeOutcome } from '../src/hedging/observer.js'
import { PhaseStats, type HedgingSetup } from '../src/stats/phase-stats.js'
import { exactBuckets, mergePhases, SnapshotPhaseStats } from '../src/stats/phase-snapshot.js'
import { mergePoints } from '../src/stats/phase-algebra.js'
import { encodeHistogram, percentileMs } from '../src/stats/histogram.js'
import { seededRandom } from '../src/core/random.js'
import { TimelineRecorder } from '../src/stats/timeline.js'
import type { GeneratorHealth, PhaseResult } from '../src/results/run-result.js'

const A = 'http://127.0.0.1:1'
const B = 'http://127.0.0.1:2'
const health: GeneratorHealth = { eventLoopDelayMs: { p50: 0, p99: 0, max: 0 }, cpuPct: 1, cores: 1, saturated: false, warnings: [], cpuJudged: true }
const setup: HedgingSetup = {
  delayMs: 12,
  delaySource: 'fixed 12 ms',
  adaptive: false,
  maxAttempts: 3,
  budgetPct: 10,
  parallel: false,
  tied: false,
  cancelMode: 'abort',
}

/** Every observer event and request sample of request `i`, deterministic from a seeded stream. */
function feed(stats: PhaseStats, i: number, random: () => number, fanout: number): void {
  const obs: HedgeObserver = stats
  const calls = fanout
  for (let c = 0; c < calls; c++) {
    const origin = (i + c) % 2 === 0 ? A : B
    const other = origin === A ? B : A
    obs.attemptLaunched(0, origin)
    if (i % 17 === 0) obs.attemptUnsent(0, origin)
    else obs.attemptSent(0, origin)
    const hedge = i % 3 === 0
    if (hedge) {
      stats.timerLateness(random() * 2)
      obs.attemptLaunched(1, other)
      // A few hedges are stopped before the wire (the original won first).
      if (i % 7 === 0) obs.attemptUnsent(1, other)
      else obs.attemptSent(1, other)
      if (i % 9 === 0) obs.attemptCancelled(1, other)
    }
    if (i % 11 === 0) stats.budgetDenied()
    if (i % 13 === 0) obs.lateDiscarded(1, other)
    if (i % 19 === 0) stats.deadlineSuppressed()
    if (i % 23 === 0) stats.nonFatalTriggered()
    const latency = 0.2 + random() * (i % 50 === 0 ? 4000 : 40)
    const status = i % 29 === 0 ? 503 : 200
    const error = i % 31 === 0 ? Object.assign(new Error('reset'), { code: 'ECONNRESET' }) : null
    stats.attemptDone({ index: 0, origin, latencyMs: latency, status: error ? null : status, error, bytes: 3, won: !hedge || i % 2 === 0, sent: true })
    if (hedge) stats.attemptDone({ index: 1, origin: other, latencyMs: latency * 0.7, status: 200, error: null, bytes: 3, won: i % 2 !== 0, sent: true })
    obs.attemptSettled(0, origin)
    if (hedge) obs.attemptSettled(1, other)
    const outcome = {
      launched: hedge ? 2 : 1,
      winner: hedge && i % 2 !== 0 ? 1 : 0,
      origin,
      hedgeFiredMs: hedge ? 12 : null,
      delayMs: 12 + (i % 4),
    } as HedgeOutcome
    if (fanout > 1) stats.recordCall(latency, error ? null : status, error, 3, outcome)
    if (c === calls - 1) {
      stats.recordRequest({
        latencyMs: latency + 1,
        serviceMs: stats.opts.openLoop ? latency : null,
        status: error ? null : status,
        error,
        bytes: 3 * calls,
        outcome: fanout > 1 ? null : outcome,
        endAt: performance.now(),
      })
    }
  }
  stats.lateSends += i % 37 === 0 ? 1 : 0
  stats.connectionsOpened += i % 41 === 0 ? 1 : 0
}

/** Without what depends on when it ran (the 100 ms points of `timelineFine` are checked by their sums). */
function withoutTiming(r: PhaseResult): Omit<PhaseResult, 'durationMs' | 'rps' | 'startOffsetMs' | 'generator' | 'timeline' | 'timelineFine'> {
  const { durationMs: _d, rps: _r, startOffsetMs: _s, generator: _g, timeline: _t, timelineFine: _f, ...rest } = r
  return rest
}

for (const { openLoop, fanout, steadyAfter } of [
  { openLoop: true, fanout: 1, steadyAfter: undefined },
  { openLoop: false, fanout: 2, steadyAfter: undefined },
  { openLoop: false, fanout: 1, steadyAfter: 300 },
]) {
  test(`merging two worker snapshots equals one PhaseStats recording everything (openLoop ${openLoop}, fanout ${fanout}, steadyAfter ${steadyAfter})`, () => {
    const opts = { name: 'hedged' as const, slowMs: 30, replicas: [A, B], fanout, openLoop, runStartedAt: performance.now() }
    const one = new PhaseStats(steadyAfter === undefined ? opts : { ...opts, steadyAfter })
    const origin = one.startedAt
    const parts = [0, 1].map(
      () => new SnapshotPhaseStats(steadyAfter === undefined ? opts : { ...opts, steadyAfter: steadyAfter / 2 }, { secondsOrigin: origin }),
    )
    one.hedging = setup
    for (const p of parts) p.hedging = setup
    const r1 = seededRandom(7)
    const r2 = seededRandom(7)
    // Worker 0 gets even requests, worker 1 odd ones; the single PhaseStats gets them all.
    for (let i = 0; i < 1200; i++) {
      feed(one, i, r1, fanout)
      feed(parts[i % 2]!, i, r2, fanout)
    }
    const expected = one.finish(100, health)
    const now = performance.timeOrigin + performance.now()
    const merged = mergePhases(
      parts.map((p) => p.snapshot(100, health, now - 100, now)),
      { runStartedAtEpoch: now - 200, generator: health },
    )
    assert.deepEqual(withoutTiming(merged.result), withoutTiming(expected))
    // Over time: every request and hedge in one point, per second and per 100 ms (the 100 ms points of a short
    // phase too: a merge that left them out drew 4-5 points). Totals only: the single PhaseStats and the parts
    // read the clock apart, so on a loaded machine one request can fall either side of a bucket's edge; the exact
    // merge of a bucket is checked with explicit times below.
    const total = (points: PhaseResult['timeline'] | undefined, key: 'requests' | 'hedges' | 'errors'): number | undefined =>
      points?.reduce((n, p) => n + p[key], 0)
    for (const key of ['requests', 'hedges', 'errors'] as const) {
      assert.equal(total(merged.result.timeline, key), total(expected.timeline, key), `timeline ${key}`)
      assert.equal(total(merged.result.timelineFine, key), total(expected.timelineFine, key), `timelineFine ${key}`)
    }
    assert.equal(total(merged.result.timelineFine, 'requests'), 1200)
    // Every hedging field, in the order one PhaseStats reports them (the JSON output's order).
    assert.deepEqual(Object.keys(merged.result.hedging!), Object.keys(expected.hedging!))
    assert.equal(merged.result.requests, 1200)
    // Stopped before the wire: originals (every 17th request, once per call) and hedges (every 21st) counted apart.
    const originals = Math.ceil(1200 / 17) * fanout
    assert.equal(expected.hedging!.unsentOriginals, originals)
    assert.equal(expected.hedging!.unsent, originals + Math.ceil(1200 / 21) * fanout)
    assert.equal(merged.result.durationMs, 100)
    assert.equal(merged.result.rps, 12_000)
    // The hedge delay is derived from the merged basis exactly as from one phase's.
    const basis = merged.delayBasis()
    assert.equal(basis.totalCount, one.delayBasis().totalCount)
    assert.equal(encodeHistogram(basis), encodeHistogram(one.delayBasis()))
    for (const p of [50, 90, 95, 99]) assert.equal(percentileMs(basis, p), percentileMs(one.delayBasis(), p))
    assert.equal(merged.figures.requests, one.figures.requests)
  })
}

test('per-second timeline: seconds merged by t equal one recorder fed everything', () => {
  const one = new TimelineRecorder(0)
  const parts = [exactBuckets(0), exactBuckets(0)]
  const random = seededRandom(3)
  for (let i = 0; i < 4000; i++) {
    const now = i * 1.3 // ~5.2 s
    const latency = random() * 30
    const failed = i % 10 === 0
    const delay = i % 3 === 0 ? 10 + (i % 5) : null
    one.request(now, latency, failed, delay)
    parts[i % 2]!.request(now, latency, failed, delay)
    if (i % 7 === 0) {
      one.hedge(now)
      parts[(i >> 1) % 2]!.hedge(now)
    }
  }
  const expected = one.finish(4000 * 1.3)
  const merged = mergePoints(parts.map((p) => p.finish(4000 * 1.3)))
  assert.equal(expected.length, 6)
  assert.deepEqual(merged, expected)
})

test('PhaseStats buckets its seconds into the recorder it is given; a worker snapshot carries them with their histograms', () => {
  const opts = { name: 'hedged' as const, slowMs: 30, replicas: [A, B], fanout: 1, openLoop: false, runStartedAt: performance.now() }
  const given = new TimelineRecorder(performance.now())
  const plain = new PhaseStats({ ...opts, timelines: { seconds: given, fine: new TimelineRecorder(performance.now(), 100) } })
  assert.equal(plain.timeline, given)
  const counters = new Int32Array(2)
  const worker = new SnapshotPhaseStats(opts, { counters, secondsOrigin: performance.now() })
  for (const s of [plain, worker]) s.hedging = setup
  const r1 = seededRandom(5)
  const r2 = seededRandom(5)
  for (let i = 0; i < 300; i++) {
    feed(plain, i, r1, 1)
    feed(worker, i, r2, 1)
  }
  const result = plain.finish(100, health)
  assert.equal(result.timeline, given.points)
  assert.equal(
    result.timeline.reduce((n, p) => n + p.requests, 0),
    300,
  )
  const snap = worker.snapshot(100, health, 0, 100)
  const seconds = snap.result.timeline
  assert.ok(
    seconds.every((p) => 'histogram' in p),
    'each second travels with its histogram',
  )
  assert.equal(
    seconds.reduce((n, p) => n + p.requests, 0),
    300,
  )
  assert.equal(
    seconds.reduce((n, p) => n + p.hedges, 0),
    snap.result.hedging!.hedgesSent,
  )
  assert.deepEqual(mergePoints([seconds]), result.timeline)
  assert.deepEqual([...counters], [snap.result.attempts, 300], 'live counters: attempts on the wire, requests done')
})
