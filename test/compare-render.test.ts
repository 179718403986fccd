import { test } from 'node:test'
import assert from 'node:assert/strict'
import { compareRuns, compareWithin, type Comparison } from '../src/report/compare.js'
import { COMPARE_CSV_COLUMNS, renderCompareCsv } from '../src/report/compare-csv.js'
import { renderCompareJson } from '../src/report/compare-json.js'
import { renderCompareText } from '../src/report/compare-text.js'
import { parseCsvObjects } from './helpers/csv.js'
import { makeConfig, makeHedgedRun, makePhase, makeRunResult, stallingLatencies } from './helpers/result-fixture.js'

const ANSI = /\u001b\[/

function twoRuns(): Comparison {
  const before = makeRunResult({ label: 'before' })
  const after = makeRunResult({ label: 'after', config: makeConfig({ concurrency: 8 }), phases: { plain: makePhase('plain', stallingLatencies(400, 2).map((ms) => ms * 3)) } })
  return compareRuns([{ name: 'before.json', result: before }, { name: 'after, "quoted".json', result: after }])
}

test('text: differing configs come before the table, then every metric with change, interval and verdict', () => {
  const text = renderCompareText(twoRuns(), { color: false })
  const configAt = text.indexOf('Configuration differs')
  const tableAt = text.indexOf('metric')
  assert.ok(configAt >= 0 && configAt < tableAt, text)
  assert.match(text, /concurrency\s+4\s+8/)
  assert.match(text, /^\s+p50\s+\S+ ms\s+\S+ ms\s+\+\S+ ms \(\+\d+\.\d %\)\s+\[\+\S+ ms, \+\S+ ms\]\s+worse$/m)
  assert.match(text, /^\s+max .*within noise$/m)
  assert.doesNotMatch(text, ANSI)
  assert.doesNotMatch(text, /[▲▼]/)
})

test('text: a setting one run left unset reads as words, never a raw null (a -n run against a -z run)', () => {
  const counted = makeRunResult({ label: 'counted' })
  const timed = makeRunResult({ label: 'timed', config: makeConfig({ requests: null, durationMs: 10_000 }) })
  const text = renderCompareText(compareRuns([{ name: 'counted.json', result: counted }, { name: 'timed.json', result: timed }]), { color: false })
  assert.match(text, /^\s+requests\s+4000\s+timed \(-z\)$/m, text)
  assert.match(text, /^\s+durationMs\s+none\s+10000$/m, text)
  assert.doesNotMatch(text, /\bnull\b/, text)
})

test('text: arrows and colours only when asked', () => {
  const text = renderCompareText(twoRuns(), { color: true })
  assert.match(text, ANSI)
  assert.match(text, /\u001b\[31m▲ worse\u001b\[0m/)
  const within = renderCompareText(compareWithin(makeHedgedRun()), { color: true })
  assert.match(within, /\u001b\[32m▼ better\u001b\[0m/)
  assert.match(within, /Comparing the plain and hedged phases of "hedged-fixture"/)
})

test('text: identical configurations say so, and each metric gets its own verdict', () => {
  // Two different seeded runs under one configuration; the second adds 5 ms
  // to every request that did not stall. Known verdicts: p10-p95 shift by
  // 5 ms against order-statistic intervals of about +-0.5 ms at n = 2000, so
  // they are worse; p99 sits on the 1 % of 1 s stalls, which did not move;
  // 2000 requests cannot bound p99.9 and p99.99 (noise.ts); the mean's interval is wider than 5 ms (the stalls' stddev is
  // ~100 ms); min, max and stddev are never judged; slow count, errors and
  // rps (same duration) are equal.
  const before = makeRunResult({ label: 'a', phases: { plain: makePhase('plain', stallingLatencies(2000, 1), { durationMs: 10_000 }) } })
  const shifted = stallingLatencies(2000, 2).map((ms) => (ms < 1000 ? ms + 5 : ms))
  const after = makeRunResult({ label: 'b', phases: { plain: makePhase('plain', shifted, { durationMs: 10_000 }) } })
  const text = renderCompareText(compareRuns([{ name: 'a', result: before }, { name: 'b', result: after }]), { color: false })
  assert.match(text, /Configuration: identical/)
  const worse = new Set(['p10', 'p25', 'p50', 'p75', 'p90', 'p95'])
  const unjudged = new Set(['p99.9', 'p99.99'])
  const metrics = ['min', 'p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99', 'p99.9', 'p99.99', 'max', 'mean', 'stddev', 'slow', 'error_rate', 'rps']
  for (const metric of metrics) {
    const verdict = worse.has(metric) ? 'worse$' : unjudged.has(metric) ? 'not enough requests \\(n = 2000 for .*\\)$' : 'within noise$'
    assert.match(text, new RegExp(`^  ${metric.replace('.', '\\.')}\\s.*\\S\\s+${verdict}`, 'm'), `${metric}: ${verdict}\n${text}`)
  }
  assert.equal(text.match(/ worse$/gm)?.length, worse.size, text)
  assert.doesNotMatch(text, / better$/m)
})

test('CSV: one row per metric × run that parses back to the comparison', () => {
  const c = twoRuns()
  const rows = parseCsvObjects(renderCompareCsv(c))
  assert.equal(rows.length, c.metrics.length * c.runs.length)
  assert.deepEqual(Object.keys(rows[0]!), [...COMPARE_CSV_COLUMNS])
  for (const [i, row] of rows.entries()) {
    const metric = c.metrics[Math.floor(i / c.runs.length)]!
    const run = i % c.runs.length
    assert.equal(row.metric, metric.metric)
    assert.equal(row.run, c.runs[run]!.name)
    assert.equal(Number(row.value), metric.values[run])
    const change = metric.changes[run]
    assert.equal(row.verdict, change?.verdict ?? '')
    assert.equal(row.change === '' ? null : Number(row.change), change?.abs ?? null)
    assert.equal(row.interval_low === '' ? null : Number(row.interval_low), change?.interval?.[0] ?? null)
  }
})

test('JSON: the full comparison', () => {
  const c = twoRuns()
  assert.deepEqual(JSON.parse(renderCompareJson(c)), c)
})

test('a merged run against a one-process run: the load that differs is listed, and the rate interval is about the rate shown', () => {
  const one = makeRunResult({ label: 'one', phases: { plain: makePhase('plain', stallingLatencies(2000, 1), { durationMs: 10_000 }) } })
  // Two shards of -c 4 each ran for about 10 s apiece within an 11 s union window: their rates add up (400/s); requests / union is 364/s.
  const merged = makeRunResult({ label: 'merged', phases: { plain: makePhase('plain', stallingLatencies(4000, 2), { durationMs: 11_000, rps: 400 }) } })
  merged.generators = [{ shard: 0 }, { shard: 1 }] as unknown as NonNullable<typeof merged.generators>
  const c = compareRuns([{ name: 'one.json', result: one }, { name: 'merged.json', result: merged }])
  assert.deepEqual(c.configDifferences.filter((d) => d.key === 'generators' || d.key === 'in flight').map((d) => [d.key, d.values]), [
    ['generators', ['one process', '2 shards merged']],
    ['in flight', [String(one.config.concurrency), String(2 * merged.config.concurrency)]],
  ])
  const rps = c.metrics.find((m) => m.metric === 'rps')!
  const change = rps.changes[1]!
  assert.equal(change.abs, 200)
  assert.ok(change.interval![0] <= 200 && 200 <= change.interval![1], `interval ${change.interval} holds the change`)
  assert.equal(change.verdict, 'better')
})
