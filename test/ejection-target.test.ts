/**
 * Issue 48's leftover: in a mix (--targets), an ejection names the target
 * whose failures caused it, in JSON, text, CSV and HTML, and a merge of
 * shards keeps it; outside a mix the event has no target. Each target's
 * lane ejects on its own failures (lane.ts): a replica that fails one path
 * only is taken out for that path's requests, not the healthy path's.
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
import { startTarget } from '../src/sim/target.js'
import { parseCsvObjects } from './helpers/csv.js'

const FAILURES_TO_EJECT = 5
// Long enough that nothing is readmitted in these short phases: the counts below then hold exactly.
const EJECT = { consecutiveFailures: FAILURES_TO_EJECT, baseEjectionMs: 60_000 }
const CAUSE = `${FAILURES_TO_EJECT} failures in a row (last: HTTP/1.1 503)`

const servers: Server[] = []
let urls: string[] = []
before(async () => {
  // Replica 1 answers POST /c with 503, everything else with 200; replica 0 answers everything.
  for (const index of [0, 1]) {
    const server = createServer((req, res) => {
      req.resume()
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

/** GET /a (always fine) and POST /c (503 on replica 1), one request at a time: nothing is in flight beside the failures that count; `extra` changes any of it. */
function mixRun(extra: Partial<RunOptions> = {}): Promise<RunResult> {
  return run({
    urls,
    targets: [
      { method: 'GET', path: '/a' },
      { method: 'POST', path: '/c' },
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

test('a mix where POST /c fails on replica 1 and GET /a never does: the one ejection names POST /c, and only its lane loses the replica', {
  timeout: 60_000,
}, async () => {
  const result = await mixRun()
  mix = result
  const plain = result.phases.plain!
  const event = only(plain.ejections)
  assert.deepEqual({ ...event, atMs: 0 }, { url: urls[1], atMs: 0, forMs: 60_000, readmittedAtMs: null, cause: CAUSE, target: 'POST /c' })
  assert.deepEqual(
    plain.replicas.map((r) => r.ejections),
    [0, 1],
  )
  // POST /c's requests alternate between the replicas until the 5th failure on replica 1, then go to replica 0 only.
  assert.equal(plain.errors, FAILURES_TO_EJECT)
  const [a, c] = result.targets!.map((t) => t.phases.plain!)
  assert.deepEqual(a!.ejections, [], 'GET /a ejected nothing')
  assert.deepEqual(only(c!.ejections), event, "POST /c's own phase holds the event")
  // GET /a's lane kept replica 1 in rotation: round-robin sent it half of GET /a's requests.
  assert.equal(a!.replicas[1]!.attempts, Math.floor(a!.requests / 2))
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
  assert.equal('target' in event, false, JSON.stringify(event))
  assert.equal(event.cause, CAUSE)
  assert.match(renderText(result), new RegExp(`ejected at .+ for 60\\.0 s \\(${escapeRe(CAUSE)}\\); still out at the end`))
  assert.ok(renderHtml(result).includes(`>${CAUSE}</td>`))
  assert.equal('target' in only(parseResult(renderJson(result), 'r.json').phases.plain!.ejections), false)
})

test('a simulated replica failing every path: each target ejects it on its own failures, each event naming its target', { timeout: 60_000 }, async () => {
  const profile = parseProfile(
    {
      name: 'one-failing',
      description: 'replica 1 answers 503 to everything',
      replicas: 2,
      model: { base: { type: 'uniform', min: 1, max: 2 }, overrides: [{ index: 1, errors: { rate: 1, status: 503 } }] },
    },
    'one-failing',
  )
  const sim = await startTarget({ profile, seed: 4 })
  try {
    const result = await mixRun({
      urls: sim.urls,
      targets: [
        { method: 'GET', path: '/a' },
        { method: 'GET', path: '/b' },
      ],
      requests: 80,
    })
    const events = result.phases.plain!.ejections!
    assert.deepEqual(events.map((e) => [e.url, e.target, e.cause]).sort(), [
      [sim.urls[1], 'GET /a', CAUSE],
      [sim.urls[1], 'GET /b', CAUSE],
    ])
    assert.equal(result.phases.plain!.errors, 2 * FAILURES_TO_EJECT)
    for (const t of result.targets!) assert.equal(only(t.phases.plain!.ejections).target, t.name)
  } finally {
    await sim.close()
  }
})

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
  assert.equal(only(back.phases.plain!.ejections).target, 'POST /c')
  assert.equal(only(back.targets![1]!.phases.plain!.ejections).target, 'POST /c')
})

test('a merge of two shards of the mix keeps each ejection with its target', { timeout: 60_000 }, async () => {
  const shard = (index: number) => mixRun({ runId: 'eject-mix', shard: { index, count: 2 }, seed: 3 + index })
  const parts = [await shard(0), await shard(1)]
  const merged = mergeResults(parts.map((result, i) => ({ result, source: `shard${i}.json` })))
  assert.deepEqual(
    merged.phases.plain!.ejections!.map((e) => [e.url, e.target]),
    [
      [urls[1], 'POST /c'],
      [urls[1], 'POST /c'],
    ],
  )
  const c = merged.targets!.find((t) => t.name === 'POST /c')!.phases.plain!
  assert.deepEqual(
    c.ejections!.map((e) => e.target),
    ['POST /c', 'POST /c'],
  )
  assert.deepEqual(merged.targets!.find((t) => t.name === 'GET /a')!.phases.plain!.ejections, [])
})

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}
