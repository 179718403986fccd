/**
 * Issue 48's leftover: in a mix (--targets), an ejection names the targets
 * whose failures caused it, each with its count, in JSON, text, CSV and
 * HTML, and a merge of shards keeps them; outside a mix the event has none.
 * A phase's targets share one outlier detection (thread-windows.ts), as
 * Envoy's is per host whatever the route: a replica taken out by one
 * target's failures is out for every target.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { run } from '../src/run/run.js'
import type { RunOptions } from '../src/run/run-options.js'
import type { EjectionEvent, RunResult } from '../src/results/run-result.js'
import { renderText } from '../src/report/text.js'
import { renderHtml } from '../src/report/html.js'
import { renderCsvSummary } from '../src/report/csv.js'
import { parseResult, renderJson } from '../src/results/result-json.js'
import { mergeResults } from '../src/stats/result-merge.js'
import { parseProfile } from '../src/sim/profile.js'
import { startTarget, type Target } from '../src/sim/target.js'
import { parseCsvObjects } from './helpers/csv.js'

const FAILURES_TO_EJECT = 5
// Long enough that nothing is readmitted in these short phases: the counts below then hold exactly.
const EJECT = { consecutiveFailures: FAILURES_TO_EJECT, baseEjectionMs: 60_000 }
const CAUSE = `${FAILURES_TO_EJECT} failures in a row (last: HTTP/1.1 503)`

const servers: Server[] = []
/** What each replica received, in order ("POST /c"). */
const received: string[][] = [[], []]
let urls: string[] = []
before(async () => {
  // Replica 1 answers POST /c with 503, everything else with 200; replica 0 answers everything.
  for (const index of [0, 1]) {
    const server = createServer((req, res) => {
      req.resume()
      received[index]!.push(`${req.method} ${req.url}`)
      res.writeHead(index === 1 && req.method === 'POST' && req.url === '/c' ? 503 : 200, { 'content-type': 'text/plain' })
      res.end('x')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    servers.push(server)
  }
  urls = servers.map((s) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`)
})
after(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))))
})

/**
 * GET /a (always fine) and POST /c (503 on replica 1), one request at a
 * time: nothing is in flight beside the failures that count. A GET /a
 * answered by replica 1 breaks POST /c's run of failures there, so POST /c
 * is drawn 9 times in 10. `extra` changes any of it.
 */
function mixRun(extra: Partial<RunOptions> = {}): Promise<RunResult> {
  return run({
    urls,
    targets: [
      { method: 'GET', path: '/a' },
      { method: 'POST', path: '/c', weight: 9 },
    ],
    mode: 'plain',
    requests: 120,
    concurrency: 1,
    warmup: 0,
    eject: EJECT,
    seed: 3,
    ...extra,
  })
}

function only(events: EjectionEvent[] | undefined): EjectionEvent {
  assert.equal(events?.length, 1, JSON.stringify(events))
  return events![0]!
}

let mix: RunResult | undefined

test('a mix where POST /c fails on replica 1 and GET /a never does: the one ejection names POST /c alone, and replica 1 is out for both', {
  timeout: 60_000,
}, async () => {
  for (const r of received) r.length = 0
  const result = await mixRun()
  mix = result
  const plain = result.phases.plain!
  const event = only(plain.ejections)
  assert.deepEqual(
    { ...event, atMs: 0 },
    { url: urls[1], atMs: 0, forMs: 60_000, readmittedAtMs: null, cause: CAUSE, targets: [{ target: 'POST /c', failures: FAILURES_TO_EJECT }] },
  )
  assert.deepEqual(
    plain.replicas.map((r) => r.ejections),
    [0, 1],
  )
  // Replica 1's last requests are the run that ejected it; after it, neither target sent it any.
  assert.equal(received[1]!.length, plain.replicas[1]!.attempts)
  assert.deepEqual(received[1]!.slice(-FAILURES_TO_EJECT - 1), ['GET /a', ...Array(FAILURES_TO_EJECT).fill('POST /c')])
  // The event is in the phase of the target whose failure completed the run.
  const [a, c] = result.targets!.map((t) => t.phases.plain!)
  // GET /a's round-robin would send replica 1 half its requests: its requests after the ejection went to replica 0.
  assert.ok(a!.replicas[1]!.attempts < Math.floor(a!.requests / 2), `${a!.replicas[1]!.attempts} of ${a!.requests} GET /a on replica 1`)
  assert.deepEqual(a!.ejections, [], 'GET /a ejected nothing')
  assert.deepEqual(only(c!.ejections), event, "POST /c's own phase holds the event")
})

test('outside a mix the ejection has no target, and the reports say the cause alone', { timeout: 60_000 }, async () => {
  const result = await run({
    urls: urls.map((u) => `${u}/c`),
    method: 'POST',
    mode: 'plain',
    requests: 30,
    concurrency: 1,
    warmup: 0,
    eject: EJECT,
    seed: 3,
  })
  const event = only(result.phases.plain!.ejections)
  assert.equal('targets' in event, false, JSON.stringify(event))
  assert.equal(event.cause, CAUSE)
  assert.match(renderText(result), new RegExp(`ejected at .+ for 60\\.0 s \\(${escapeRe(CAUSE)}\\); still out at the end`))
  assert.ok(renderHtml(result).includes(`>${CAUSE}</td>`))
  assert.equal('targets' in only(parseResult(renderJson(result), 'r.json').phases.plain!.ejections), false)
})

test("a simulated replica failing every path: one ejection, on both targets' failures in a row, each named with its count", { timeout: 60_000 }, async () => {
  const sim = await failingReplicaTarget()
  try {
    const result = await twoPathMix(sim.urls)
    const plain = result.phases.plain!
    const event = only(plain.ejections)
    assert.equal(event.url, sim.urls[1])
    assert.equal(event.cause, CAUSE)
    // Every request to replica 1 fails, whichever target drew it: the first 5 eject it for both (the seed drew both among them).
    assert.equal(plain.errors, FAILURES_TO_EJECT)
    const counts = event.targets!
    assert.deepEqual(counts.map((t) => t.target).sort(), ['GET /a', 'GET /b'])
    assert.equal(sumOfFailures(event), FAILURES_TO_EJECT)
    assert.ok(counts[0]!.failures >= counts[1]!.failures, 'most first')
    for (const t of result.targets!) assert.equal(t.phases.plain!.errors, counts.find((c) => c.target === t.name)!.failures)
    const named = `${counts.map((t) => `${t.failures} on ${t.target}`).join(', ')}: ${CAUSE}`
    assert.ok(renderText(result).includes(`(${named}); still out at the end`), named)
    assert.ok(renderHtml(result).includes(`>${named}</td>`), named)
  } finally {
    await sim.close()
  }
})

test("--workers 2: each thread's targets share that thread's health (a thread ejects on its own evidence): one ejection each", {
  timeout: 60_000,
}, async () => {
  const sim = await failingReplicaTarget()
  try {
    const result = await twoPathMix(sim.urls, { workers: 2, concurrency: 2 })
    const events = result.phases.plain!.ejections!
    assert.equal(events.length, 2, JSON.stringify(events))
    for (const e of events) assert.equal(sumOfFailures(e), FAILURES_TO_EJECT)
    assert.equal(result.phases.plain!.errors, 2 * FAILURES_TO_EJECT)
  } finally {
    await sim.close()
  }
})

/** A simulated target whose replica 1 answers 503 to everything. */
async function failingReplicaTarget(): Promise<Target> {
  const profile = parseProfile(
    {
      name: 'one-failing',
      description: 'replica 1 answers 503 to everything',
      replicas: 2,
      model: { base: { type: 'uniform', min: 1, max: 2 }, overrides: [{ index: 1, errors: { rate: 1, status: 503 } }] },
    },
    'one-failing',
  )
  return startTarget({ profile, seed: 4 })
}

/** GET /a and GET /b, drawn alike, on `urls`. */
function twoPathMix(urls: string[], extra: Partial<RunOptions> = {}): Promise<RunResult> {
  return mixRun({
    urls,
    targets: [
      { method: 'GET', path: '/a' },
      { method: 'GET', path: '/b' },
    ],
    requests: 80,
    ...extra,
  })
}

function sumOfFailures(e: EjectionEvent): number {
  return (e.targets ?? []).reduce((n, t) => n + t.failures, 0)
}

test("the mix's ejection in every format: text and HTML name POST /c before the cause (the chart marks: html.test.ts), CSV counts it on POST /c's row, JSON keeps it", () => {
  const result = mix!
  const named = `POST /c: ${CAUSE}`
  assert.match(renderText(result), new RegExp(`${escapeRe(urls[1]!)} ejected at .+ for 60\\.0 s \\(${escapeRe(named)}\\); still out at the end`))
  const html = renderHtml(result)
  assert.ok(html.includes(`>${named}</td>`), 'the ejections table (html.test.ts: the chart marks)')
  const rows = parseCsvObjects(renderCsvSummary(result)).filter((r) => r.scope === 'target')
  assert.deepEqual(
    rows.map((r) => [r.request, r.phase, r.ejections]),
    [
      ['GET /a', 'plain', '0'],
      ['POST /c', 'plain', '1'],
    ],
  )
  const back = parseResult(renderJson(result), 'mix.json')
  assert.deepEqual(only(back.phases.plain!.ejections).targets, [{ target: 'POST /c', failures: FAILURES_TO_EJECT }])
  assert.deepEqual(only(back.targets![1]!.phases.plain!.ejections).targets, [{ target: 'POST /c', failures: FAILURES_TO_EJECT }])
})

test('a merge of two shards of the mix keeps each ejection with its targets', { timeout: 60_000 }, async () => {
  const shard = (index: number) => mixRun({ runId: 'eject-mix', shard: { index, count: 2 }, seed: 3 + index })
  const parts = [await shard(0), await shard(1)]
  const merged = mergeResults(parts.map((result, i) => ({ result, source: `shard${i}.json` })))
  assert.deepEqual(
    merged.phases.plain!.ejections!.map((e) => [e.url, e.targets]),
    [
      [urls[1], [{ target: 'POST /c', failures: FAILURES_TO_EJECT }]],
      [urls[1], [{ target: 'POST /c', failures: FAILURES_TO_EJECT }]],
    ],
  )
  const c = merged.targets!.find((t) => t.name === 'POST /c')!.phases.plain!
  assert.deepEqual(
    c.ejections!.map((e) => e.targets?.[0]?.target),
    ['POST /c', 'POST /c'],
  )
  assert.deepEqual(merged.targets!.find((t) => t.name === 'GET /a')!.phases.plain!.ejections, [])
})

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
