import { test } from 'node:test'
import assert from 'node:assert/strict'
import { compareRuns, compareWithin, type Comparison } from '../src/report/compare.js'
import { COMPARE_CSV_COLUMNS, renderCompareCsv } from '../src/report/compare-csv.js'
import { renderCompareJson } from '../src/report/compare-json.js'
import { renderCompareText } from '../src/report/compare-text.js'
import { parseCsvObjects } from './helpers/csv.js'
import { mergeResults } from '../src/stats/result-merge.js'
import { round3 } from '../src/core/round.js'
import { makeConfig, makeHedgedRun, makePhase, makeRunResult, stallingLatencies } from './helpers/result-fixture.js'

const ANSI = /\u001b\[/

function twoRuns(): Comparison {
  const before = makeRunResult({ label: 'before' })
  const after = makeRunResult({
    label: 'after',
    config: makeConfig({ concurrency: 8 }),
    phases: {
      plain: makePhase(
        'plain',
        stallingLatencies(400, 2).map((ms) => ms * 3),
      ),
    },
  })
  return compareRuns([
    { name: 'before.json', result: before },
    { name: 'after, "quoted".json', result: after },
  ])
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
  const text = renderCompareText(
    compareRuns([
      { name: 'counted.json', result: counted },
      { name: 'timed.json', result: timed },
    ]),
    { color: false },
  )
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
  const text = renderCompareText(
    compareRuns([
      { name: 'a', result: before },
      { name: 'b', result: after },
    ]),
    { color: false },
  )
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

test('a merged run against a one-process run of the same total: identical configuration, concurrency what was in flight in all, rates within noise', () => {
  // One process at -c 8 against two shards of -c 4 (8 in flight), each sending 2000 of the 4000 requests.
  const one = makeRunResult({
    label: 'one',
    config: makeConfig({ concurrency: 8 }),
    phases: { plain: makePhase('plain', stallingLatencies(4000, 1), { durationMs: 20_000 }) },
  })
  const shards = [0, 1].map((index) =>
    makeRunResult({
      label: `shard-${index}`,
      runId: 'r',
      shard: { index, count: 2 },
      config: makeConfig({ concurrency: 4 }),
      phases: { plain: makePhase('plain', stallingLatencies(2000, 2 + index), { durationMs: 19_000 + 1000 * index }) },
    }),
  )
  // Shard 1 started 0.5 s after shard 0: the union window is 20.5 s (shard 0 alone ran at 105/s, shard 1 at 100/s: their sum, 205/s, is not what the target saw).
  shards.forEach((r, i) => (r.phases.plain!.wall = { startMs: 1_000_000 + 500 * i, endMs: 1_000_000 + 500 * i + r.phases.plain!.durationMs }))
  const merged = mergeResults(shards.map((result, i) => ({ result, source: `s${i}.json` })))
  const p = merged.phases.plain!
  assert.equal(p.durationMs, 20_500)
  assert.equal(p.rps, round3((p.requests * 1000) / p.durationMs), "the merged Summary's time, requests and requests/s agree")
  const c = compareRuns([
    { name: 'one.json', result: one },
    { name: 'merged.json', result: merged },
  ])
  assert.deepEqual(c.configDifferences, [], 'identical configuration')
  const rps = c.metrics.find((m) => m.metric === 'rps')!
  assert.deepEqual(rps.values, [200, round3(4000 / 20.5)])
  assert.equal(rps.changes[1]!.verdict, 'within noise')
  // The same merge against one process at -c 4 had twice its load.
  const half = compareRuns([
    { name: 'c4.json', result: makeRunResult({ config: makeConfig({ concurrency: 4 }) }) },
    { name: 'merged.json', result: merged },
  ])
  assert.deepEqual(half.configDifferences.find((d) => d.key === 'concurrency')?.values, ['4', '8'])
})

test('issue 30 item 7: runs are named by --label (or A, B, C with a key) and the text fits the width given', () => {
  const runs = ['before', 'after', 'merged'].map((label, i) => ({
    name: `results/2026-12-02T09-${i}0-00Z-${label}-hedged.json`,
    result: makeHedgedRun({ label }),
  }))
  const labelled = compareRuns(runs)
  assert.deepEqual(
    labelled.runs.map((r) => r.tag),
    ['before', 'after', 'merged'],
  )
  // Unlimited: one table, the labels as headers (file names made it 338 columns for three runs).
  const wide = renderCompareText(labelled, { color: false })
  assert.match(wide, /^ {2}metric\s+before\s+after\s+merged\s+change after\s+95% interval after\s+verdict after\s+change merged\s+/m)
  // 80 columns: one table per later run against the first, every line within 80.
  const narrow = renderCompareText(labelled, { color: false, width: 80 })
  assert.ok(narrow.includes('\nafter against before:\n  metric') && narrow.includes('\nmerged against before:\n  metric'), narrow)
  assert.deepEqual(
    narrow.split('\n').filter((l) => l.length > 80),
    [],
  )
  assert.match(narrow, /^ {2}p99\.99 .* not enough requests \*$/m)
  assert.match(narrow, /^ {2}\* p99\.99: n = 4000 for p99\.99; needs 36887$/m)
  // Labels that do not tell the runs apart (every run "run" by default) or are too long: A, B, C, each with its file in the runs list.
  const same = compareRuns(runs.map((r) => ({ ...r, result: makeHedgedRun({ label: 'run' }) })))
  assert.deepEqual(
    same.runs.map((r) => r.tag),
    ['A', 'B', 'C'],
  )
  assert.match(renderCompareText(same, { color: false }), /^ {2}A {2}results\/2026-12-02T09-00-00Z-before-hedged\.json "run" {2}hedged phase/m)
  assert.deepEqual(
    compareRuns(runs.map((r, i) => ({ ...r, result: makeHedgedRun({ label: `a label longer than sixteen ${i}` }) }))).runs.map((r) => r.tag),
    ['A', 'B', 'C'],
  )
})
