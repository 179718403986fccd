/**
 * The result algebra's rules one field at a time, on hand-made parts whose
 * merged values are worked out here: the fields real runs rarely fill
 * (interrupted requests, error messages, server utilisation, per-attempt
 * latencies, a generator's ports and cores) as well as the common ones, and
 * what each rule does when a part lacks the field (a result saved before it
 * was measured). result-algebra.test.ts checks the rules' kinds on real runs.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  MERGE_KINDS,
  MERGE_TABLES,
  histogramSummary,
  mergeCounts,
  mergeEncoded,
  mergePhaseParts,
  mergePoints,
  phaseRate,
  type PhaseMergeContext,
} from '../src/stats/phase-algebra.js'
import { createHistogram, encodeHistogram, recordMs } from '../src/stats/histogram.js'
import { MAX_POINTS } from '../src/stats/timeline.js'
import type { PhaseResult, ServerCrossCheck, TimelinePoint } from '../src/results/run-result.js'
import { FIXTURE_URLS, makeGenerator, makeHedgingStats, makePhase, makeReplica } from './helpers/result-fixture.js'

const [U1, U2, U3] = FIXTURE_URLS as [string, string, string]
const threads: PhaseMergeContext = { of: 'threads', spans: [{ startMs: 1000, endMs: 3000 }] }
const merge = (parts: PhaseResult[], ctx: PhaseMergeContext = threads): PhaseResult => mergePhaseParts(parts, ctx)
/** Latencies under 2.048 ms are kept exactly by the histograms. */
const phase = (latencies: number[], overrides: Partial<PhaseResult> = {}): PhaseResult => makePhase('hedged', latencies, overrides)

/** An encoded histogram of these latencies (ms). */
function encoded(...ms: number[]): string {
  const h = createHistogram()
  for (const x of ms) recordMs(h, x)
  return encodeHistogram(h)
}

test('a phase of no parts is an error, not an empty phase', () => {
  assert.throws(() => mergePhaseParts([], threads), /nothing to merge/)
})

test("counts are summed and their keys sorted; a part's missing error messages or generator failures count as none", () => {
  const a = phase([0.5, 0.6], { statusCodes: { '500': 1, '200': 5 }, errorMessages: { 'connect ECONNREFUSED': 2 }, generatorFailures: undefined })
  const b = phase([0.7], { statusCodes: { '404': 1, '200': 3 }, errorMessages: undefined, generatorFailures: { EMFILE: 4 } })
  const m = merge([a, b])
  assert.deepEqual(Object.entries(m.statusCodes), [
    ['200', 8],
    ['404', 1],
    ['500', 1],
  ])
  assert.deepEqual(m.errorMessages, { 'connect ECONNREFUSED': 2 })
  assert.deepEqual(m.generatorFailures, { EMFILE: 4 })
  assert.equal(m.requests, 3)
  assert.equal(m.attempts, a.attempts + b.attempts)
  assert.equal(m.bytes, a.bytes + b.bytes)
  const none = merge([phase([0.5]), phase([0.6])])
  assert.ok(!('errorMessages' in none) && !('generatorFailures' in none) && !('interrupted' in none), Object.keys(none).join())
  assert.deepEqual(mergeCounts([{ b: 1 }, { a: 2, b: 3 }, {}]), { a: 2, b: 4 })
  assert.deepEqual(Object.keys(mergeCounts([{ b: 1, c: 1 }, { a: 2 }])), ['a', 'b', 'c'])
})

test('interrupted requests: their slow count and longest time only when every part that had some counted them', () => {
  const a = phase([0.5], { interrupted: 2, interruptedSlow: 1, interruptedMaxMs: 900 })
  const b = phase([0.6], { interrupted: 3, interruptedSlow: 2, interruptedMaxMs: 1200 })
  const quiet = phase([0.7], { interrupted: 0 })
  const m = merge([a, b, quiet])
  assert.equal(m.interrupted, 5)
  assert.equal(m.interruptedSlow, 3)
  assert.equal(m.interruptedMaxMs, 1200)
  const onlyA = merge([a, quiet])
  assert.deepEqual([onlyA.interrupted, onlyA.interruptedSlow, onlyA.interruptedMaxMs], [2, 1, 900])
  // b saved before the slow ones among them were counted: no claim about them.
  const old = merge([a, phase([0.6], { interrupted: 3 })])
  assert.equal(old.interrupted, 5)
  assert.ok(!('interruptedSlow' in old) && !('interruptedMaxMs' in old))
})

