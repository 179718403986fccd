/**
 * The merge of whole results, on fixtures built from real HDR histograms:
 * what is per generator stays per generator (an adaptive hedge delay is
 * shown per shard, never averaged into an invented global one), counters
 * add up, and shards that never ran at the same time are flagged.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import * as hdr from 'hdr-histogram-js'
import { UsageError } from '../src/core/errors.js'
import { mergeResults } from '../src/stats/result-merge.js'
import { renderText } from '../src/report/text.js'
import type { RunResult, TimelinePoint } from '../src/results/run-result.js'
import { latencyOf, makeHedgedRun, makeHedgingStats, stallingLatencies } from './helpers/result-fixture.js'

/** Shard `index` of a two-shard run: its own latencies (seeded by its index), hedge delay and start. */
function shard(index: number, delayMs: number, startMs: number): RunResult {
  const r = makeHedgedRun({ runId: 'adaptive-1', shard: { index, count: 2 }, host: `pod-${index}` }, index)
  const hedged = r.phases.hedged!
  hedged.hedging = makeHedgingStats({
    delayMs,
    adaptive: true,
    delayUsedMs: { min: delayMs - 4, p50: delayMs + 1, max: delayMs + 9 },
    delaySource: `rolling p95, starting at ${delayMs} ms`,
  })
  for (const p of Object.values(r.phases)) p.wall = { startMs: startMs + p.startOffsetMs, endMs: startMs + p.startOffsetMs + p.durationMs }
  return r
}

test('an adaptive delay is shown per shard, and the merged delay is stated as per shard, not averaged', () => {
  const a = shard(0, 12, 1_000_000)
  const b = shard(1, 20, 1_000_005)
  const merged = mergeResults([
    { result: a, source: 'a' },
    { result: b, source: 'b' },
  ])
  const h = merged.phases.hedged!.hedging!
  assert.equal(h.delaySource, 'per shard, 12.0 ms to 20.0 ms (each generator derived its own; see Generators)')
  assert.deepEqual(h.delayUsedMs, { min: 8, p50: 21, max: 29 }, 'range of both, the higher median: no mean of 13 and 21')
  assert.equal(h.hedgesSent, a.phases.hedged!.hedging!.hedgesSent * 2)
  assert.deepEqual(
    merged.generators!.map((g) => [g.shard, g.hedgeDelayMs, g.delayUsedMs?.p50]),
    [
      [0, 12, 13],
      [1, 20, 21],
    ],
  )
  const text = renderText(merged)
  assert.match(text, /\n {2}0 +pod-0 .* 13\.0 ms \(8\.00 ms-21\.0 ms\)\n/)
  assert.match(text, /\n {2}1 +pod-1 .* 21\.0 ms \(16\.0 ms-29\.0 ms\)\n/)
  assert.equal(merged.phases.plain!.requests, 8000)
  const [da, db] = [a.phases.plain!.durationMs, b.phases.plain!.durationMs]
  assert.equal(merged.phases.plain!.window!.overlapMs, Math.min(da, db + 5) - 5, 'b started 5 ms after a')
})

test('shards that never ran at the same time are flagged', () => {
  const a = shard(0, 12, 1_000_000)
  const b = shard(1, 12, 2_000_000)
  const merged = mergeResults([
    { result: a, source: 'a' },
    { result: b, source: 'b' },
  ])
  assert.equal(merged.phases.plain!.window!.overlapMs, 0)
  assert.ok(
    merged.warnings.some((w) => w.startsWith('plain: the shards did not all run at the same time') && w.endsWith('(start them with one --start-at)')),
    merged.warnings.join('\n'),
  )
  // Started together (one --start-at), then drifted: the advice is not to do what they did.
  const together = shard(1, 12, 1_000_000)
  const hedged = together.phases.hedged!
  hedged.wall = { startMs: 1_000_000 + 50_000, endMs: 1_000_000 + 50_000 + hedged.durationMs }
  const drifted = mergeResults([
    { result: shard(0, 12, 1_000_000), source: 'a' },
    { result: together, source: 'b' },
  ])
  const w = drifted.warnings.find((x) => x.startsWith('hedged: the shards did not all run at the same time'))
  assert.ok(
    w?.endsWith(
      "(the shards started together, but each phase after the first starts when that shard's previous phase ended, so they drifted apart (a -n phase ends when its requests are done))",
    ),
    drifted.warnings.join('\n'),
  )
})

