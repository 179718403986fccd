/**
 * Issue 29's acceptance for the result algebra: one workload run as one
 * process, as --workers 2 and as three shards merged, against real counting
 * servers on 127.0.0.1, seeded. Every field of a phase is enumerated from
 * the algebra's own tables (phase-algebra.ts), so a field added to the
 * schema is covered here without touching this file: the three results
 * carry the same fields; the merge of the shards is, field by field, what
 * the field's kind says of its parts (sums summed, histograms added, the
 * same equal, lists united); what the workload fixes (requests, answers,
 * bytes, the hedging setup) is equal in all three; the servers received
 * exactly the attempts each one reports.
 */
import { before, after, test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import type { RunOptions } from '../src/run/run-options.js'
import { mergeResults } from '../src/stats/result-merge.js'
import { compareRuns } from '../src/report/compare.js'
import { HEDGING_FIELDS, PHASE_FIELDS, REPLICA_FIELDS, mergeEncoded, phaseRate, type MergeKind, type MergeTable } from '../src/stats/phase-algebra.js'
import { decodeHistogram, encodeHistogram } from '../src/stats/histogram.js'
import type { PhaseName, PhaseResult, RunResult } from '../src/results/run-result.js'
import { settle, startServer, type CountingServer } from './helpers/servers.js'

const REQUESTS = 240
const SHARDS = 3
const PHASES: PhaseName[] = ['plain', 'hedged']

let servers: CountingServer[]
let one: RunResult
let workers: RunResult
let shards: RunResult[]
let merged: RunResult
/** Attempts each way of running reported, and what the servers received meanwhile. */
const counted: Record<string, { client: number; servers: number }> = {}

const attemptsOf = (r: RunResult): number => Object.values(r.phases).reduce((s, p) => s + p.attempts, 0)
const received = (): number => servers.reduce((s, x) => s + x.received, 0)

/** Runs `body`, then waits (bounded) until the servers have every attempt it reports. */
async function counting(name: string, body: () => Promise<RunResult[]>): Promise<RunResult[]> {
  const before = received()
  const results = await body()
  const client = results.reduce((s, r) => s + attemptsOf(r), 0)
  counted[name] = { client, servers: (await settle(servers, before + client)) - before }
  return results
}

before(async () => {
  // Every 10th request takes 40 ms, the rest 2 ms: the 8 ms hedges fire, win and cancel their originals.
  servers = [await startServer({ delayMs: (n) => (n % 10 === 0 ? 40 : 2) }), await startServer({ delayMs: (n) => (n % 10 === 5 ? 40 : 2) })]
  const base: RunOptions = { urls: servers.map((s) => s.url), requests: REQUESTS, mode: 'both', warmup: 0, hedge: { delay: 8 }, seed: 29 }
  ;[one] = await counting('one process', async () => [await run({ ...base, concurrency: 6 })])
  ;[workers] = await counting('--workers 2', async () => [await run({ ...base, concurrency: 6, workers: 2 })])
  // One after another, so each shard's server counts are its own; -c 2 each is the 6 in flight of one process.
  shards = await counting('three shards', async () => {
    const out: RunResult[] = []
    for (let index = 0; index < SHARDS; index++) out.push(await run({ ...base, concurrency: 2, shard: { index, count: SHARDS }, runId: 'algebra' }))
    return out
  })
  merged = mergeResults(shards.map((result, i) => ({ result, source: `shard-${i}` })))
})

after(() => Promise.all(servers.map((s) => s.close())))

test('the servers received exactly the attempts each way of running reports', () => {
  assert.deepEqual(Object.keys(counted), ['one process', '--workers 2', 'three shards'])
  for (const [name, c] of Object.entries(counted)) assert.equal(c.servers, c.client, name)
  assert.equal(attemptsOf(merged), counted['three shards']!.client)
  assert.ok(merged.phases.hedged!.hedging!.cancelled > 0, 'hedges won and cancelled their originals: the cancel costs are exercised')
})

/** Fields a run sets only in some ways of running, by design (the table's `span` kind says so for `window`). */
const ONLY_MERGED_SHARDS = new Set<string>(['window'])

test('one process, --workers 2 and three shards merged carry the same fields, every one of the schema', () => {
  for (const name of PHASES) {
    const [a, b, c] = [one, workers, merged].map((r) => r.phases[name]!)
    for (const key of Object.keys(PHASE_FIELDS) as Array<keyof PhaseResult>) {
      if (ONLY_MERGED_SHARDS.has(key)) {
        assert.equal(a[key], undefined, `${name}.${key}`)
        assert.notEqual(c[key], undefined, `${name}.${key}`)
        continue
      }
      assert.equal(
        b[key] === undefined,
        a[key] === undefined,
        `${name}.${key}: --workers 2 ${b[key] === undefined ? 'lacks' : 'has'} it, one process ${a[key] === undefined ? 'not' : 'too'}`,
      )
      assert.equal(
        c[key] === undefined,
        a[key] === undefined,
        `${name}.${key}: the merge ${c[key] === undefined ? 'lacks' : 'has'} it, one process ${a[key] === undefined ? 'not' : 'too'}`,
      )
    }
    for (const key of Object.keys(HEDGING_FIELDS) as Array<keyof NonNullable<PhaseResult['hedging']>>) {
      if (!a.hedging) continue
      assert.equal(c.hedging![key] === undefined, a.hedging[key] === undefined, `${name}.hedging.${key}`)
      assert.equal(b.hedging![key] === undefined, a.hedging[key] === undefined, `${name}.hedging.${key}`)
    }
  }
  // The fields this workload must exercise are all there (a merge that dropped them read as an old result).
  for (const r of [one, workers, merged]) {
    const h = r.phases.hedged!
    assert.notEqual(h.connectionsClosedByCancel, undefined)
    assert.notEqual(h.streamsResetByCancel, undefined)
    assert.ok((h.timelineFine?.length ?? 0) > 0, 'the 100 ms points of a short phase')
  }
})

test('what the workload fixes is equal in all three: requests, answers, bytes, status codes, the hedging setup', () => {
  for (const name of PHASES) {
    const [a, b, c] = [one, workers, merged].map((r) => r.phases[name]!)
    for (const p of [a, b, c]) {
      assert.equal(p.requests, REQUESTS)
      assert.equal(p.ok + p.errors, p.requests)
      assert.equal(
        p.timeline.reduce((s, t) => s + t.requests, 0),
        p.requests,
        'every request in one second of the timeline',
      )
      assert.equal(
        p.timelineFine!.reduce((s, t) => s + t.requests, 0),
        p.requests,
        'and in one 100 ms point',
      )
      assert.equal(
        p.replicas.reduce((s, r) => s + r.attempts, 0),
        p.attempts,
      )
      assert.equal(decodeHistogram(p.histogram).totalCount, p.requests)
      assert.equal(p.rps, phaseRate(p.requests, p.durationMs), "requests/s is requests over the phase's time")
    }
    for (const key of ['requests', 'ok', 'errors', 'bytes', 'statusCodes', 'errorKinds', 'name'] as const) {
      assert.deepEqual(b[key], a[key], `${name}.${key} (--workers 2)`)
      assert.deepEqual(c[key], a[key], `${name}.${key} (merge)`)
    }
    if (!a.hedging) continue
    for (const [key, rule] of Object.entries(HEDGING_FIELDS)) {
      if (rule.kind !== 'same') continue
      const k = key as keyof typeof a.hedging
      assert.deepEqual(b.hedging![k], a.hedging[k], `${name}.hedging.${key} (--workers 2)`)
      assert.deepEqual(c.hedging![k], a.hedging[k], `${name}.hedging.${key} (merge)`)
    }
  }
})

test("the merge of the shards is, field by field, what each field's kind says of the shards' own", () => {
  for (const name of PHASES) {
    const parts = shards.map((s) => s.phases[name]!)
    checkTable(PHASE_FIELDS, merged.phases[name]!, parts, name)
    const h = merged.phases[name]!.hedging
    if (h)
      checkTable(
        HEDGING_FIELDS,
        h,
        parts.map((p) => p.hedging!),
        `${name}.hedging`,
      )
    for (const replica of merged.phases[name]!.replicas) {
      checkTable(
        REPLICA_FIELDS,
        replica,
        parts.map((p) => p.replicas.find((r) => r.url === replica.url)!),
        `${name}.replica ${replica.url}`,
      )
    }
  }
  // The union of three windows one after another: from the first shard's start to the last one's end.
  const plain = merged.phases.plain!
  const walls = shards.map((s) => s.phases.plain!.wall!)
  assert.equal(plain.durationMs, Math.max(...walls.map((w) => w.endMs)) - Math.min(...walls.map((w) => w.startMs)))
})

test('compare of the merge against the one process of the same total: identical configuration', () => {
  // (The shards ran one after another here, so their union window is three runs long: the rates are compared in compare-render.test.ts.)
  const c = compareRuns(
    [
      { name: 'one.json', result: one },
      { name: 'merged.json', result: merged },
    ],
    { phase: 'plain' },
  )
  assert.deepEqual(c.configDifferences, [], 'the merge of -c 2 x 3 is the one process at -c 6')
})

/**
 * Checks every field of `table` on a merged object against its parts, as
 * its kind says. Every field is visited; one this test cannot judge by its
 * kind fails by name, so a new kind gets a check here.
 */
function checkTable<T extends object>(table: MergeTable<T, never>, merged: T, parts: T[], where: string): void {
  for (const [key, rule] of Object.entries(table) as Array<[keyof T & string, { kind: MergeKind }]>) {
    const m = merged[key] as unknown
    const ps = parts.map((p) => p[key]) as unknown[]
    const at = `${where}.${key} (${rule.kind})`
    if (ps.every((v) => v === undefined)) {
      if (rule.kind !== 'span' && rule.kind !== 'bounded') assert.equal(m, undefined, `${at}: absent in every shard, absent in the merge`)
      continue
    }
    checkKind(rule.kind, m, ps, at)
  }
}

function checkKind(kind: MergeKind, m: unknown, ps: unknown[], at: string): void {
  switch (kind) {
    case 'same':
      for (const p of ps) assert.deepEqual(p, m, at)
      return
    case 'sum':
      return checkSum(m, ps, at)
    case 'min':
      return assert.equal(m, Math.max(0, Math.min(...(ps as number[]))), at)
    case 'max':
      return assert.equal(m, Math.max(...(ps as number[])), at)
    case 'histogram':
      return checkHistogram(m, ps, at)
    case 'union':
      return checkUnion(m, ps, at)
    case 'table':
      // Merged by its own table: hedging is checked by HEDGING_FIELDS (above); the rest (all counters) by their numbers.
      return at.endsWith('.hedging (table)') ? assert.notEqual(m, undefined, at) : checkSum(m, ps, at)
    case 'span':
    case 'bounded':
    case 'derived':
      // Checked by what they are about: the union window's duration and the rate over it (above), a generator's own.
      assert.notEqual(m, undefined, at)
      return
    default:
      assert.fail(`${at}: no check for the kind ${JSON.stringify(kind)}`)
  }
}

/** Every numeric leaf summed, or (a setting like slow.thresholdMs) equal in every part and the merge. */
function checkSum(m: unknown, ps: unknown[], at: string): void {
  if (typeof m === 'number')
    return assert.equal(
      m,
      (ps as number[]).reduce((s, x) => s + x, 0),
      at,
    )
  if (typeof m !== 'object' || m === null) return assert.fail(`${at}: not a number or an object: ${JSON.stringify(m)}`)
  for (const [k, v] of Object.entries(m)) {
    const values = ps.map((p) => (p as Record<string, unknown>)[k])
    if (typeof v === 'number' && values.every((x) => x === v)) continue
    if (typeof v === 'number')
      assert.equal(
        v,
        (values as number[]).reduce((s, x) => s + x, 0),
        `${at}.${k}`,
      )
  }
}

function checkHistogram(m: unknown, ps: unknown[], at: string): void {
  if (typeof m === 'string') {
    // The HDR add of the parts, bucket by bucket.
    assert.equal(m, encodeHistogram(mergeEncoded(ps as string[])), at)
    return
  }
  const encoded = (m as { histogram?: unknown }).histogram
  if (typeof encoded === 'string') {
    // A summary with its histogram (loser runtime): the histogram is the parts' added, its count their sum.
    const partsEncoded = ps.filter((p) => p !== undefined).map((p) => (p as { histogram: string }).histogram)
    assert.equal(encoded, encodeHistogram(mergeEncoded(partsEncoded)), at)
    return assert.equal(
      decodeHistogram(encoded).totalCount,
      partsEncoded.reduce((s, e) => s + decodeHistogram(e).totalCount, 0),
      at,
    )
  }
  if (Array.isArray(m)) {
    // Details: per attempt and stage, the counts add up.
    const count = (list: unknown): number => (list as Array<{ write: { count: number } }>).reduce((s, d) => s + d.write.count, 0)
    return assert.equal(
      count(m),
      ps.reduce((s: number, p) => s + (p ? count(p) : 0), 0),
      at,
    )
  }
  const summary = m as { min?: number; max?: number; latencyMs?: { min: number; max: number } }
  const lat = summary.latencyMs ?? (summary as { min: number; max: number })
  const partLat = ps.map((p) => (p as { latencyMs?: { min: number; max: number } }).latencyMs ?? (p as { min: number; max: number })).filter((l) => l.max > 0)
  assert.equal(lat.max, Math.max(...partLat.map((l) => l.max)), `${at}: the exact max of the parts`)
  assert.equal(lat.min, Math.min(...partLat.map((l) => l.min)), `${at}: the exact min of the parts`)
}

function checkUnion(m: unknown, ps: unknown[], at: string): void {
  if (Array.isArray(m)) {
    const present = ps.filter((p): p is unknown[] => Array.isArray(p))
    const requests = (list: unknown[]): number =>
      list.reduce((s: number, x) => s + ((x as { requests?: number; count?: number }).requests ?? (x as { count?: number }).count ?? 1), 0)
    if (m.length > 0 && typeof m[0] === 'string') {
      for (const p of present) for (const x of p) assert.ok(m.includes(x), `${at}: ${String(x)} kept`)
      return
    }
    return assert.equal(
      requests(m),
      present.reduce((s, p) => s + requests(p), 0),
      at,
    )
  }
  if (typeof m === 'object' && m !== null) {
    // A record of counts: every key's count summed.
    for (const [k, v] of Object.entries(m))
      assert.equal(
        v,
        ps.reduce((s: number, p) => s + (((p ?? {}) as Record<string, number>)[k] ?? 0), 0),
        `${at}.${k}`,
      )
    return
  }
  assert.fail(`${at}: a union of ${JSON.stringify(m)}`)
}
