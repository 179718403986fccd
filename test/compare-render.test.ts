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

test('text: arrows and colours only when asked', () => {
  const text = renderCompareText(twoRuns(), { color: true })
  assert.match(text, ANSI)
  assert.match(text, /\u001b\[31m▲ worse\u001b\[0m/)
  const within = renderCompareText(compareWithin(makeHedgedRun()), { color: true })
  assert.match(within, /\u001b\[32m▼ better\u001b\[0m/)
  assert.match(within, /Comparing the plain and hedged phases of "hedged-fixture"/)
})

test('text: identical configurations say so', () => {
  const run = makeRunResult()
  const text = renderCompareText(compareRuns([{ name: 'a', result: run }, { name: 'b', result: run }]), { color: false })
  assert.match(text, /Configuration: identical/)
  assert.doesNotMatch(text, /\b(better|worse)\b  /)
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
