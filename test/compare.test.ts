import { test } from 'node:test'
import assert from 'node:assert/strict'
import { compareRuns, compareWithin, METRIC_KEYS, type Comparison } from '../src/report/compare.js'
import { UsageError } from '../src/core/errors.js'
import { seededRandom } from '../src/core/random.js'
import type { RunResult } from '../src/results/run-result.js'
import { makeConfig, makeHedgedRun, makePhase, makeRunResult } from './helpers/result-fixture.js'

/** Latencies around `targetMs` (±50 %), with 1 in 200 slowed by 40 ms: a plausible local server. */
function latencies(count: number, seed: number, targetMs: number): number[] {
  const next = seededRandom(seed)
  return Array.from({ length: count }, () => targetMs * (0.5 + next()) + (next() < 0.005 ? 40 : 0))
}

function plainRun(label: string, count: number, seed: number, targetMs: number, overrides: Partial<RunResult> = {}): RunResult {
  return makeRunResult({ label, phases: { plain: makePhase('plain', latencies(count, seed, targetMs)) }, ...overrides })
}

function row(c: Comparison, metric: string) {
  const found = c.metrics.find((m) => m.metric === metric)
  assert.ok(found, `metric ${metric} present`)
  return found
}

test('a run compared with itself is within noise everywhere', () => {
  const run = plainRun('same', 20_000, 1, 5)
  const c = compareRuns([
    { name: 'a.json', result: run },
    { name: 'b.json', result: run },
  ])
  for (const m of c.metrics) {
    assert.equal(m.changes[0], null, `${m.metric}: the baseline has no change`)
    // 20 000 requests bound p99.9 (0.999^20000 ~ 0) but not p99.99 (0.9999^20000 = 13.5 % > 2.5 %).
    assert.equal(m.changes[1]?.verdict, m.metric === 'p99.99' ? 'not enough requests' : 'within noise', m.metric)
    assert.equal(m.changes[1]?.abs, 0, m.metric)
  }
  assert.deepEqual(c.configDifferences, [])
})

test('two samples of the same server are within noise on the percentiles', () => {
  const c = compareRuns([
    { name: 'a', result: plainRun('a', 20_000, 1, 5) },
    { name: 'b', result: plainRun('b', 20_000, 2, 5) },
  ])
  for (const key of ['p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99']) assert.equal(row(c, key).changes[1]?.verdict, 'within noise', key)
})

test('a 5 ms target against a 15 ms target is worse at p50, and better the other way round', () => {
  const fast = plainRun('fast', 5_000, 3, 5)
  const slow = plainRun('slow', 5_000, 4, 15)
  const worse = compareRuns([
    { name: 'fast', result: fast },
    { name: 'slow', result: slow },
  ])
  const p50 = row(worse, 'p50').changes[1]!
  assert.equal(p50.verdict, 'worse')
  assert.ok(p50.interval && p50.interval[0] > 0, 'interval above 0')
  assert.ok(p50.pct! > 150, `p50 roughly tripled, got ${p50.pct} %`)
  assert.equal(row(worse, 'mean').changes[1]?.verdict, 'worse')
  const better = compareRuns([
    { name: 'slow', result: slow },
    { name: 'fast', result: fast },
  ])
  assert.equal(row(better, 'p50').changes[1]?.verdict, 'better')
})

test('every metric is listed in table order, with absolute and relative change', () => {
  const c = compareRuns([
    { name: 'a', result: plainRun('a', 1000, 5, 10) },
    { name: 'b', result: plainRun('b', 1000, 6, 20) },
  ])
  assert.deepEqual(
    c.metrics.map((m) => m.metric),
    METRIC_KEYS.filter((k) => k !== 'extra_load'),
  )
  const p50 = row(c, 'p50')
  assert.equal(p50.unit, 'ms')
  // Hand-known values, not compare.ts's own formula: p50 1 ms -> 1.5 ms
  // (HDR is exact below 2 ms) is +0.5 ms, +50 %.
  const exact = compareRuns([
    { name: 'a', result: makeRunResult({ phases: { plain: makePhase('plain', Array(100).fill(1)) } }) },
    { name: 'b', result: makeRunResult({ phases: { plain: makePhase('plain', Array(100).fill(1.5)) } }) },
  ])
  assert.deepEqual(row(exact, 'p50').values, [1, 1.5])
  assert.equal(row(exact, 'p50').changes[1]?.abs, 0.5)
  assert.equal(row(exact, 'p50').changes[1]?.pct, 50)
  assert.equal(row(c, 'rps').better, 'higher')
})

