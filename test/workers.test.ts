/**
 * --workers N: the load spread over worker threads, merged exactly. Against
 * real counting servers on 127.0.0.1: what the client says it sent is what
 * the servers received, every phase has exactly n requests, hedging works and
 * its counters add up, open loop keeps the global rate, an interruption is
 * forwarded to every worker, and the CLI prints a normal report.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '../src/run/run.js'
import type { PhaseResult, RunResult } from '../src/results/run-result.js'
import { runMain } from './helpers/main-cases.js'
import { parseCsvObjects } from './helpers/csv.js'
import { assertHedgedCountsMatch, runHedgedWithCancels } from './helpers/hedged-cancels.js'
import { settle, startServer } from './helpers/servers.js'

function attempts(result: RunResult): number {
  return Object.values(result.phases).reduce((s, p) => s + (p?.attempts ?? 0), 0)
}

/** Counters that must add up in any merged phase. */
function assertConsistent(p: PhaseResult): void {
  assert.equal(p.ok + p.errors, p.requests)
  assert.equal(Object.values(p.statusCodes).reduce((a, b) => a + b, 0) + Object.values(p.errorKinds).reduce((a, b) => a + b, 0), p.requests)
  assert.equal(
    p.replicas.reduce((s, r) => s + r.attempts, 0),
    p.attempts,
    'replica attempts add up to the phase',
  )
  assert.equal(
    p.timeline.reduce((s, t) => s + t.requests, 0),
    p.requests,
    'timeline requests add up to the phase',
  )
  assert.equal(p.generator.cores, 2)
  assert.ok(p.durationMs > 0 && p.rps > 0)
}

test('--workers 2, plain with warm-up, c=40: n requests per phase, client attempts == server received, exactly', async (t) => {
  const server = await startServer({ delayMs: (n) => n % 5 })
  t.after(() => server.close())
  const result = await run({ urls: [server.url], concurrency: 40, requests: 3001, warmup: 201, mode: 'plain', seed: 1, workers: 2 })
  const { warmup, plain } = result.phases
  assert.equal(result.partial, false)
  assert.equal(warmup!.requests, 201)
  assert.equal(plain!.requests, 3001)
  assert.equal(plain!.attempts, 3001)
  assert.equal(plain!.ok, 3001)
  assertConsistent(warmup!)
  assertConsistent(plain!)
  assert.equal(await settle([server], 3202), attempts(result))
  assert.equal(server.completed, 3202)
  // Each worker has its own agent and 20 of the 40 slots: the warm-up opens
  // one keep-alive connection per slot, the plain phase reuses them, and the
  // merged count is what the server accepted (less the run's one
  // reachability probe).
  assert.deepEqual([warmup!.connectionsOpened, plain!.connectionsOpened], [40, 0])
  assert.equal(server.accepted, 40 + 1)
})

test('--workers 2, hedged on two replicas, hedges and cancels: merged hedging counters add up, attempts == servers received', async (t) => {
  const { hedged, servers } = await runHedgedWithCancels(t, 2)
  assertConsistent(hedged)
  await assertHedgedCountsMatch(hedged, servers)
})

test('--workers 2, both phases with a measured delay and the server cross-check; interleaved too', async (t) => {
  const server = await startServer({ delayMs: (n) => (n % 20 === 0 ? 15 : 1) })
  t.after(() => server.close())
  const result = await run({ urls: [server.url], concurrency: 10, requests: 600, warmup: 100, mode: 'both', seed: 5, workers: 2 })
  assert.equal(result.phases.plain!.requests, 600)
  assert.equal(result.phases.hedged!.requests, 600)
  assert.match(result.phases.hedged!.hedging!.delaySource, /^p95 of the last 50 of 100 warm-up requests = /)
  for (const p of Object.values(result.phases)) assertConsistent(p!)
  assert.equal(await settle([server], attempts(result)), attempts(result))

  const before = server.received
  const mixed = await run({ urls: [server.url], concurrency: 10, requests: 300, warmup: 50, mode: 'both', schedule: 'interleaved', seed: 6, workers: 2 })
  const { plain, hedged } = mixed.phases
  assert.equal(plain!.requests + hedged!.requests, 600, 'the interleaved window has 2n requests')
  assert.ok(plain!.requests > 200 && hedged!.requests > 200, `${plain!.requests} / ${hedged!.requests}`)
  assert.equal((await settle([server], before + attempts(mixed))) - before, attempts(mixed))
})

