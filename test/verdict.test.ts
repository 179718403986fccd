/**
 * The plain vs hedged verdict (trust issue #12 items 9, 10, 12): errors lead
 * when a phase is mostly errors and no latency verdict is made from them;
 * every percentile worse beyond noise is named; one extra-load figure.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { formatMs } from '../src/core/duration.js'
import { seededRandom } from '../src/core/random.js'
import { causes, hedgeVerdict } from '../src/report/verdict.js'
import { renderText } from '../src/report/text.js'
import { extraLoadPct } from '../src/results/extra-load.js'
import type { RunResult } from '../src/results/run-result.js'
import { makeHedgedRun, makeHedgingStats, makePhase } from './helpers/result-fixture.js'
import { killAllChildren, runCli } from './helpers/cli.js'

const servers: Server[] = []
after(async () => {
  killAllChildren()
  for (const s of servers) s.closeAllConnections()
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))))
})

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler)
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
}

async function verdictOfRun(url: string): Promise<{ lines: string[]; result: RunResult }> {
  const r = await runCli([url, '-n', '40', '-c', '2', '--warmup', '10', '--mode', 'both', '--hedge-delay', '5ms', '--no-save', '-o', 'json'], { timeoutMs: 60_000 })
  assert.equal(r.code, 0, r.stderr)
  const result = JSON.parse(r.stdout) as RunResult
  const text = renderText(result)
  const at = text.split('\n').findIndex((l) => l.startsWith('Verdict: '))
  assert.ok(at >= 0, text)
  return { lines: text.split('\n').slice(at).filter((l) => l.startsWith('Verdict: ') || l.startsWith('  ! ')), result }
}

test('a target that always answers 500: the verdict leads with the failures and makes no latency verdict', async () => {
  const url = await listen((req, res) => {
    req.resume()
    res.writeHead(500).end('no\n')
  })
  const { lines, result } = await verdictOfRun(url)
  const plain = result.phases.plain!
  const hedged = result.phases.hedged!
  assert.equal(plain.errors, plain.requests)
  assert.equal(
    lines[0],
    `Verdict: plain: all ${plain.requests} requests failed: 500 Internal Server Error; hedged: all ${hedged.requests} requests failed: 500 Internal Server Error; no latency verdict from failures`,
  )
  assert.doesNotMatch(lines.join('\n'), /p99\.9 .* -> /)
})

test('a target that closes every connection: the failures lead, by error kind', async () => {
  const url = await listen((req) => req.socket.destroy())
  const { lines, result } = await verdictOfRun(url)
  const kinds = Object.keys(result.phases.hedged!.errorKinds)
  assert.ok(kinds.length > 0, 'transport errors counted by kind')
  assert.match(lines[0]!, new RegExp(`^Verdict: plain: all \\d+ requests failed: .*${kinds[0]}.*; hedged: all \\d+ requests failed: .*; no latency verdict from failures$`))
})

/** Base 5-15 ms; `share` of requests at `tailMs` instead (every 1/share-th, so the count is exact). */
function latencies(n: number, seed: number, tails: Array<[every: number, ms: number]>): number[] {
  const next = seededRandom(seed)
  return Array.from({ length: n }, (_, i) => {
    const tail = tails.find(([every]) => i % every === every - 1)
    return tail ? tail[1] : 5 + 10 * next()
  })
}

