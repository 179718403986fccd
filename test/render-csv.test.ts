import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CSV_SUMMARY_COLUMNS, renderCsvSummary } from '../src/report/csv.js'
import { parseResult, renderJson } from '../src/results/result-json.js'
import { PERCENTILE_KEYS } from '../src/results/run-result.js'
import type { Figures } from '../src/results/run-result.js'
import { parseCsv, parseCsvObjects } from './helpers/csv.js'
import { makeHedgedRun, makePhase, makeReplica, makeRunResult } from './helpers/result-fixture.js'

test('the test CSV parser handles RFC 4180 quoting', () => {
  assert.deepEqual(parseCsv('a,"b,c","d ""e""","f\r\ng"\r\n1,,3,4\n'), [
    ['a', 'b,c', 'd "e"', 'f\r\ng'],
    ['1', '', '3', '4'],
  ])
})

test('one row per phase and per phase x replica, under the documented header', () => {
  const result = makeHedgedRun()
  const rows = parseCsvObjects(renderCsvSummary(result))
  const phases = Object.values(result.phases)
  assert.equal(rows.length, phases.length + phases.reduce((n, p) => n + p.replicas.length, 0))
  assert.deepEqual(parseCsv(renderCsvSummary(result))[0], [...CSV_SUMMARY_COLUMNS])
  assert.deepEqual(
    rows.map((r) => `${r.scope}:${r.phase}`).filter((s) => s.startsWith('phase:')),
    ['phase:warmup', 'phase:plain', 'phase:hedged'],
  )
})

function assertAgrees(row: Record<string, string>, f: Figures): void {
  for (const key of ['requests', 'attempts', 'ok', 'errors', 'bytes'] as const) assert.equal(Number(row[key]), f[key], key)
  for (const key of [...PERCENTILE_KEYS, 'min', 'mean', 'max'] as const) assert.equal(Number(row[`${key}_ms`]), Number(f.latencyMs[key].toFixed(3)), key)
  assert.equal(Number(row.slow_count), f.slow.count)
  assert.equal(Number(row.slow_threshold_ms), f.slow.thresholdMs)
}

test('CSV figures agree with the JSON of the same run', () => {
  const result = parseResult(renderJson(makeHedgedRun()), 'x.json')
  const rows = parseCsvObjects(renderCsvSummary(result))
  for (const phase of Object.values(result.phases)) {
    const row = rows.find((r) => r.scope === 'phase' && r.phase === phase.name)!
    assertAgrees(row, phase)
    assert.equal(Number(row.rps), phase.rps)
    assert.equal(Number(row.duration_ms), phase.durationMs)
    for (const replica of phase.replicas) {
      const rr = rows.find((r) => r.scope === 'replica' && r.phase === phase.name && r.replica === replica.url)!
      assertAgrees(rr, replica)
      assert.equal(Number(rr.wins), replica.wins)
    }
  }
})

test('hedging columns are filled for the hedged phase and empty elsewhere', () => {
  const result = makeHedgedRun()
  const h = result.phases.hedged!.hedging!
  // The stored field says something else: the column must not be copied from it.
  h.extraLoadPct = 99
  const rows = parseCsvObjects(renderCsvSummary(result))
  const hedged = rows.find((r) => r.scope === 'phase' && r.phase === 'hedged')!
  assert.equal(Number(hedged.hedges_sent), h.hedgesSent)
  // Extra load is counted from the phase (4138 attempts for 4000 requests), not copied from the stored field.
  assert.equal(Number(hedged.extra_load_pct), 3.45)
  assert.equal(Number(hedged.hedge_wins), h.hedgeWins)
  assert.equal(Number(hedged.budget_denied), h.budgetDenied)
  assert.equal(Number(hedged.delay_ms), h.delayMs)
  const plain = rows.find((r) => r.scope === 'phase' && r.phase === 'plain')!
  for (const col of ['hedges_sent', 'unsent', 'extra_load_pct', 'trigger_rate_pct', 'hedge_wins', 'cancelled', 'delay_ms']) assert.equal(plain[col], '', col)
})

test('status codes and error kinds are one cell each; awkward text survives quoting', () => {
  const url = 'http://127.0.0.1:9/a?x=1,2&q="quoted"'
  const phase = makePhase('plain', [5, 6, 7, 8], {
    statusCodes: { '200': 3, '503': 1 },
    errorKinds: { ECONNRESET: 2, 'weird, "kind"': 1 },
    replicas: [makeReplica(url, [5, 6, 7, 8])],
  })
  const rows = parseCsvObjects(renderCsvSummary(makeRunResult({ phases: { plain: phase } })))
  assert.equal(rows[0]!.status_codes, '200:3 503:1')
  assert.equal(rows[0]!.error_kinds, 'ECONNRESET:2 weird, "kind":1')
  assert.equal(rows[1]!.replica, url)
})

test('a password in a replica URL never reaches the CSV', () => {
  const phase = makePhase('plain', [5], { replicas: [makeReplica('http://u:s3cret@h/x', [5])] })
  const csv = renderCsvSummary(makeRunResult({ phases: { plain: phase } }))
  assert.doesNotMatch(csv, /s3cret/)
  assert.match(csv, /http:\/\/\*\*\*@h\/x/)
})

test('an open-loop phase carries the rate asked, late sends and the uncorrected service time; a closed loop leaves them empty', () => {
  const open = makeRunResult({ phases: { plain: makePhase('plain', [5, 6, 7], { serviceTime: { ...makePhase('plain', [4, 5, 6]), lateSends: 17 } }) } })
  open.config.rate = 200
  const [row] = parseCsvObjects(renderCsvSummary(open)).filter((r) => r.scope === 'phase')
  assert.deepEqual(
    [row!.rate_asked, row!.late_sends, row!.service_p50_ms, row!.service_p99_ms],
    ['200', '17', open.phases.plain!.serviceTime!.latencyMs.p50.toFixed(3), open.phases.plain!.serviceTime!.latencyMs.p99.toFixed(3)],
  )
  for (const r of parseCsvObjects(renderCsvSummary(makeHedgedRun()))) {
    for (const col of ['rate_asked', 'late_sends', 'service_p50_ms', 'service_p99_ms']) assert.equal(r[col], '', `${r.scope} ${r.phase} ${col}`)
  }
})