test('latency: the figures of the added histograms, with the exact min and max of the parts that measured any', () => {
  const a = phase([0.25, 0.5, 1.5])
  const b = phase([0.75, 1.875])
  const empty = phase([], { requests: 0 })
  const m = merge([a, empty, b])
  assert.equal(m.latencyMs.min, 0.25, "the empty part's min of 0 is not the min")
  assert.equal(m.latencyMs.max, 1.875)
  assert.equal(m.latencyMs.p50, 0.75)
  assert.equal(m.histogram, encodeHistogram(mergeEncoded([a.histogram, b.histogram])))
  assert.deepEqual(m.slow, { thresholdMs: a.slow.thresholdMs, count: a.slow.count + b.slow.count })
})

test('replicas merged by URL in the order they first appear; ejections counted only when every part counted them', () => {
  const a = phase([0.5], { replicas: [makeReplica(U2, [0.5], { wins: 1, ejections: 1 }), makeReplica(U1, [0.4], { wins: 2, ejections: 0 })] })
  const b = phase([0.6], { replicas: [makeReplica(U3, [0.6], { wins: 4 }), makeReplica(U2, [0.7], { wins: 8, ejections: 2 })] })
  const m = merge([a, b])
  assert.deepEqual(
    m.replicas.map((r) => [r.url, r.requests, r.wins]),
    [
      [U2, 2, 9],
      [U1, 1, 2],
      [U3, 1, 4],
    ],
  )
  assert.deepEqual(
    m.replicas.map((r) => r.ejections),
    [3, 0, undefined],
    'U3 only in b, saved before ejections were counted',
  )
  const old = phase([0.6], { replicas: [makeReplica(U2, [0.7], { ejections: undefined })] })
  assert.equal(merge([a, old]).replicas[0]!.ejections, undefined, 'no count claimed where a part had none')
})

test('the phase window: the earliest start offset, the union of the spans, its rate; wall and window only across generators', () => {
  const spans = [
    { startMs: 10_000, endMs: 12_000 },
    { startMs: 10_500, endMs: 13_500.5 },
  ]
  const a = phase([0.5, 0.6], { startOffsetMs: 20.0004, connectionsOpened: 3 })
  const b = phase([0.7], { startOffsetMs: 15.5, connectionsOpened: 4 })
  const g = merge([a, b], { of: 'generators', spans })
  assert.equal(g.startOffsetMs, 15.5)
  assert.equal(g.durationMs, 3500.5)
  assert.equal(g.rps, 0.857, '3 requests in 3.5005 s')
  assert.equal(g.connectionsOpened, 7)
  assert.deepEqual(g.wall, { startMs: 10_000, endMs: 13_500.5 })
  assert.deepEqual(g.window, { overlapMs: 1500, unionMs: 3500.5 })
  const apart = merge([a, b], { of: 'generators', spans: [spans[0]!, { startMs: 20_000, endMs: 21_000 }] })
  assert.deepEqual(apart.window, { overlapMs: 0, unionMs: 11_000 })
  const t = merge([a, b], { of: 'threads', spans })
  assert.ok(!('wall' in t) && !('window' in t))
  assert.equal(merge([phase([0.5], { startOffsetMs: -2 })]).startOffsetMs, 0, 'never before the run started')
  assert.equal(phaseRate(10, 0), 0)
  assert.equal(phaseRate(1, 3), 333.333)
})

test('cancel costs and resends are summed when every part counted them; ejections in time order', () => {
  const a = phase([0.5], {
    connectionsClosedByCancel: 2,
    streamsResetByCancel: 5,
    streamsResentAfterGoaway: 1,
    ejections: [{ url: U1, atMs: 700, forMs: 100, readmittedAtMs: 800, cause: 'x' }],
  })
  const b = phase([0.5], {
    connectionsClosedByCancel: 3,
    streamsResetByCancel: 7,
    streamsResentAfterGoaway: 0,
    ejections: [{ url: U2, atMs: 300, forMs: 100, readmittedAtMs: null, cause: 'y' }],
  })
  const m = merge([a, b])
  assert.deepEqual([m.connectionsClosedByCancel, m.streamsResetByCancel, m.streamsResentAfterGoaway], [5, 12, 1])
  assert.deepEqual(
    m.ejections!.map((e) => e.atMs),
    [300, 700],
  )
  const old = merge([a, phase([0.5])])
  assert.ok(!('connectionsClosedByCancel' in old) && !('streamsResetByCancel' in old) && !('streamsResentAfterGoaway' in old))
  assert.deepEqual(
    old.ejections!.map((e) => e.atMs),
    [700],
  )
  assert.ok(!('ejections' in merge([phase([0.5]), phase([0.6])])))
})

