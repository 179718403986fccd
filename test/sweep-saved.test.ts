/**
 * A saved sweep is a result: its declared schema read back in one path
 * (results/sweep-result.ts), `report` rendering it in every format as the
 * sweep printed it, and `compare` of two sweeps of the same settings lane by
 * lane, with compare's noise verdict per metric.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseSweep, SWEEP_SCHEMA } from '../src/results/sweep-result.js'
import { sweepFrontier } from '../src/report/sweep-frontier.js'
import { renderSweepJson } from '../src/report/sweep-store.js'
import { renderSweepCsv } from '../src/report/sweep-csv.js'
import { renderSweepText } from '../src/report/sweep-text.js'
import { compareSweeps } from '../src/report/sweep-compare.js'
import { renderJson } from '../src/results/result-json.js'
import { makeSweep } from './helpers/sweep-fixture.js'
import { makeHedgedRun } from './helpers/result-fixture.js'
import { runMainCases } from './helpers/main-cases.js'

const dir = mkdtempSync(join(tmpdir(), 'hedgebench-sweep-saved-'))
const DELAYS = ['p90', 'p99', '20ms']
const before = makeSweep({ delays: DELAYS, label: 'before' })
// More stalls in the second sweep: the plain lane's slow requests and tail move, the hedged lanes' extra load too.
const after = makeSweep({ delays: DELAYS, label: 'after', seed: 2, stallEvery: 20 })

function save(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

test('a saved sweep carries its schema and version first, and reads back to the same sweep, its frontier under the same --max-extra', () => {
  const frontier = sweepFrontier(before, 3)
  const text = renderSweepJson(before, frontier)
  const value = JSON.parse(text) as Record<string, unknown>
  assert.deepEqual(Object.keys(value).slice(0, 3), ['schema', 'version', 'kind'])
  assert.equal(value.schema, SWEEP_SCHEMA)
  const saved = parseSweep(text, 'x.json')
  assert.deepEqual(saved.sweep, before)
  assert.equal(saved.maxExtraPct, 3)
  assert.equal(renderSweepJson(saved.sweep, sweepFrontier(saved.sweep, saved.maxExtraPct!), saved.extra), text, 'rendered again byte for byte')
  // A sweep saved before it had a schema: its kind says what it is.
  const { schema: _s, version: _v, ...old } = value
  assert.deepEqual(parseSweep(JSON.stringify(old), 'old.json').sweep, before)
})

test('a broken saved sweep is refused in one line naming the field', () => {
  const value = JSON.parse(renderSweepJson(before, sweepFrontier(before))) as { settings: Array<Record<string, unknown>>; run: Record<string, unknown> }
  value.settings[1]!.delayMs = 'soon'
  assert.throws(() => parseSweep(JSON.stringify(value), 'bad.json'), { message: 'bad.json: invalid sweep: settings[1].delayMs must be a number >= 0' })
  value.settings[1]!.delayMs = 1
  value.run.label = 7
  assert.throws(() => parseSweep(JSON.stringify(value), 'bad.json'), { message: 'bad.json (its run): invalid result: "label" must be a string' })
})

test('report renders a saved sweep in every format as the sweep printed it; compare takes two sweeps lane by lane', () => {
  const frontier = sweepFrontier(before)
  const file = save('before-sweep.json', renderSweepJson(before, frontier))
  const other = save('after-sweep.json', renderSweepJson(after, sweepFrontier(after)))
  const fewer = makeSweep({ delays: ['p90'], label: 'fewer' })
  const mismatched = save('fewer-sweep.json', renderSweepJson(fewer, sweepFrontier(fewer)))
  const run = save('run.json', renderJson(makeHedgedRun()))
  const html = join(dir, 'sweep.html')
  const cwd = process.cwd()
  const [text, json, csv, page, compared, comparedJson, different, mixed, asRun] = runMainCases(
    [
      ['report', file],
      ['report', file, '-o', 'json'],
      ['report', file, '-o', 'csv'],
      ['report', file, '--html', html],
      ['compare', file, other],
      ['compare', file, other, '-o', 'json'],
      ['compare', file, mismatched],
      ['compare', file, run],
      ['merge', file],
    ].map((args) => ({ args, cwd })),
  )
  assert.equal(text!.code, 0, text!.stderr)
  assert.equal(text!.stdout, renderSweepText(before, frontier))
  assert.match(text!.stdout, /^Hedging sweep before: 3 settings/)
  assert.equal(json!.stdout, readFileSync(file, 'utf8'), '-o json: the file, byte for byte')
  assert.equal(csv!.stdout, renderSweepCsv(before, frontier))
  assert.equal(page!.code, 0, page!.stderr)
  const written = readFileSync(html, 'utf8')
  assert.match(written, /<title>hedgebench sweep before: 3 settings<\/title>/)
  assert.match(written, /<svg data-chart="sweep-frontier-p99"/)

  assert.equal(compared!.code, 0, compared!.stderr)
  assert.match(compared!.stdout, /^Comparing two sweeps lane by lane: after against before/)
  const c = compareSweeps({ name: 'before-sweep.json', sweep: before }, { name: 'after-sweep.json', sweep: after })
  assert.deepEqual(
    c.lanes.map((l) => l.lane),
    ['no hedging', ...DELAYS],
  )
  assert.deepEqual(JSON.parse(comparedJson!.stdout), JSON.parse(JSON.stringify(c)))
  // The plain lane stalled 1 in 20 instead of 1 in 50: its slow requests moved, and the text says which way in words.
  const slow = c.lanes[0]!.comparison.metrics.find((m) => m.metric === 'slow')!
  assert.equal(slow.changes[1]!.verdict, 'worse')
  assert.match(compared!.stdout, /\n {2}no hedging {2}.*slow 40 -> 100, \+60 \(\+150\.0 %\), worse/)

  assert.equal(different!.code, 2)
  assert.match(different!.stderr, /the sweeps tried different settings \(before-sweep\.json: p90, p99, 20ms; fewer-sweep\.json: p90\)/)
  assert.equal(mixed!.code, 2)
  assert.match(mixed!.stderr, /compare takes two saved sweeps/)
  assert.equal(asRun!.code, 2)
  assert.match(asRun!.stderr, /before-sweep\.json: a saved sweep, not a run/)
})
