/**
 * `hedgebench merge` refuses what does not add up to one run, with one line
 * and exit 2: a missing shard, a shard given twice, another run id, another
 * configuration, histograms of another precision. --allow-partial merges
 * what is there and says what is missing. The shards are real runs (the
 * library's run(), in-process) against a counting server on 127.0.0.1.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as hdr from 'hdr-histogram-js'
import { run } from '../src/run/run.js'
import type { RunOptions } from '../src/run/run-options.js'
import { renderJson } from '../src/results/result-json.js'
import type { RunResult } from '../src/results/run-result.js'
import { stderrLines } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { startServer, type CountingServer } from './helpers/servers.js'

let dir: string
let server: CountingServer
const shard: string[] = []
let shards: RunResult[] = []

const base = (url: string): RunOptions => ({ urls: [url], requests: 60, concurrency: 2, mode: 'plain', warmup: 0, runId: 'r1', seed: 7 })

async function save(name: string, result: RunResult): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, renderJson(result))
  return path
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hedgebench-merge-refusals-'))
  server = await startServer({ delayMs: 1 })
  shards = []
  for (let i = 0; i < 3; i++) shards.push(await run({ ...base(server.url), shard: { index: i, count: 3 } }))
  for (let i = 0; i < 3; i++) shard.push(await save(`shard-${i}.json`, shards[i]!))
})

after(async () => {
  await server.close()
  await rm(dir, { recursive: true, force: true })
})

async function refused(args: string[], pattern: RegExp): Promise<void> {
  const r = await runMain(['merge', ...args])
  assert.equal(r.code, 2, `exit 2; stderr: ${r.stderr}`)
  assert.equal(stderrLines(r).length, 1, `one line: ${r.stderr}`)
  assert.match(r.stderr, pattern)
  assert.equal(r.stdout, '')
}

test('a missing shard is refused, naming it', async () => {
  await refused([shard[0]!, shard[2]!], /^hedgebench: shard 1 of 3 missing \(give every shard, or --allow-partial/)
})

test('a shard given twice is refused, naming both sources', async () => {
  const copy = await save('copy-of-0.json', shards[0]!)
  await refused([shard[0]!, shard[1]!, shard[2]!, copy], /^hedgebench: shard 0\/3 given twice \(.*shard-0\.json and .*copy-of-0\.json\)/)
})

test('another configuration or another run id is refused, naming the difference', async () => {
  const other = await save('other-config.json', await run({ ...base(server.url), concurrency: 3, shard: { index: 1, count: 3 } }))
  // In the order of the files: shard-0.json's value, then other-config.json's.
  await refused([shard[0]!, other, shard[2]!], /shard-0\.json and .*other-config\.json were configured differently: concurrency \(2 vs 3\)/)
  const otherRun = await save('other-run.json', { ...shards[1]!, runId: 'r2' })
  await refused([shard[0]!, otherRun, shard[2]!], /is run r2, .* is run r1/)
})

test('histograms of another precision are refused, not mixed', async () => {
  const coarse = hdr.build({ numberOfSignificantValueDigits: 2, useWebAssembly: false })
  coarse.recordValue(1500)
  const mixed = structuredClone(shards[1]!)
  mixed.phases.plain!.histogram = hdr.encodeIntoCompressedBase64(coarse)
  await refused(
    [shard[0]!, await save('two-digits.json', mixed), shard[2]!],
    /histograms of 2 significant digits, .* of 3: refusing to add histograms of different precision/,
  )
})

test('--allow-partial merges what is there and says what is missing', async () => {
  const r = await runMain(['merge', shard[0]!, shard[2]!, '--allow-partial', '-o', 'json'])
  assert.equal(r.code, 0, r.stderr)
  const merged = JSON.parse(r.stdout) as RunResult
  assert.deepEqual(merged.merge!.missing, [1])
  assert.equal(merged.phases.plain!.requests, shards[0]!.phases.plain!.requests + shards[2]!.phases.plain!.requests)
  assert.equal(merged.phases.plain!.requests, 40, 'shards 0 and 2 of -n 60 / 3')
  assert.ok(
    merged.warnings.some((w) => /^partial merge: shard 1 of 3 missing; the figures cover 2 of 3 shards$/.test(w)),
    merged.warnings.join('\n'),
  )
  const text = await runMain(['merge', shard[0]!, shard[2]!, '--allow-partial'])
  assert.match(text.stdout, /WARNING: partial merge: shard 1 of 3 missing/)
  assert.match(text.stdout, /MISSING shard\(s\) 1/)
})

test('a hand-edited result with a broken shard or generator row is refused with one line, not a stack trace', async () => {
  await refused([shard[0]!, await save('bad-shard.json', { ...shards[1]!, shard: { index: 5, count: 3 } }), shard[2]!], /bad-shard\.json: invalid "shard"/)
  const merged = { ...shards[1]!, shard: undefined, generators: [{ shard: 'one' }], merge: { shardCount: 3 } } as unknown as RunResult
  await refused([shard[0]!, await save('bad-rows.json', merged), shard[2]!], /bad-rows\.json: invalid row in "generators"/)
})