test("the generator: the worst loop, the highest CPU share, threads added, warnings once, and the machine's own figures only when they are one machine's", () => {
  const a = phase([0.5], {
    generator: makeGenerator({
      eventLoopDelayMs: { p50: 0.1, p99: 3, max: 5 },
      cpuPct: 40,
      cores: 1,
      warnings: ['w1', 'w2'],
      saturatedBy: ['cpu'],
      machineCores: 2,
      ephemeralPorts: 28_000,
    }),
  })
  const b = phase([0.5], {
    generator: makeGenerator({
      eventLoopDelayMs: { p50: 0.3, p99: 2, max: 9 },
      cpuPct: 70,
      cores: 2,
      saturated: true,
      warnings: ['w2', 'w3'],
      saturatedBy: ['cpu', 'gc'],
      cpuJudged: false,
      machineCores: 2,
      ephemeralPorts: 28_000,
    }),
  })
  const g = merge([a, b]).generator
  assert.deepEqual(g.eventLoopDelayMs, { p50: 0.3, p99: 3, max: 9 })
  assert.equal(g.cpuPct, 70)
  assert.equal(g.cores, 3)
  assert.equal(g.saturated, true)
  assert.deepEqual(g.warnings, ['w1', 'w2', 'w3'])
  assert.deepEqual(g.saturatedBy, ['cpu', 'gc'])
  assert.equal(g.cpuJudged, false, 'judged only when every part was')
  assert.equal(g.machineCores, 2)
  assert.equal(g.ephemeralPorts, 56_000, 'two generators: their two ranges together')
  assert.equal(merge([a]).generator.ephemeralPorts, 28_000)
  const other = phase([0.5], { generator: makeGenerator({ machineCores: 8 }) })
  assert.equal(merge([a, other]).generator.machineCores, undefined, 'two machines')
  const plain = merge([phase([0.5]), phase([0.5])]).generator
  assert.ok(!('saturatedBy' in plain) && !('gc' in plain))
  assert.equal(plain.saturated, false)
  assert.equal(plain.cpuJudged, true)
  // The caller's own reading of the process wins over the parts'.
  const observed = makeGenerator({ cpuPct: 99 })
  assert.equal(merge([a, b], { ...threads, generator: observed }).generator, observed)
})

test("the server's counts: summed, matched only when every part matched, each replica's busiest share", () => {
  const server = (o: Partial<ServerCrossCheck>): ServerCrossCheck => ({
    received: 10,
    completed: 9,
    cancelled: 1,
    hedgeHeader: 2,
    clientAttempts: 10,
    match: true,
    ...o,
  })
  const a = phase([0.5], { server: server({ started: 8, tiedDropped: 1, stalled: 3, utilisation: [{ url: U1, busy: 0.5 }] }) })
  const b = phase([0.5], {
    server: server({
      received: 20,
      match: false,
      started: 19,
      tiedDropped: 0,
      stalled: 4,
      utilisation: [
        { url: U2, busy: 0.25 },
        { url: U1, busy: 0.75 },
      ],
    }),
  })
  const s = merge([a, b]).server!
  assert.deepEqual([s.received, s.completed, s.cancelled, s.hedgeHeader, s.clientAttempts], [30, 18, 2, 4, 20])
  assert.equal(s.match, false)
  assert.equal(s.started, 27)
  assert.equal(s.tiedDropped, 1)
  assert.equal(s.stalled, 7)
  assert.deepEqual(s.utilisation, [
    { url: U1, busy: 0.75 },
    { url: U2, busy: 0.25 },
  ])
  assert.equal(merge([a, a]).server!.match, true)
  const old = merge([a, phase([0.5], { server: server({}) })]).server!
  assert.ok(!('started' in old) && !('tiedDropped' in old) && !('stalled' in old) && !('utilisation' in old), Object.keys(old).join())
  assert.equal(merge([a, phase([0.5])]).server, undefined, 'one part without server counts: none claimed')
})

