/**
 * Issue 2 acceptance, reports, through the CLI as a user runs it: the JSON
 * on stdout, the saved JSON and CSV summary, and the per-request CSV of one
 * real run parse back and agree with each other; `report FILE -o json`
 * re-renders the saved file byte for byte; the text report has hey's
 * sections in hey's order, plus ours.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { renderCsvSummary } from '../src/report/csv.js'
import { renderJson } from '../src/results/result-json.js'
import type { PhaseName, RunResult } from '../src/results/run-result.js'
import { parseCsvObjects } from './helpers/csv.js'
import { runMain } from './helpers/main-cases.js'
import { startServer, type CountingServer } from './helpers/servers.js'

/** `hedgebench ARGS` through main() in this file's one driver process: the run and its reports are tested, not the process. */
const hedgebench = (args: string[]): ReturnType<typeof runMain> => runMain(args, { timeoutMs: 60_000 })

let servers: CountingServer[] = []
let dir = ''

before(async () => {
  // Three replicas: 2-5 ms, one request in 40 takes 30 ms (so --slow 20ms counts some), one in 50 answers 503.
  servers = await Promise.all(
    [0, 1, 2].map(() => startServer({ delayMs: (n) => (n % 40 === 7 ? 30 : 2 + (n % 4)), status: (n) => (n % 50 === 3 ? 503 : 200) })),
  )
  dir = await mkdtemp(join(tmpdir(), 'hedgebench-engine-reports-'))
})

after(async () => {
  await Promise.all(servers.map((s) => s.close()))
  await rm(dir, { recursive: true, force: true })
})

test('JSON, saved JSON, CSV summary and per-request CSV of one run agree; report -o json re-renders the saved file', async () => {
  const out = join(dir, 'saved')
  const requestsCsv = join(dir, 'requests.csv')
  const urls = servers.map((s) => s.url)
  const run = await hedgebench([
    ...urls,
    '-n',
    '600',
    '-c',
    '6',
    '--warmup',
    '60',
    '--slow',
    '20ms',
    '--seed',
    '11',
    '-o',
    'json',
    '--out-dir',
    out,
    '--label',
    'agree',
    '--csv-requests',
    requestsCsv,
  ])
  assert.equal(run.code, 0, run.stderr)
  const result = JSON.parse(run.stdout) as RunResult
  assert.equal(result.schema, 'hedgebench/result@2')
  assert.deepEqual(Object.keys(result.phases), ['warmup', 'plain', 'hedged'])

  // The saved files: the JSON is what stdout printed; the CSV is the summary of it.
  const files = (await readdir(out)).sort()
  assert.equal(files.length, 2, files.join(', '))
  assert.match(files[0]!, /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d.*agree\.csv$/)
  assert.match(files[1]!, /agree\.json$/)
  const savedJson = await readFile(join(out, files[1]!), 'utf8')
  const savedCsv = await readFile(join(out, files[0]!), 'utf8')
  assert.equal(savedJson, run.stdout)
  assert.equal(renderJson(result), savedJson)
  assert.equal(renderCsvSummary(result), savedCsv)

  // CSV summary rows parse back to the JSON figures.
  const summary = parseCsvObjects(savedCsv)
  for (const name of ['warmup', 'plain', 'hedged'] as PhaseName[]) {
    const phase = result.phases[name]!
    const row = summary.find((r) => r.scope === 'phase' && r.phase === name)!
    assert.ok(row, `phase row ${name}`)
    assert.equal(Number(row.requests), phase.requests)
    assert.equal(Number(row.attempts), phase.attempts)
    assert.equal(Number(row.ok), phase.ok)
    assert.equal(Number(row.errors), phase.errors)
    assert.equal(Number(row.slow_count), phase.slow.count)
    assert.equal(Number(row.p50_ms), phase.latencyMs.p50)
    assert.equal(Number(row['p99.9_ms']), phase.latencyMs['p99.9'])
    assert.equal(
      row.status_codes,
      Object.entries(phase.statusCodes)
        .map(([k, v]) => `${k}:${v}`)
        .join(' '),
    )
    const replicaRows = summary.filter((r) => r.scope === 'replica' && r.phase === name)
    assert.equal(replicaRows.length, 3)
    for (const [i, r] of replicaRows.entries()) {
      assert.equal(Number(r.attempts), phase.replicas[i]!.attempts)
      assert.equal(Number(r.requests), phase.replicas[i]!.requests)
    }
  }
  const hedgedRow = summary.find((r) => r.scope === 'phase' && r.phase === 'hedged')!
  const h = result.phases.hedged!.hedging!
  assert.equal(Number(hedgedRow.hedges_sent), h.hedgesSent)
  assert.equal(Number(hedgedRow.extra_load_pct), h.extraLoadPct)

  // The per-request CSV: one row per logical request, agreeing with the JSON.
  const rows = parseCsvObjects(await readFile(requestsCsv, 'utf8'))
  for (const name of ['warmup', 'plain', 'hedged'] as PhaseName[]) {
    const phase = result.phases[name]!
    const mine = rows.filter((r) => r.phase === name)
    assert.equal(mine.length, phase.requests, `${name} rows`)
    assert.deepEqual(
      mine.map((r) => Number(r.seq)).sort((a, b) => a - b),
      [...Array(phase.requests).keys()],
      `${name} seq numbers`,
    )
    const statuses: Record<string, number> = {}
    for (const r of mine) if (r.status !== '') statuses[r.status!] = (statuses[r.status!] ?? 0) + 1
    assert.deepEqual(statuses, phase.statusCodes, `${name} statuses`)
    assert.equal(
      mine.filter((r) => r.error !== '').length,
      Object.values(phase.errorKinds).reduce((a, b) => a + b, 0),
    )
    // Slow count: the same threshold over the same latencies (rounded to the microsecond in the CSV).
    assert.equal(mine.filter((r) => Number(r.latency_ms) > phase.slow.thresholdMs).length, phase.slow.count, `${name} slow`)
    // The median of the rows and the HDR p50 agree to the histogram's precision (3 significant digits) plus one rank.
    const sorted = mine.map((r) => Number(r.latency_ms)).sort((a, b) => a - b)
    const lo = sorted[Math.floor(sorted.length / 2) - 2]!
    const hi = sorted[Math.ceil(sorted.length / 2) + 1]!
    assert.ok(phase.latencyMs.p50 >= lo * 0.999 && phase.latencyMs.p50 <= hi * 1.001, `${name} p50 ${phase.latencyMs.p50} vs rows ${lo}..${hi}`)
    // Which replica answered: per-replica wins in the JSON are the rows' replica column.
    if (name !== 'hedged') {
      // The column names the replica by origin (URLs of one run have distinct origins).
      for (const r of phase.replicas) assert.equal(mine.filter((row) => row.replica === new URL(r.url).origin).length, r.requests, `${name} ${r.url}`)
      assert.ok(mine.every((r) => r.attempts === '1' && r.winner === 'original' && r.hedge_fired_ms === ''))
    }
  }
  const hedgedRows = rows.filter((r) => r.phase === 'hedged')
  assert.equal(hedgedRows.filter((r) => r.winner === 'original').length, h.originalWins)
  assert.equal(hedgedRows.filter((r) => /^hedge-\d$/.test(r.winner!)).length, h.hedgeWins)
  assert.equal(hedgedRows.filter((r) => r.hedge_fired_ms !== '').length, Math.round((h.triggerRate * result.phases.hedged!.requests) / 100))
  // Copies launched per request = copies on the wire + copies cancelled before the wire.
  assert.equal(
    hedgedRows.reduce((s, r) => s + Number(r.attempts), 0),
    result.phases.hedged!.attempts + h.unsent,
  )

  // report FILE -o json: the saved file, byte for byte; -o csv: the saved summary.
  const report = await hedgebench(['report', join(out, files[1]!), '-o', 'json'])
  assert.equal(report.code, 0, report.stderr)
  assert.equal(report.stdout, savedJson)
  const reportCsv = await hedgebench(['report', join(out, files[1]!), '-o', 'csv'])
  assert.equal(reportCsv.stdout, savedCsv)
})