test('--workers 2, open loop -q 400: n requests on the global schedule (the rate holds), service time reported', async (t) => {
  const server = await startServer({ delayMs: 1 })
  t.after(() => server.close())
  const result = await run({ urls: [server.url], concurrency: 20, requests: 400, rate: 400, warmup: 0, mode: 'plain', seed: 7, workers: 2 })
  const plain = result.phases.plain!
  assert.equal(plain.requests, 400)
  assertConsistent(plain)
  // The last of 400 intended starts at 400/s is at 997.5 ms: not earlier, and not much later on an idle target.
  assert.ok(plain.durationMs >= 990 && plain.durationMs < 3000, `duration ${plain.durationMs} ms`)
  assert.ok(plain.serviceTime, 'service time is reported in open loop')
  assert.equal(await settle([server], plain.attempts), plain.attempts)
})

test('--workers 2: an interruption is forwarded to every worker; the run resolves partial, counts still exact', async (t) => {
  const server = await startServer({ delayMs: 20 })
  t.after(() => server.close())
  const stop = new AbortController()
  // Stop once the load is flowing (bounded: at the latest after 10 s).
  let stoppedAt = 0
  const poll = setInterval(() => {
    if (server.received < 40 && performance.now() - started < 10_000) return
    clearInterval(poll)
    stoppedAt = performance.now()
    stop.abort()
  }, 5)
  t.after(() => clearInterval(poll))
  const started = performance.now()
  const result = await run({ urls: [server.url], concurrency: 8, durationMs: 60_000, warmup: 0, mode: 'plain', seed: 8, workers: 2, signal: stop.signal })
  const afterStop = performance.now() - stoppedAt
  assert.ok(stoppedAt > 0 && afterStop < 5000, `resolved ${Math.round(afterStop)} ms after the stop`)
  assert.equal(result.partial, true)
  assert.equal(result.stoppedIn, 'plain')
  const plain = result.phases.plain!
  assert.ok(plain.requests >= 40, `requests: ${plain.requests}`)
  assert.equal(plain.ok, plain.requests, 'in-flight requests finished within the grace')
  assert.equal(await settle([server], plain.attempts), plain.attempts)
})

test('CLI: --workers 2 prints a normal report, saves it, and writes one CSV row per request', async (t) => {
  const server = await startServer({ delayMs: 1 })
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-workers-'))
  t.after(async () => {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  })
  const cli = await runMain(
    [server.url, '--workers', '2', '-n', '400', '-c', '8', '--warmup', '50', '--seed', '9', '--out-dir', 'results', '--csv-requests', 'req.csv'],
    {
      cwd: dir,
      timeoutMs: 30_000,
    },
  )
  assert.equal(cli.timedOut, false)
  assert.equal(cli.code, 0, cli.stderr)
  assert.match(cli.stdout, /^Summary:$/m)
  const files = (await readdir(join(dir, 'results'))).filter((f) => f.endsWith('.json'))
  assert.equal(files.length, 1)
  const saved = JSON.parse(await readFile(join(dir, 'results', files[0]!), 'utf8')) as RunResult
  assert.equal(saved.config.workers, 2)
  assert.equal(saved.phases.plain!.requests, 400)
  assert.equal(saved.phases.hedged!.requests, 400)
  assert.equal(saved.phases.warmup!.requests, 50)
  assert.equal(saved.phases.plain!.generator.cores, 2)
  const rows = parseCsvObjects(await readFile(join(dir, 'req.csv'), 'utf8'))
  assert.equal(rows.length, 850, 'one row per logical request')
  for (const phase of ['warmup', 'plain', 'hedged']) {
    const seqs = rows.filter((r) => r.phase === phase).map((r) => Number(r.seq))
    assert.deepEqual(
      [...new Set(seqs)].sort((a, b) => a - b),
      [...Array(seqs.length).keys()],
      `${phase}: sequence numbers 0..n-1, once each`,
    )
  }
  assert.equal(
    await settle([server], 850),
    Object.values(saved.phases).reduce((s, p) => s + p!.attempts, 0),
  )
})
