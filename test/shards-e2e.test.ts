/**
 * Issue #15's acceptance: N hedgebench processes on 127.0.0.1 with one
 * --start-at and --shard I/N against counting servers; their results merged
 * (`hedgebench merge`) must count exactly what the servers received, give
 * the percentiles of all the shards' per-request latencies (--csv-requests)
 * within the histogram's precision, and be the same whatever the order of
 * the inputs, in one step or two, from files or from framed log lines
 * interleaved with `kubectl logs --prefix` prefixes.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PhaseResult, RunResult } from '../src/results/run-result.js'
import { killAllChildren, startCli, type CliRun } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { YOUNG_GENERATION_FLAGS } from '../src/cli/launcher.js'
import { parseCsvObjects } from './helpers/csv.js'
import { runMergeWithStdin } from './helpers/merge-cli.js'
import { settle, startServer, type CountingServer } from './helpers/servers.js'

const N = 3
const REQUESTS = 301 // not a multiple of N: shards get 101, 100, 100

let dir: string
let servers: CountingServer[]
let runs: CliRun[]
let files: string[]

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hedgebench-shards-'))
  servers = [await startServer({ delayMs: (n) => 1 + (n % 4) }), await startServer({ delayMs: (n) => 1 + (n % 6) })]
  // Far enough ahead for N node processes to start on a busy 2-core machine;
  // a later start is recorded as lateness, not a failure.
  const startAt = new Date(Date.now() + 2500).toISOString()
  const shards = [...Array(N).keys()].map((i) =>
    startCli(
      [
        ...servers.map((s) => s.url),
        '-n',
        String(REQUESTS),
        '-c',
        '4',
        '--mode',
        'both',
        '--warmup',
        '0',
        '--hedge-delay',
        '4ms',
        '--shard',
        `${i}/${N}`,
        '--start-at',
        startAt,
        '--out-dir',
        join(dir, `out-${i}`),
        '--csv-requests',
        join(dir, `requests-${i}.csv`),
        '--frames',
      ],
      // One Node each, not the launcher's two: the shards are what is tested, not the launcher (launcher.test.ts).
      { timeoutMs: 40_000, nodeArgs: YOUNG_GENERATION_FLAGS },
    ),
  )
  runs = await Promise.all(shards.map((s) => s.done))
  files = []
  for (let i = 0; i < N; i++) {
    assert.equal(runs[i]!.code, 0, runs[i]!.stderr)
    const saved = (await readdir(join(dir, `out-${i}`))).filter((f) => f.endsWith('.json'))
    files.push(join(dir, `out-${i}`, saved[0]!))
  }
})

after(async () => {
  killAllChildren()
  await Promise.all(servers.map((s) => s.close()))
  await rm(dir, { recursive: true, force: true })
})

async function merge(args: string[]): Promise<RunResult> {
  const r = await runMain(['merge', ...args, '-o', 'json'], { timeoutMs: 20_000 })
  assert.equal(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as RunResult
}

/**
 * `merge` of the shards' files in their order, run once for the file: the
 * tests below check it, and compare the other orders and routes with it.
 */
let oneStepMerge: Promise<RunResult> | undefined
function mergeAll(): Promise<RunResult> {
  oneStepMerge ??= merge(files)
  return oneStepMerge
}