test("fan-out calls and the server's own service time: merged only when every part has them", () => {
  const a = phase([0.5], {
    calls: { ...phase([0.5, 0.5]), fanout: 2 },
    serviceTime: { latencyMs: phase([0.25]).latencyMs, histogram: encoded(0.25), lateSends: 1 },
  })
  const b = phase([0.5], {
    calls: { ...phase([0.75, 0.75]), fanout: 2 },
    serviceTime: { latencyMs: phase([1.25]).latencyMs, histogram: encoded(1.25), lateSends: 2 },
  })
  const m = merge([a, b])
  assert.equal(m.calls!.requests, 4)
  assert.equal(m.calls!.fanout, 2)
  assert.equal(m.serviceTime!.lateSends, 3)
  assert.equal(m.serviceTime!.latencyMs.min, 0.25)
  assert.equal(m.serviceTime!.latencyMs.max, 1.25)
  const partial = merge([a, phase([0.5])])
  assert.ok(!('calls' in partial) && !('serviceTime' in partial))
})

/** A hedged part of `requests` requests with these hedging fields. */
const hedgedPart = (requests: number, hedging: Parameters<typeof makeHedgingStats>[0]): PhaseResult =>
  phase(
    Array.from({ length: requests }, () => 0.5),
    { hedging: makeHedgingStats(hedging) },
  )

test('hedging: one delay as it is; several stated as a range and never averaged; the trigger rate and extra load from the merged counts', () => {
  const a = hedgedPart(100, {
    delayMs: 12,
    warmupBasis: { requests: 100, p95Ms: 12 } as never,
    delayUsedMs: { min: 10, p50: 12, max: 15 },
    timerLatenessMs: { p50: 0.1, p99: 1, max: 3 },
    hedgesSent: 5,
    triggerRate: 6,
    slowBudgetDenied: 2,
    suppressed: { overload: 1, errorRate: 2, targetBusy: 3, pushback: 4 },
    attemptsPerRequest: { '1': 95, '2': 5 },
  })
  const b = hedgedPart(300, {
    delayMs: 12,
    warmupBasis: { requests: 100, p95Ms: 12 } as never,
    delayUsedMs: { min: 11, p50: 13, max: 14 },
    timerLatenessMs: { p50: 0.2, p99: 0.5, max: 4 },
    hedgesSent: 9,
    triggerRate: 4,
    slowBudgetDenied: undefined,
    suppressed: { overload: 10, errorRate: 20, targetBusy: 30, pushback: 40 },
    attemptsPerRequest: undefined,
  })
  const one = merge([a, b]).hedging!
  assert.equal(one.delayMs, 12)
  assert.equal(one.delaySource, a.hedging!.delaySource)
  assert.deepEqual(one.warmupBasis, { requests: 100, p95Ms: 12 })
  assert.deepEqual(one.delayUsedMs, { min: 10, p50: 13, max: 15 })
  assert.deepEqual(one.timerLatenessMs, { p50: 0.2, p99: 1, max: 4 })
  assert.equal(one.hedgesSent, 14)
  assert.equal(one.extraLoadPct, 3.5, '14 hedges over 400 requests')
  assert.equal(one.triggerRate, 4.5, '6 of 100 and 12 of 300: 18 of 400')
  assert.equal(one.slowBudgetDenied, 2)
  assert.deepEqual(one.suppressed, { overload: 11, errorRate: 22, targetBusy: 33, pushback: 44 })
  assert.deepEqual(one.attemptsPerRequest, { '1': 95, '2': 5 })

  const c = hedgedPart(100, { delayMs: 20, delaySource: 'own' })
  const ranged = merge([a, c]).hedging!
  assert.equal(ranged.delayMs, 12, 'the range starts at the lowest')
  assert.equal(ranged.delaySource, 'per shard, 12.0 ms to 20.0 ms (each generator derived its own; see Generators)')
  assert.ok(!('warmupBasis' in ranged), 'no warm-up basis when a part measured its delay elsewhere')
  // Generators that measured on different warm-ups: their bases together (issue 44: merge kept none).
  const d = hedgedPart(100, { delayMs: 20, warmupBasis: { requests: 30, of: 60 } })
  const e = hedgedPart(100, { delayMs: 14, warmupBasis: { requests: 31, of: 62 } })
  assert.deepEqual(merge([d, e]).hedging!.warmupBasis, { requests: 61, of: 122 })
  // A merged input's rows name the delays: they decide, not the parts' own.
  const fromRows = merge([a, b], { ...threads, hedgeDelays: [12, 30] }).hedging!
  assert.equal(fromRows.delaySource, 'per shard, 12.0 ms to 30.0 ms (each generator derived its own; see Generators)')
  assert.equal(merge([a, b], { ...threads, hedgeDelays: [] }).hedging!.delaySource, a.hedging!.delaySource)
})