test("the text report of a real run has hey's sections in order, plus the tail, the comparison and the replicas", async () => {
  const urls = servers.map((s) => s.url)
  const run = await hedgebench([...urls, '-n', '300', '-c', '6', '--warmup', '50', '--slow', '20ms', '--seed', '12', '--no-save'])
  assert.equal(run.code, 0, run.stderr)
  const text = run.stdout
  // Per phase, hey's order: Summary, Response time histogram, Latency distribution, Status code distribution.
  for (const phase of ['plain', 'hedged']) {
    const start = text.indexOf(`=== ${phase} phase ===`)
    assert.ok(start >= 0, `${phase} phase block`)
    const block = text.slice(start)
    const at = ['Summary:', 'Response time histogram:', 'Latency distribution:', 'Status code distribution:'].map((s) => block.indexOf(`\n${s}\n`))
    assert.ok(
      at.every((i) => i > 0),
      `${phase}: ${at}`,
    )
    assert.deepEqual(
      [...at].sort((a, b) => a - b),
      at,
      `${phase}: sections in hey's order`,
    )
    assert.match(block, /\n {2}\[200\] \d+ responses\n/)
    assert.match(block, /99\.9%/)
    assert.match(block, /99\.99%/)
    assert.match(block, /Slow: +\d+ requests over 20/)
  }
  // Plain passes the 503s on; hedged retries them on another replica at once (non-fatal status).
  const plainBlock = text.slice(text.indexOf('=== plain phase ==='), text.indexOf('=== hedged phase ==='))
  assert.match(plainBlock, /\n {2}\[503\] \d+ responses\n/)
  assert.match(text, /\nHedging:\n/)
  assert.match(text, /\n=== plain vs hedged ===\n/)
  assert.match(text, /\nReplicas:\n/)
  for (const url of urls) assert.ok(text.includes(url.replace(/\/$/, '')), `replica ${url} in the report`)
  assert.match(text, /^Verdict: /m)
  assert.equal(run.stderr.includes('\u001b['), false, 'no spinner or colour outside a TTY')
})