test('merged requests and attempts equal what the servers counted, exactly; -n split 101/100/100', async () => {
  const merged = await mergeAll()
  const plain = merged.phases.plain!
  const hedged = merged.phases.hedged!
  assert.equal(plain.requests, REQUESTS)
  assert.equal(hedged.requests, REQUESTS)
  const received = await settle(servers, plain.attempts + hedged.attempts)
  assert.equal(plain.attempts + hedged.attempts, received, 'client attempts (merged) == server received')
  assert.ok(hedged.hedging!.hedgesSent > 0, 'the hedged phase hedged (servers stall up to 6 ms, delay 4 ms)')
  // An original still waiting for a connection when its hedge won never reaches the wire (unsentOriginals).
  assert.equal(hedged.attempts, REQUESTS - (hedged.hedging!.unsentOriginals ?? 0) + hedged.hedging!.hedgesSent)
  const shares = await Promise.all(files.map(async (f) => (JSON.parse(await readFile(f, 'utf8')) as RunResult).phases.plain!.requests))
  assert.deepEqual(shares, [101, 100, 100])
  assert.equal(merged.merge!.generators, N)
  assert.deepEqual(
    merged.generators!.map((g) => g.shard),
    [0, 1, 2],
  )
  // Each generator's row is its own shard's, not one copied N times (compared with the files, not with each
  // other: shards that start at the agreed instant can record the same millisecond).
  const own = await Promise.all(files.map(async (f) => (JSON.parse(await readFile(f, 'utf8')) as RunResult).startedAt))
  assert.deepEqual(
    merged.generators!.map((g) => g.startedAt),
    own,
  )
  // Each shard recorded its start against the one agreed time.
  for (const g of merged.generators!) assert.ok(g.lateMs >= 0, `shard ${g.shard} lateness ${g.lateMs}`)
})

test("merged percentiles are those of all the shards' per-request latencies, within the histogram precision", async () => {
  const merged = await mergeAll()
  const rows = (await Promise.all([...Array(N).keys()].map(async (i) => parseCsvObjects(await readFile(join(dir, `requests-${i}.csv`), 'utf8'))))).flat()
  for (const name of ['plain', 'hedged'] as const) {
    const us = rows
      .filter((r) => r.phase === name)
      .map((r) => Math.round(Number(r.latency_ms) * 1000))
      .sort((a, b) => a - b)
    assert.equal(us.length, REQUESTS)
    const phase = merged.phases[name] as PhaseResult
    for (const p of [50, 90, 99, 99.9] as const) {
      // HDR (3 significant digits) returns the top of the bucket holding the
      // value at rank max(1, floor(p/100 * n + 0.5)): at least that value, at
      // most one bucket width above it (1 µs below 2048 µs, else value/1024),
      // and never above the exact max.
      const rank = Math.max(1, Math.floor((p / 100) * us.length + 0.5))
      const truth = us[rank - 1]!
      const got = Math.round(phase.latencyMs[`p${p}` as 'p50'] * 1000)
      assert.ok(got >= truth && got <= truth + Math.max(1, Math.ceil(truth / 1024)), `${name} p${p}: merged ${got} µs, all requests ${truth} µs`)
    }
    assert.equal(Math.round(phase.latencyMs.max * 1000), us[us.length - 1], `${name}: exact max`)
    assert.equal(Math.round(phase.latencyMs.min * 1000), us[0], `${name}: exact min`)
  }
})

test('merging in any order, or in two steps, gives the same result', async () => {
  const oneStep = await mergeAll()
  assert.deepEqual(await merge([files[2]!, files[0]!, files[1]!]), oneStep)
  const partial = join(dir, 'merged-01.json')
  const first = await runMain(['merge', files[0]!, files[1]!, '--allow-partial', '--out', partial], { timeoutMs: 20_000 })
  assert.equal(first.code, 0, first.stderr)
  assert.deepEqual(await merge([files[2]!, partial]), oneStep)
})

test("framed results from the pods' logs, prefixed and interleaved as kubectl logs --prefix prints them, merge to the same result", async () => {
  const oneStep = await mergeAll()
  const perPod = runs.map((r, i) =>
    r.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => `[pod/hedgebench-run1-${i}-x7k2p/hedgebench] ${l}`),
  )
  assert.ok(
    perPod.every((lines) => lines.some((l) => l.includes('HBFRAME1'))),
    'every pod printed frames',
  )
  assert.ok(
    perPod.every((lines) => lines.every((l) => Buffer.byteLength(l) <= 8192 + 64)),
    'frame lines stay under 8 KiB',
  )
  const interleaved: string[] = []
  for (let k = 0; k < Math.max(...perPod.map((p) => p.length)); k++) for (const lines of perPod) if (lines[k] !== undefined) interleaved.push(lines[k]!)
  const r = await runMergeWithStdin(['--from-logs', '-', '-o', 'json'], `${interleaved.join('\n')}\n`)
  assert.equal(r.code, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout), oneStep)
})