test('hedging from worker threads: the delay used, timer lateness and triggered requests from their exact histograms and counts', () => {
  const a = hedgedPart(100, { delayUsedMs: { min: 10.25, p50: 0, max: 0 }, triggerRate: 99 })
  const b = hedgedPart(100, { delayUsedMs: { min: 0, p50: 0, max: 0 }, triggerRate: 99 })
  const c = hedgedPart(200, { delayUsedMs: { min: 11.5, p50: 0, max: 0 }, triggerRate: 99 })
  const exact = [
    { triggered: 3, delayUsed: encoded(1.25, 1.5), timerLateness: encoded(0.25) },
    { triggered: 0, delayUsed: encoded(), timerLateness: encoded() },
    { triggered: 5, delayUsed: encoded(1.75), timerLateness: encoded(0.5, 2) },
  ]
  const h = merge([a, b, c], { ...threads, exact }).hedging!
  assert.deepEqual(h.delayUsedMs, { min: 10.25, p50: 1.5, max: 1.75 }, "the min of the parts that used a delay: b's 0 is none")
  assert.deepEqual(h.timerLatenessMs, { p50: 0.5, p99: 2, max: 2 })
  assert.equal(h.triggerRate, 2, '8 of 400, counted, not from the rounded rates')
  const none = merge([b, b], { ...threads, exact: [exact[1]!, exact[1]!] }).hedging!
  assert.equal(none.delayUsedMs.min, 0)
  assert.equal(merge([hedgedPart(0, { triggerRate: 0 })]).hedging!.triggerRate, 0, 'no calls: no rate')
})

test("hedging's per-attempt latencies by attempt number, and the losers' run time from their added histograms", () => {
  const attempt = (n: number, ms: number[]) => ({ attempt: n, count: ms.length, latencyMs: phase(ms).latencyMs, histogram: encoded(...ms) })
  const a = hedgedPart(10, { perAttempt: [attempt(1, [1.5]), attempt(0, [0.5, 0.25])], loserRuntimeMs: { ...histogramSummary(mergeEncoded([encoded(0.5)])) } })
  const b = hedgedPart(10, { perAttempt: [attempt(0, [0.75]), attempt(2, [])], loserRuntimeMs: undefined })
  const c = hedgedPart(10, { perAttempt: [], loserRuntimeMs: { ...histogramSummary(mergeEncoded([encoded(1.5, 2)])) } })
  const h = merge([a, b, c]).hedging!
  assert.deepEqual(
    h.perAttempt.map((x) => [x.attempt, x.count, x.latencyMs.min, x.latencyMs.max]),
    [
      [0, 3, 0.25, 0.75],
      [1, 1, 1.5, 1.5],
      [2, 0, 0, 0],
    ],
  )
  assert.deepEqual([h.loserRuntimeMs!.count, h.loserRuntimeMs!.p50, h.loserRuntimeMs!.max], [3, 1.5, 2])
  assert.equal(merge([phase([0.5]), a]).hedging, undefined, 'a part without hedging: none claimed')
})

const point = (t: number, o: Partial<TimelinePoint> = {}): TimelinePoint => ({ t, requests: 1, errors: 0, p50Ms: 1, p99Ms: 2, hedges: 0, delayMs: null, ...o })