test('config differences are listed, including a different phase', () => {
  const a = plainRun('a', 1000, 7, 5)
  const b = makeHedgedRun({ config: makeConfig({ concurrency: 16, method: 'POST', mode: 'both', urls: ['http://x/1', 'http://x/2'] }) })
  const c = compareRuns([
    { name: 'a', result: a },
    { name: 'b', result: b },
  ])
  const diffs = Object.fromEntries(c.configDifferences.map((d) => [d.key, d.values]))
  assert.deepEqual(diffs.phase, ['plain', 'hedged'])
  assert.deepEqual(diffs.concurrency, ['4', '16'])
  assert.deepEqual(diffs.method, ['GET', 'POST'])
  assert.deepEqual(diffs.urls, ['http://127.0.0.1:8081/users/42', 'http://x/1, http://x/2'])
  assert.deepEqual(diffs.mode, ['plain', 'both'])
  assert.equal(diffs['hedge.delay'], undefined, 'equal settings are not listed')
})

test('--phase picks the phase in every run and fails clearly when a run lacks it', () => {
  const hedged = makeHedgedRun()
  const c = compareRuns(
    [
      { name: 'x', result: hedged },
      { name: 'y', result: hedged },
    ],
    { phase: 'plain' },
  )
  assert.deepEqual(
    c.runs.map((r) => r.phase),
    ['plain', 'plain'],
  )
  assert.equal(
    c.metrics.some((m) => m.metric === 'extra_load'),
    false,
  )
  assert.throws(
    () =>
      compareRuns(
        [
          { name: 'x', result: hedged },
          { name: 'p.json', result: plainRun('p', 100, 1, 5) },
        ],
        { phase: 'hedged' },
      ),
    (err: unknown) => err instanceof UsageError && /p\.json has no hedged phase/.test(err.message),
  )
  assert.throws(() => compareRuns([{ name: 'x', result: hedged }]), UsageError)
})

test('compare within a run: plain is the baseline, hedging fixes the tail at an extra load', () => {
  const c = compareWithin(makeHedgedRun())
  assert.equal(c.kind, 'within')
  assert.deepEqual(
    c.runs.map((r) => r.name),
    ['plain', 'hedged'],
  )
  assert.deepEqual(c.configDifferences, [])
  assert.equal(row(c, 'p99.9').changes[1]?.verdict, 'better')
  assert.equal(row(c, 'slow').changes[1]?.verdict, 'better')
  assert.equal(row(c, 'p50').changes[1]?.verdict, 'within noise')
  const load = row(c, 'extra_load')
  assert.equal(load.values[0], 0)
  assert.ok(load.values[1]! > 0)
  assert.equal(load.changes[1]?.verdict, 'worse')
  assert.throws(() => compareWithin(plainRun('p', 100, 1, 5)), UsageError)
})

test('warnings for interrupted runs, saturated generators and unusable histograms', () => {
  const partial = plainRun('p', 500, 1, 5, { partial: true, stoppedIn: 'plain' })
  const saturated = makeRunResult({
    phases: {
      plain: makePhase('plain', latencies(500, 2, 5), {
        generator: { eventLoopDelayMs: { p50: 1, p99: 90, max: 200 }, cpuPct: 99, cores: 1, saturated: true, warnings: [], cpuJudged: true },
        histogram: 'not base64!',
      }),
    },
  })
  const c = compareRuns([
    { name: 'p.json', result: partial },
    { name: 's.json', result: saturated },
  ])
  assert.equal(c.warnings.length, 3, c.warnings.join('\n'))
  assert.match(c.warnings[0]!, /p\.json: the run was interrupted/)
  assert.match(c.warnings[1]!, /s\.json: the load generator was saturated/)
  assert.match(c.warnings[2]!, /s\.json: no usable latency histogram/)
  assert.equal(row(c, 'p50').changes[1]?.interval, null)
  assert.equal(row(c, 'p50').changes[1]?.verdict, 'within noise')
})

test('the comparison is plain JSON: no Infinity, NaN or undefined survive a round trip', () => {
  const empty = makeRunResult({ phases: { plain: makePhase('plain', []) } })
  const c = compareRuns([
    { name: 'e', result: empty },
    { name: 'h', result: makeHedgedRun() },
  ])
  assert.deepEqual(JSON.parse(JSON.stringify(c)), c)
  assert.equal(row(c, 'p50').changes[1]?.pct, null, 'change from 0 has no percentage')
})

test('two 100k-request runs compare in well under a second', () => {
  const a = plainRun('a', 100_000, 11, 5)
  const b = plainRun('b', 100_000, 12, 6)
  const started = performance.now()
  const c = compareRuns([
    { name: 'a', result: a },
    { name: 'b', result: b },
  ])
  const elapsed = performance.now() - started
  assert.ok(elapsed < 1000, `took ${elapsed.toFixed(0)} ms`)
  assert.equal(row(c, 'p50').changes[1]?.verdict, 'worse')
})