test('a better p99.9 does not hide a worse p99: every percentile worse beyond noise is named', () => {
  // Plain: 1 in 50 at 18.6 ms, 1 in 200 stalled 1 s. Hedged: the stalls are gone but 1 in 40 waits 30 ms.
  // At n = 4000 p99 is rank 3960: plain has 20 stalls + 80 at 18.6 ms above the base, so p99 = 18.6 ms;
  // hedged has 100 at 30 ms, so p99 = 30 ms. Their intervals (ranks 3947-3974) stay inside those groups.
  const plain = makePhase('plain', latencies(4000, 1, [[200, 1000], [50, 18.6]]))
  const hedged = makePhase('hedged', latencies(4000, 2, [[40, 30]]), { attempts: 4140, hedging: makeHedgingStats() })
  const v = hedgeVerdict(plain, hedged)
  assert.match(v.headline, /^p99\.9 1000\.\d ms -> 30\.0 ms \(-97\.0%\) for \+3\.5% requests$/)
  assert.equal(v.tone, 'bad')
  assert.equal(v.details.length, 1, v.details.join('\n'))
  assert.match(v.details[0]!, /^worse beyond noise: p99 18\.\d ms -> 30\.0 ms \(\+6\d\.\d%\)$/)
  assert.ok(v.details[0]!.includes(`p99 ${formatMs(plain.latencyMs.p99)} -> ${formatMs(hedged.latencyMs.p99)}`))
  // Without the regression, nothing is named and the tone is good.
  const clean = makePhase('hedged', latencies(4000, 2, []), { attempts: 4140, hedging: makeHedgingStats() })
  assert.deepEqual(hedgeVerdict(plain, clean), { tone: 'good', headline: hedgeVerdict(plain, clean).headline, details: [] })
})

test('errors that rise beyond noise between the phases are part of the verdict', () => {
  const plain = makePhase('plain', latencies(2000, 3, []))
  const hedged = makePhase('hedged', latencies(2000, 4, []), { ok: 1900, errors: 100, statusCodes: { '200': 1900, '503': 100 }, hedging: makeHedgingStats() })
  const v = hedgeVerdict(plain, hedged)
  assert.equal(v.tone, 'bad')
  // 0 % -> 5 %: the two-proportion interval 5 % ± 1.96 sqrt(0.05 * 0.95 / 2000) = [4.0, 6.0] % excludes 0.
  assert.deepEqual(v.details, ['errors 0.0% -> 5.0% of requests, worse beyond noise (hedged: 503 Service Unavailable)'])
})

test('one extra load: the hedging section, the table and the verdict agree when the phases differ in size (-z)', () => {
  // -z: 3000 plain requests, 2000 hedged with 2062 attempts. The change in attempts (-31 %) is not the extra load (+3.1 %).
  const run = makeHedgedRun()
  run.phases.plain = makePhase('plain', latencies(3000, 5, []))
  // 62 hedges reached the wire (extra load = hedges sent / requests, results/extra-load.ts).
  run.phases.hedged = makePhase('hedged', latencies(2000, 6, []), { attempts: 2062, hedging: makeHedgingStats({ hedgesSent: 62, extraLoadPct: 2.1 }) })
  assert.equal(extraLoadPct(run.phases.hedged), 3.1)
  const text = renderText(run)
  assert.match(text, /^\s+Hedges sent:\s+\d+ \(\+3\.1% extra load\)/m)
  assert.match(text, /^\s+extra load\s+\+0\.0%\s+\+3\.1%\s*$/m)
  assert.match(text, /^Verdict: .* for \+3\.1% requests/m)
  assert.doesNotMatch(text, /\+2\.1% (extra load|requests)/)
})

test('the HTML report prints the same verdict, errors first', async () => {
  const { renderHtml } = await import('../src/report/html.js')
  const run = makeHedgedRun()
  const n = run.phases.hedged!.requests
  run.phases.hedged = { ...run.phases.hedged!, ok: 0, errors: n, statusCodes: { '503': n } }
  const html = renderHtml([run])
  assert.match(html, new RegExp(`<p class="verdict bad">hedged: all ${n} requests failed: 503 Service Unavailable; no latency verdict from failures</p>`))
})

test('a gRPC phase that failed names its codes (they are below 100, not HTTP error statuses)', () => {
  const phase = makePhase('hedged', [3, 4, 5, 6, 7], { statusCodes: { 0: 1, 12: 3, 14: 1 }, ok: 1, errors: 4 })
  assert.equal(causes(phase), '12 UNIMPLEMENTED x3, 14 UNAVAILABLE x1')
  assert.equal(causes(makePhase('hedged', [3], { statusCodes: { 12: 1 }, ok: 0, errors: 1 })), '12 UNIMPLEMENTED')
})