test('timeline points merged by time: counts summed, the higher p50 and p99 and delay of saved points, in time order, at most an hour', () => {
  const merged = mergePoints([
    [point(1, { requests: 2, errors: 1, p50Ms: 3, p99Ms: 9, hedges: 1, delayMs: 12 }), point(0)],
    [point(1, { requests: 5, p50Ms: 4, p99Ms: 7, hedges: 2, delayMs: null }), point(2, { delayMs: 11 })],
  ])
  assert.deepEqual(merged, [point(0), point(1, { requests: 7, errors: 1, p50Ms: 4, p99Ms: 9, hedges: 3, delayMs: 12 }), point(2, { delayMs: 11 })])
  const long = Array.from({ length: MAX_POINTS + 3 }, (_, t) => point(t))
  const capped = mergePoints([long.slice().reverse()])
  assert.equal(capped.length, MAX_POINTS)
  assert.equal(capped.at(-1)!.t, MAX_POINTS - 1, 'the first hour kept')
  const fineA = phase([0.5], { timelineFine: [point(0.1)] })
  assert.deepEqual(merge([fineA, fineA]).timelineFine, [point(0.1, { requests: 2 })])
  assert.ok(!('timelineFine' in merge([fineA, phase([0.5])])))
})

test('every rule of every table, nested ones too, names one of the kinds a reader checks it by', () => {
  const kinds = new Set<string>(MERGE_KINDS)
  for (const [table, rules] of Object.entries(MERGE_TABLES))
    for (const [field, rule] of Object.entries(rules as Record<string, { kind: string }>))
      assert.ok(kinds.has(rule.kind), `${table}.${field}: kind ${JSON.stringify(rule.kind)}`)
})

test('what a part that measured nothing adds: no min of 0 to the service time or to an attempt, no exact min or max to an empty histogram', () => {
  const zero = { latencyMs: phase([], { requests: 0 }).latencyMs, histogram: encoded(), lateSends: 0 }
  const a = phase([0.5], { serviceTime: { latencyMs: phase([0.75]).latencyMs, histogram: encoded(0.75), lateSends: 0 } })
  const s = merge([a, phase([0.5], { serviceTime: zero })]).serviceTime!
  assert.deepEqual([s.latencyMs.min, s.latencyMs.max], [0.75, 0.75])
  const attempt = (ms: number[]) => ({ attempt: 1, count: ms.length, latencyMs: phase(ms, { requests: ms.length }).latencyMs, histogram: encoded(...ms) })
  const h = merge([hedgedPart(10, { perAttempt: [attempt([1.5])] }), hedgedPart(10, { perAttempt: [attempt([])] })]).hedging!
  assert.deepEqual([h.perAttempt[0]!.count, h.perAttempt[0]!.latencyMs.min], [1, 1.5])
  // Nothing measured anywhere: the empty histogram's own figures, not the parts' zeros stamped on it.
  const none = merge([phase([0.5], { serviceTime: zero }), phase([0.5], { serviceTime: zero })]).serviceTime!
  assert.deepEqual(none.latencyMs, zero.latencyMs)
})

test("a generator's saturation causes and GC pauses are kept when only some parts measured them", () => {
  const a = phase([0.5], { generator: makeGenerator({ saturatedBy: ['event-loop'], gc: { count: 2, young: 2, totalMs: 3, maxMs: 2 } }) })
  const g = merge([a, phase([0.5])]).generator
  assert.deepEqual(g.saturatedBy, ['event-loop'])
  assert.deepEqual(g.gc, { count: 2, young: 2, totalMs: 3, maxMs: 2 })
})

test('timeline points with the histograms behind them are merged exactly only when every part has them; the highest delay of the rest', () => {
  const h = encoded(0.25, 1.5)
  const exact = (t: number, requests: number): TimelinePoint =>
    ({ ...point(t, { requests }), histogram: h, delaySum: 24, delayCount: 2 }) as unknown as TimelinePoint
  const both = mergePoints([[exact(0, 2)], [exact(0, 2)]])
  assert.deepEqual(both, [{ t: 0, requests: 4, errors: 0, p50Ms: 0.25, p99Ms: 1.5, hedges: 0, delayMs: 12 }])
  const mixed = mergePoints([[exact(0, 2)], [point(0, { p50Ms: 7, p99Ms: 8 })]])
  assert.deepEqual(mixed, [{ t: 0, requests: 3, errors: 0, p50Ms: 7, p99Ms: 8, hedges: 0, delayMs: null }])
  const delays = mergePoints([[point(0, { delayMs: 12 })], [point(0, { delayMs: 15 })], [point(0, { delayMs: null })]])
  assert.equal(delays[0]!.delayMs, 15)
})
