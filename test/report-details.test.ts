/**
 * Smaller report defects of trust issue #12 item 17: histogram labels that
 * all read the same, a warm-up p95 that differs from the delay's without a
 * word, and a delay measured from a handful of requests without a warning.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { bucketLabels, histogramBuckets } from '../src/report/histogram-bars.js'
import { renderText } from '../src/report/text.js'
import { askedRate } from '../src/report/asked-rate.js'
import { renderHtml } from '../src/report/html.js'
import type { RunResult } from '../src/results/run-result.js'
import { latencyOf, makePhase, makeRunResult } from './helpers/result-fixture.js'
import { startServer, type CountingServer } from './helpers/servers.js'
import { runMain } from './helpers/main-cases.js'

let server: CountingServer | null = null
after(async () => {
  await server?.close()
})

test('histogram labels differ when the spread is small: 1.450-1.462 s', () => {
  const latencies = Array.from({ length: 100 }, (_, i) => 1450 + (12 * i) / 99)
  const { histogram, latencyMs } = latencyOf(latencies)
  const labels = bucketLabels(histogramBuckets(histogram, latencyMs.min, latencyMs.max)!)
  assert.equal(new Set(labels).size, labels.length, labels.join(' | '))
  // One bucket is (max - min) / 10 ≈ 1.2 ms = 0.0012 s: three decimals of a second.
  assert.match(labels[0]!, /^1\.45\d s$/)
  assert.match(labels[10]!, /^1\.46\d s$/)
  // A wide spread keeps the usual precision.
  assert.deepEqual(
    bucketLabels([
      { markMs: 5, count: 0 },
      { markMs: 105, count: 0 },
    ]),
    ['5.0 ms', '105.0 ms'],
  )
  assert.deepEqual(
    bucketLabels([
      { markMs: 0.2, count: 0 },
      { markMs: 0.9, count: 0 },
    ]),
    ['200 µs', '900 µs'],
  )
})

test('requests that all took the same time make one histogram row, not eleven equal labels', () => {
  const { histogram, latencyMs } = latencyOf([12, 12, 12])
  const buckets = histogramBuckets(histogram, latencyMs.min, latencyMs.max)!
  assert.deepEqual(
    buckets.map((b) => b.count),
    [3],
  )
  // A spread keeps hey's eleven marks, every request counted once.
  const spread = latencyOf([10, 12, 14])
  const eleven = histogramBuckets(spread.histogram, spread.latencyMs.min, spread.latencyMs.max)!
  assert.equal(eleven.length, 11)
  assert.equal(
    eleven.reduce((sum, b) => sum + b.count, 0),
    3,
  )
})

test('--warmup 10: the delay from 5 requests is warned about, with how many are needed, and the warm-up line says why its p95 differs', async () => {
  server = await startServer({ delayMs: 1 })
  const r = await runMain([server.url, '-n', '20', '-c', '2', '--warmup', '10', '--no-save', '-o', 'json'], { timeoutMs: 60_000 })
  assert.equal(r.code, 0, r.stderr)
  const result = JSON.parse(r.stdout) as RunResult
  // p95 needs 72 requests (0.95^72 <= 2.5 %, see noise.ts); the delay is measured on the last 5 of 10.
  assert.ok(
    result.warnings.includes(
      'the hedge delay is the p95 of only 5 requests, too few to place it (a p95 needs at least 72); use --warmup 144 or more (the delay is measured on the second half)',
    ),
    result.warnings.join('\n'),
  )
  // Said in the result as figures, so the warm-up line needs no parsing of the delay's wording.
  assert.deepEqual(result.phases.hedged!.hedging!.warmupBasis, { requests: 5, of: 10 })
  const text = renderText(result)
  assert.match(text, /^Warm-up \(excluded from statistics\): 10 requests .* p95 \S+ \S+ \(all of them\)/m)
  assert.match(
    text,
    /^ {2}the hedge delay is not this p95: it is the p95 of the last 5 of 10 warm-up requests = \S+ \S+, leaving out the first 5, which warm connections and the JIT$/m,
  )
  // A merged source (a mix's targets, a merge's shards) reads "per ...": no article before it.
  const hedging = { ...result.phases.hedged!.hedging!, delaySource: 'per target, 1.00 ms to 2.00 ms' }
  const mixed = { ...result, phases: { ...result.phases, hedged: { ...result.phases.hedged!, hedging } } }
  assert.match(renderText(mixed), /^ {2}the hedge delay is not this p95: it is per target, 1\.00 ms to 2\.00 ms, leaving out the first 5/m)
})

test('a warm-up large enough for the delay gives no warning', async () => {
  server ??= await startServer({ delayMs: 1 })
  const r = await runMain([server.url, '-n', '20', '-c', '4', '--warmup', '150', '--no-save', '-o', 'json'], { timeoutMs: 60_000 })
  assert.equal(r.code, 0, r.stderr)
  const result = JSON.parse(r.stdout) as RunResult
  assert.equal(
    result.warnings.some((w) => w.includes('too few to place it')),
    false,
    result.warnings.join('\n'),
  )
})

test('requests hung when the run was stopped are named with how long they had been in flight, in the warm-up line too', () => {
  const hung = { interrupted: 4, interruptedSlow: 4, interruptedMaxMs: 6280 }
  const text = renderText(
    makeRunResult({ partial: true, stoppedIn: 'plain', phases: { warmup: makePhase('warmup', [5, 6], hung), plain: makePhase('plain', [5, 6, 7], hung) } }),
  )
  assert.match(text, /, 0 errors, 4 interrupted; 4 had been in flight over the 1 s slow threshold, the longest 6\.28 s$/m)
  assert.match(
    text,
    /Interrupted:\s+4 requests aborted by hedgebench after the stop \(not errors; outside every figure above and below\); 4 had been in flight over the 1 s slow threshold, the longest 6\.28 s$/m,
  )
})

test("a shard's open-loop report compares its rate with its own share of -q; a partial merge with the shares it holds", () => {
  const plain = makePhase('plain', [5, 6, 7])
  plain.serviceTime = { latencyMs: plain.latencyMs, histogram: plain.histogram, lateSends: 0 }
  const shard = makeRunResult({ phases: { plain }, shard: { index: 0, count: 2 } })
  shard.config.rate = 201
  assert.match(renderText(shard), /rate: [\d.]+\/s achieved of 101\/s asked/)
  assert.equal(askedRate(shard), 101)
  const partial = { ...shard, shard: undefined, generators: [{ shard: 1 }], merge: { shardCount: 4 } } as unknown as RunResult
  assert.equal(askedRate(partial), 50)
  assert.equal(askedRate({ ...shard, shard: undefined } as RunResult), 201)
})

test('the HTML of an interrupted run says so first, with the requests hung at the stop', () => {
  const hung = { interrupted: 10, interruptedSlow: 10, interruptedMaxMs: 7090 }
  const run = makeRunResult({ partial: true, stoppedIn: 'plain', phases: { plain: makePhase('plain', [5, 6, 7], hung) } })
  const html = renderHtml(run)
  const answer = html.slice(html.indexOf('<section class="answer">'), html.indexOf('</section>', html.indexOf('<section class="answer">')))
  assert.match(answer, /<p class="verdict bad">PARTIAL: interrupted during plain; figures cover what finished before the stop<\/p>/)
  assert.match(
    answer,
    /<li>plain: 10 requests aborted by hedgebench after the stop \(not errors; outside every figure above and below\); 10 had been in flight over the 1 s slow threshold, the longest 7\.09 s<\/li>/,
  )
  assert.match(answer, /This run has no plain and hedged phase to compare \(it was interrupted during plain\)/)
})
