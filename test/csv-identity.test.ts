/**
 * The CSV summary says which run each row belongs to and puts every share
 * in percent (trust issue #12 item 16; item 13: a partial run says so).
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { renderCsvSummary } from '../src/report/csv.js'
import { parseCsvObjects } from './helpers/csv.js'
import { makeHedgedRun, makePhase, makeRunResult } from './helpers/result-fixture.js'
import { startServer, type CountingServer } from './helpers/servers.js'
import { runMain } from './helpers/main-cases.js'

let server: CountingServer | null = null
after(async () => {
  await server?.close()
})

test('every row carries the run label, start time, target and partial flag', () => {
  const run = makeHedgedRun({ label: 'nightly, "east"', startedAt: '2026-11-30T10:00:00.000Z', partial: true, stoppedIn: 'hedged' })
  const rows = parseCsvObjects(renderCsvSummary(run))
  assert.ok(rows.length > 3)
  for (const row of rows) {
    assert.equal(row.run_label, 'nightly, "east"')
    assert.equal(row.started_at, '2026-11-30T10:00:00.000Z')
    assert.equal(row.target, run.config.urls.join(' '))
    assert.equal(row.partial, 'true')
  }
})

test('every share is a percentage named _pct: errors, trigger rate, extra load', () => {
  // 400 requests, 10 failed: 2.5 %; hedged: 4000 requests, 140 hedges sent, 4140 attempts: +3.5 %; trigger rate 3.8 % (fixture).
  const plain = makePhase(
    'plain',
    Array.from({ length: 400 }, () => 10),
    { ok: 390, errors: 10, statusCodes: { '200': 390, '503': 10 } },
  )
  const run = makeHedgedRun()
  run.phases.plain = plain
  run.phases.hedged = { ...run.phases.hedged!, attempts: 4140, hedging: { ...run.phases.hedged!.hedging!, hedgesSent: 140 } }
  const rows = parseCsvObjects(renderCsvSummary(run))
  const row = (phase: string) => rows.find((r) => r.scope === 'phase' && r.phase === phase)!
  assert.equal(row('plain').error_rate_pct, '2.5')
  assert.equal(row('hedged').extra_load_pct, '3.5')
  assert.equal(row('hedged').trigger_rate_pct, '3.8')
  assert.equal('error_rate' in row('plain'), false, 'no fraction column left')
})

test('-o csv of a real run names the run and its target', async () => {
  server = await startServer({ delayMs: 1 })
  const r = await runMain([server.url, '-n', '20', '-c', '2', '--warmup', '5', '--mode', 'plain', '--label', 'csv-id', '--no-save', '-o', 'csv'], {
    timeoutMs: 60_000,
  })
  assert.equal(r.code, 0, r.stderr)
  const rows = parseCsvObjects(r.stdout)
  const plain = rows.find((x) => x.scope === 'phase' && x.phase === 'plain')
  assert.ok(plain, r.stdout)
  assert.equal(plain.run_label, 'csv-id')
  assert.equal(plain.target, server.url)
  assert.equal(plain.partial, 'false')
  assert.ok(!Number.isNaN(Date.parse(plain.started_at!)), plain.started_at)
  assert.equal(plain.error_rate_pct, '0')
})

test('a run without hedging leaves the hedging shares empty, not 0', () => {
  const rows = parseCsvObjects(renderCsvSummary(makeRunResult()))
  assert.equal(rows[0]!.trigger_rate_pct, '')
  assert.equal(rows[0]!.extra_load_pct, '')
})