test('overlapping clock-offset bounds are not a clock disagreement; the merged header names the merge and the total in flight', () => {
  // The defect's two shards on one host: midpoints 78.5 ms apart, bounds overlapping.
  const a = { ...shard(0, 12, 1_000_000), label: 'shard-0', clock: { minMs: -53, maxMs: 289, samples: 40 } }
  const b = { ...shard(1, 12, 1_000_005), label: 'shard-1', clock: { minMs: -36, maxMs: 429, samples: 40 } }
  const merged = mergeResults([
    { result: a, source: 'a' },
    { result: b, source: 'b' },
  ])
  assert.equal(merged.merge!.offsetGapMs, 0)
  const text = renderText(merged)
  assert.match(text, /clock offsets agree \(their bounds overlap\)/)
  assert.doesNotMatch(text, /clock-offset spread|clocks differ|by the target's/)
  assert.ok(!merged.warnings.some((w) => w.includes('clocks disagree')), merged.warnings.join('\n'))
  assert.equal(merged.label, 'merged 2 shards (shard-0, shard-1)')
  assert.match(text, /"merged 2 shards \(shard-0, shard-1\)"/)
  const c = a.config.concurrency
  assert.match(text, new RegExp(` · -c ${c} per shard x 2 \\(${2 * c} in flight\\) · `))

  // Bounds 100 ms apart: a provable gap, shown with the midpoints' spread.
  const far = { ...b, clock: { minMs: 389, maxMs: 700, samples: 40 } }
  const apart = mergeResults([
    { result: a, source: 'a' },
    { result: far, source: 'b' },
  ])
  assert.equal(apart.merge!.offsetGapMs, 100)
  assert.match(renderText(apart), /clocks differ by at least 100\.0 ms \(offset midpoints spread 426\.5 ms\)/)
  assert.ok(
    apart.warnings.some((w) => w.includes('clocks disagree')),
    apart.warnings.join('\n'),
  )
})

test('a saturated shard of a -n run sent its share (its latencies carry its own queueing); of a paced or timed run it may have sent less', () => {
  const saturate = (r: RunResult): RunResult => {
    r.phases.hedged!.generator = { ...r.phases.hedged!.generator, saturated: true }
    return r
  }
  const counted = mergeResults([
    { result: saturate(shard(0, 12, 1_000_000)), source: 'a' },
    { result: shard(1, 12, 1_000_005), source: 'b' },
  ])
  assert.ok(
    counted.warnings.includes(
      'shard 0 (pod-0): the generator was saturated, so it sent its share, but its latencies include its own queueing; see its own report',
    ),
    counted.warnings.join('\n'),
  )
  const paced = [saturate(shard(0, 12, 1_000_000)), shard(1, 12, 1_000_005)]
  for (const r of paced) r.config.rate = 400
  const merged = mergeResults(paced.map((result, i) => ({ result, source: `s${i}` })))
  assert.ok(
    merged.warnings.includes('shard 0 (pod-0): the generator was saturated, so it may have sent less than its share; see its own report'),
    merged.warnings.join('\n'),
  )
})

test("the merged Generator section keeps the shards' GC pauses (added up, the longest of all) and their worst event loop", () => {
  const [a, b] = [shard(0, 12, 1_000_000), shard(1, 12, 1_000_005)]
  a.phases.hedged!.generator = {
    ...a.phases.hedged!.generator,
    eventLoopDelayMs: { p50: 0.1, p99: 0.8, max: 4, samples: 300 },
    gc: { count: 3, young: 2, totalMs: 6.5, maxMs: 4.25 },
  }
  b.phases.hedged!.generator = {
    ...b.phases.hedged!.generator,
    eventLoopDelayMs: { p50: 0.2, p99: 1.5, max: 2, samples: 200 },
    gc: { count: 1, young: 1, totalMs: 1.5, maxMs: 1.5 },
  }
  const g = mergeResults([
    { result: a, source: 'a' },
    { result: b, source: 'b' },
  ]).phases.hedged!.generator
  assert.deepEqual(g.gc, { count: 4, young: 3, totalMs: 8, maxMs: 4.25 })
  assert.deepEqual(g.eventLoopDelayMs, { p50: 0.2, p99: 1.5, max: 4, samples: 500 })
})

test("every shard's histogram is in the merge: the merged figures are those of both shards' latencies together", () => {
  const [a, b] = [shard(0, 12, 1_000_000), shard(1, 12, 1_000_005)]
  assert.notEqual(a.phases.plain!.histogram, b.phases.plain!.histogram, 'the shards measured different latencies')
  const merged = mergeResults([
    { result: a, source: 'a' },
    { result: b, source: 'b' },
  ])
  const all = latencyOf([...stallingLatencies(4000, 4), ...stallingLatencies(4000, 14)])
  assert.deepEqual(merged.phases.plain!.latencyMs, all.latencyMs)
  assert.equal(merged.phases.plain!.slow.count, a.phases.plain!.slow.count + b.phases.plain!.slow.count)
  for (const [i, r] of merged.phases.plain!.replicas.entries())
    assert.equal(r.requests, a.phases.plain!.replicas[i]!.requests + b.phases.plain!.replicas[i]!.requests)
})

test('a merge keeps what a one-process run reports: cancel costs, ejections and the 100 ms points', () => {
  const [a, b] = [shard(0, 12, 1_000_000), shard(1, 12, 1_000_005)]
  const fine = (requests: number[]): TimelinePoint[] =>
    requests.map((n, i) => ({ t: (i + 1) / 10, requests: n, errors: 0, p50Ms: 10 + i, p99Ms: 20 + i, hedges: 1, delayMs: 12 }))
  Object.assign(a.phases.hedged!, {
    connectionsClosedByCancel: 7,
    streamsResetByCancel: 0,
    ejections: [{ url: 'http://127.0.0.1:8082/users/42', atMs: 900, forMs: 1000, readmittedAtMs: 1900, cause: '5 failures' }],
    timelineFine: fine([5, 6]),
  })
  Object.assign(b.phases.hedged!, {
    connectionsClosedByCancel: 11,
    streamsResetByCancel: 2,
    ejections: [{ url: 'http://127.0.0.1:8081/users/42', atMs: 400, forMs: 1000, readmittedAtMs: null, cause: '5 failures' }],
    timelineFine: fine([3, 4, 8]),
  })
  const h = mergeResults([
    { result: a, source: 'a' },
    { result: b, source: 'b' },
  ]).phases.hedged!
  assert.equal(h.connectionsClosedByCancel, 18)
  assert.equal(h.streamsResetByCancel, 2)
  assert.deepEqual(
    h.ejections?.map((e) => e.atMs),
    [400, 900],
    "both shards' ejections, in time order",
  )
  assert.deepEqual(
    h.timelineFine?.map((p) => [p.t, p.requests, p.hedges, p.p99Ms]),
    [
      [0.1, 8, 2, 20],
      [0.2, 10, 2, 21],
      [0.3, 8, 1, 22],
    ],
  )
  // A shard saved before cancels were counted: the merge claims no total rather than a part of one.
  delete b.phases.hedged!.connectionsClosedByCancel
  assert.equal(
    mergeResults([
      { result: a, source: 'a' },
      { result: b, source: 'b' },
    ]).phases.hedged!.connectionsClosedByCancel,
    undefined,
  )
})

/** Shard `index` of `count`, each its own latencies; the same run id, configuration and precision. */
const part = (index: number, count: number, overrides: Partial<RunResult> = {}): RunResult =>
  makeHedgedRun({ runId: 'r1', shard: { index, count }, host: `pod-${index}`, ...overrides }, index)
const named = (...results: RunResult[]): Array<{ result: RunResult; source: string }> => results.map((result, i) => ({ result, source: `s${i}` }))

/** Refused with a UsageError (one line, exit 2 at the CLI) whose message is exactly `message`. */
function refuses(inputs: Array<{ result: RunResult; source: string }>, message: string, opts = {}): void {
  assert.throws(
    () => mergeResults(inputs, opts),
    (e: unknown) => e instanceof UsageError && e.message === message,
    message,
  )
}

test('what is not one run is refused in process, each with its own line naming the sources', () => {
  refuses([], "nothing to merge (give the shards' result files, or --from-logs -)")
  refuses(
    named(part(0, 2), part(1, 2, { runId: 'r2' })),
    's1 is run r2, s0 is run r1: shards of one run share a run id (one --run-id, or one --start-at and config)',
  )
  refuses(
    named(part(0, 2, { runId: undefined }), part(1, 2)),
    's1 is run r1, s0 is run (none): shards of one run share a run id (one --run-id, or one --start-at and config)',
  )
  refuses(named(part(0, 2), part(1, 3)), 's1 is a shard of 3, s0 of 2: not one run')
  const other = part(1, 2)
  other.config = { ...other.config, concurrency: other.config.concurrency + 1 }
  refuses(named(part(0, 2), other), `s0 and s1 were configured differently: concurrency (${other.config.concurrency - 1} vs ${other.config.concurrency})`)
})

test('histograms that cannot be added are refused: another precision, two in one result, one that does not decode', () => {
  const coarse = hdr.build({ numberOfSignificantValueDigits: 2, useWebAssembly: false })
  coarse.recordValue(1500)
  const coarseAll = part(1, 2)
  for (const p of Object.values(coarseAll.phases)) p.histogram = hdr.encodeIntoCompressedBase64(coarse)
  refuses(named(part(0, 2), coarseAll), 's1 has histograms of 2 significant digits, s0 of 3: refusing to add histograms of different precision')
  // The same the other way round: the first file's precision is the one named second.
  refuses(named(coarseAll, part(0, 2)), 's1 has histograms of 3 significant digits, s0 of 2: refusing to add histograms of different precision')
  const mixed = part(1, 2)
  mixed.phases.hedged!.histogram = hdr.encodeIntoCompressedBase64(coarse)
  refuses(named(part(0, 2), mixed), 's1: histograms of 3 and 2 significant digits in one result')
  const broken = part(1, 2)
  broken.phases.plain!.histogram = 'not a histogram'
  refuses(named(part(0, 2), broken), 's1: the plain histogram cannot be decoded')
})

test('a broken shard field or generator row is refused before anything is added', () => {
  const shardField = 's0: invalid "shard" (expected {index, count} with 0 <= index < count)'
  for (const shard of [
    { index: 2, count: 2 },
    { index: -1, count: 2 },
    { index: 0.5, count: 2 },
    { index: 0, count: -1 },
    { index: '0', count: 2 },
  ])
    refuses(named(part(0, 2, { shard: shard as never })), shardField)
  const merged = mergeResults(named(part(0, 2), part(1, 2)))
  refuses(named({ ...merged, merge: undefined }), 's0: invalid merged result ("generators" and "merge" go together)')
  refuses(named({ ...merged, generators: {} as never }), 's0: invalid merged result ("generators" and "merge" go together)')
  refuses(named({ ...merged, merge: { ...merged.merge!, shardCount: 1.5 } }), 's0: invalid merged result ("generators" and "merge" go together)')
  const rowBroken = (change: Record<string, unknown>): RunResult => ({
    ...merged,
    generators: [merged.generators![0]!, { ...merged.generators![1]!, ...change }],
  })
  for (const change of [{ shard: 2 }, { shard: -1 }, { phases: null }, { phases: 'x' }, { warnings: 'x' }])
    refuses(named(rowBroken(change)), 's0: invalid row in "generators"')
})

test('every shard once: one given twice is refused, missing ones are named, and --allow-partial merges the rest saying so', () => {
  refuses(named(part(0, 2), part(1, 2), part(0, 2)), 'shard 0/2 given twice (s0 and s2)')
  refuses(named(part(0, 3), part(2, 3)), 'shard 1 of 3 missing (give every shard, or --allow-partial to merge the 2 here)')
  refuses(named(part(1, 3)), 'shards 0, 2 of 3 missing (give every shard, or --allow-partial to merge the 1 here)')
  // A merged input counts as the shards it holds.
  refuses(named(mergeResults(named(part(0, 3), part(1, 3)), { allowPartial: true }), part(1, 3)), 'shard 1/3 given twice (s0 and s1)')

  const one = mergeResults(named(part(0, 3), part(2, 3)), { allowPartial: true })
  assert.deepEqual(one.merge!.missing, [1])
  assert.equal(one.warnings[0], 'partial merge: shard 1 of 3 missing; the figures cover 2 of 3 shards')
  const two = mergeResults(named(part(1, 3)), { allowPartial: true })
  assert.deepEqual(two.merge!.missing, [0, 2])
  assert.equal(two.warnings[0], 'partial merge: shards 0, 2 of 3 missing; the figures cover 1 of 3 shards')
  const whole = mergeResults(named(part(0, 2), part(1, 2)))
  assert.deepEqual(whole.merge!.missing, [])
  assert.ok(!whole.warnings.some((w) => w.startsWith('partial merge')), whole.warnings.join('\n'))
})

test('a merge does not depend on the order of its inputs, and merging in steps gives the merge of all at once', () => {
  const [a, b, c] = [part(0, 3), part(1, 3), part(2, 3)]
  for (const [i, r] of [a, b, c].entries()) {
    for (const p of Object.values(r.phases))
      p.wall = { startMs: 1_000_000 + 7 * i + p.startOffsetMs, endMs: 1_000_000 + 7 * i + p.startOffsetMs + p.durationMs }
    r.phases.hedged!.hedging = makeHedgingStats({ ...r.phases.hedged!.hedging!, delayMs: 12 + i, triggerRate: 1.5 + i })
  }
  // Shards list their replicas in their own order: the merge lists them as shard 0 does, whatever order the files come in.
  c.phases.plain!.replicas.reverse()
  const all = mergeResults(named(a, b, c))
  assert.deepEqual(
    all.phases.plain!.replicas.map((r) => r.url),
    a.phases.plain!.replicas.map((r) => r.url),
  )
  assert.deepEqual(mergeResults(named(c, a, b)), all)
  assert.deepEqual(mergeResults(named(mergeResults(named(c, a), { allowPartial: true }), b)), all)
  assert.deepEqual(mergeResults(named(a, mergeResults(named(b, c), { allowPartial: true }))), all)
  assert.equal(all.phases.hedged!.hedging!.delaySource, 'per shard, 12.0 ms to 14.0 ms (each generator derived its own; see Generators)')
  assert.deepEqual(
    all.generators!.map((g) => g.shard),
    [0, 1, 2],
  )
})

test("the merged run's own fields: its name, its time span, whether it is partial, where it stopped, its seed", () => {
  // Shard 1 started first and finished last: the merge spans from its start to its end.
  const a = part(0, 2, { startedAt: '2026-11-30T10:00:10.500Z', finishedAt: '2026-11-30T10:00:29.000Z' })
  const b = part(1, 2, { startedAt: '2026-11-30T10:00:09.000Z', finishedAt: '2026-11-30T10:00:30.000Z' })
  a.config.seed = b.config.seed = 5
  const m = mergeResults(named(b, a))
  assert.equal(m.label, 'hedged-fixture (merged, 2 shards)')
  assert.equal(m.startedAt, '2026-11-30T10:00:09.000Z')
  assert.equal(m.finishedAt, '2026-11-30T10:00:30.000Z')
  assert.equal(m.partial, false)
  assert.equal(m.stoppedIn, null)
  assert.equal(m.runId, 'r1')
  assert.equal(m.config.seed, 5, 'one seed: kept')
  assert.equal(m.schema, a.schema)

  const stopped = mergeResults(named(a, { ...b, partial: true, stoppedIn: 'hedged', label: 'other', config: { ...b.config, seed: 99 } }))
  assert.equal(stopped.partial, true)
  assert.equal(stopped.stoppedIn, 'hedged')
  assert.equal(stopped.label, 'merged 2 shards (hedged-fixture, other)')
  assert.ok(!('seed' in stopped.config), 'shards of different seeds: the merge claims none')
  assert.ok(!('runId' in mergeResults(named(part(0, 1, { runId: undefined })))), 'no run id: none invented')
})

test("a shard's own warning is shown once: as it is when every shard had it, else naming the shards that had it", () => {
  const a = part(0, 3, { warnings: ['slow DNS', 'all of them', 'slow DNS'] })
  const b = part(1, 3, { warnings: ['all of them'] })
  const c = part(2, 3, { warnings: ['all of them', 'slow DNS'] })
  const w = mergeResults(named(a, b, c)).warnings
  assert.equal(w.filter((x) => x === 'all of them').length, 1)
  assert.equal(w.filter((x) => x.endsWith('slow DNS')).length, 1)
  assert.ok(w.includes('shard 0, 2: slow DNS'), w.join('\n'))
})

test("a shard saved without its phases' wall clock, host, start record or hedging gets a generator row from what it has", () => {
  const a = part(0, 2, { host: undefined, startedAt: '2026-11-30T10:00:00.000Z' })
  const b = part(1, 2, { startedAt: '2026-11-30T10:00:00.250Z', start: { lateMs: 3.5, late: true } as never })
  delete a.phases.hedged!.hedging
  const m = mergeResults(named(a, b))
  const [ra, rb] = m.generators!
  const plain = a.phases.plain!
  const start = Date.parse(a.startedAt) + plain.startOffsetMs
  assert.deepEqual(ra!.phases.plain, {
    requests: plain.requests,
    attempts: plain.attempts,
    rps: plain.rps,
    p99Ms: plain.latencyMs.p99,
    startMs: start,
    endMs: start + plain.durationMs,
  })
  assert.deepEqual([ra!.host, ra!.lateMs, ra!.late, ra!.hedgeDelayMs, ra!.delaySource, ra!.delayUsedMs], ['unknown', 0, false, null, null, null])
  assert.deepEqual([rb!.host, rb!.lateMs, rb!.late], ['pod-1', 3.5, true])
  assert.equal(m.merge!.startSpreadMs, 250)
  assert.deepEqual(m.phases.plain!.wall, { startMs: start, endMs: Date.parse(b.startedAt) + b.phases.plain!.startOffsetMs + b.phases.plain!.durationMs })
})

test("the clocks: no spread claimed from fewer than two clocked shards; with two, the target's view of their starts", () => {
  const clock = (minMs: number, maxMs: number) => ({ minMs, maxMs, samples: 10 })
  const one = mergeResults(named(part(0, 2, { clock: clock(-5, 5) }), part(1, 2)))
  assert.deepEqual([one.merge!.offsetSpreadMs, one.merge!.targetStartSpreadMs, one.merge!.offsetGapMs], [null, null, null])
  const a = part(0, 2, { clock: clock(-5, 5), startedAt: '2026-11-30T10:00:00.000Z' })
  const b = part(1, 2, { clock: clock(200, 220), startedAt: '2026-11-30T10:00:00.040Z' })
  const two = mergeResults(named(a, b)).merge!
  // Midpoints 0 and 210; starts 40 ms apart as each generator saw them, 250 ms by the target's clock.
  assert.deepEqual([two.startSpreadMs, two.offsetSpreadMs, two.targetStartSpreadMs, two.offsetGapMs], [40, 210, 250, 195])
  assert.ok(
    mergeResults(named(a, b)).warnings.includes(
      "the generators' clocks disagree: their offsets against the target's Date headers spread over 210.0 ms (at least 195.0 ms), so their own start spread (40.0 ms) is not what the target saw (250.0 ms); sync their clocks (NTP/chrony)",
    ),
  )
})

test('shards that started 100 ms apart started together; a saturated warning only for the shard that was', () => {
  const a = part(0, 2, { startedAt: '2026-11-30T10:00:00.000Z' })
  const b = part(1, 2, { startedAt: '2026-11-30T10:00:00.100Z' })
  b.phases.hedged!.startOffsetMs += 60_000
  b.phases.hedged!.generator = { ...b.phases.hedged!.generator, saturated: true }
  const w = mergeResults(named(a, b)).warnings
  assert.ok(
    w.some((x) => x.startsWith('hedged: the shards did not all run at the same time') && x.includes('the shards started together')),
    w.join('\n'),
  )
  assert.ok(!w.some((x) => x.startsWith('plain: the shards did not')), w.join('\n'))
  assert.deepEqual(
    w.filter((x) => x.includes('the generator was saturated')).map((x) => x.slice(0, 14)),
    ['shard 1 (pod-1'],
  )
})

test('a null shard field or generator row is refused as broken, not thrown on; a second input without a run id is named so', () => {
  refuses(named(part(0, 2, { shard: null as never })), 's0: invalid "shard" (expected {index, count} with 0 <= index < count)')
  const merged = mergeResults(named(part(0, 2), part(1, 2)))
  refuses(named({ ...merged, generators: [merged.generators![0]!, null as never] }), 's0: invalid row in "generators"')
  refuses(
    named(part(0, 2), part(1, 2, { runId: undefined })),
    's1 is run (none), s0 is run r1: shards of one run share a run id (one --run-id, or one --start-at and config)',
  )
})

test('a run saved without sharding merges as the one shard of one', () => {
  const whole = makeHedgedRun({ runId: 'r1' })
  delete whole.shard
  const m = mergeResults(named(whole))
  assert.deepEqual([m.merge!.shardCount, m.generators!.map((g) => g.shard), m.merge!.missing], [1, [0], []])
  assert.equal(m.phases.hedged!.requests, whole.phases.hedged!.requests)
})

test('a saturated shard of a timed run (-z) may have sent less than its share', () => {
  const timed = [part(0, 2), part(1, 2)]
  timed[0]!.phases.hedged!.generator = { ...timed[0]!.phases.hedged!.generator, saturated: true }
  for (const r of timed) r.config = { ...r.config, requests: null, durationMs: 10_000 } as RunResult['config']
  const merged = mergeResults(named(...timed))
  assert.ok(
    merged.warnings.includes('shard 0 (pod-0): the generator was saturated, so it may have sent less than its share; see its own report'),
    merged.warnings.join('\n'),
  )
})

test('the merged run ends when its last shard ended, whichever shard that is', () => {
  const a = part(0, 2, { startedAt: '2026-11-30T10:00:09.000Z', finishedAt: '2026-11-30T10:00:31.000Z' })
  const b = part(1, 2, { startedAt: '2026-11-30T10:00:10.000Z', finishedAt: '2026-11-30T10:00:30.000Z' })
  const m = mergeResults(named(a, b))
  assert.deepEqual([m.startedAt, m.finishedAt], ['2026-11-30T10:00:09.000Z', '2026-11-30T10:00:31.000Z'])
})

test('a shard stopped before any phase (no histograms) merges beside shards that have them, in either order', () => {
  for (const order of [0, 1]) {
    const empty = part(1, 2, { phases: {}, partial: true })
    const full = part(0, 2)
    const m = mergeResults(named(...(order === 0 ? [full, empty] : [empty, full])))
    assert.equal(m.phases.hedged!.requests, full.phases.hedged!.requests)
    assert.equal(m.partial, true)
    // Its start is not among the starts compared: it has none.
    assert.equal(m.merge!.startSpreadMs, 0)
  }
})
