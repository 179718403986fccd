/**
 * Issue 44 item 3: a merge of shards keeps every field a one-process run
 * has. The same options run once in one process and as 2 shards merged,
 * against the simulated target; the two results' field sets (keys, not
 * values) must agree, recursively, so a field added to a run and not to the
 * merge fails here rather than going missing from merged results.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Target } from '../src/sim/target.js'
import { runMain } from './helpers/main-cases.js'
import { startFastTarget, type FastTarget } from './helpers/sim.js'

/** What only a merge has: its generators' rows, the merge's own facts, the shards' common run id, each phase's common window. */
const MERGE_ONLY = [/^\.generators\b/, /^\.merge\b/, /^\.runId$/, /^\.phases\.\w+\.window\b/]

/** A generator's own fields, which a merge keeps in that generator's row of `generators` rather than once for all. */
const KEPT_IN_ROWS: Record<string, string> = {
  '.shard': '.generators[].shard',
  '.host': '.generators[].host',
  '.clock': '.generators[].clock',
  '.start': '.generators[].lateMs',
}

let dir: string
let fast: FastTarget
let target: Target

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hedgebench-merge-fields-'))
  fast = await startFastTarget()
  target = fast.target
})

after(async () => {
  await fast?.close()
  await rm(dir, { recursive: true, force: true })
})

async function runSaved(name: string, extra: string[]): Promise<string> {
  const out = join(dir, name)
  const args = [...target.urls, '-n', '120', '-c', '2', '--mode', 'both', '--warmup', '60', '--seed', '3', '--out-dir', out, '-o', 'json', ...extra]
  const r = await runMain(args, { timeoutMs: 60_000 })
  assert.equal(r.code, 0, r.stderr)
  const saved = (await readdir(out)).filter((f) => f.endsWith('.json'))
  return join(out, saved[0]!)
}

/** The result's counts keyed by what was measured (a status, an error, a number of attempts: results/run-result.ts `counts`): their keys are data, not fields. */
const COUNTS = new Set(['statusCodes', 'errorKinds', 'errorMessages', 'generatorFailures', 'attemptsPerRequest', 'winsByAttempt', 'headers'])

/** Every key path of a JSON value; arrays by their elements' union, so a list's length is no difference. */
function keyPaths(value: unknown, at = '', into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keyPaths(v, `${at}[]`, into)
  else if (value !== null && typeof value === 'object') {
    if (COUNTS.has(at.slice(at.lastIndexOf('.') + 1))) return into
    for (const [k, v] of Object.entries(value)) {
      into.add(`${at}.${k}`)
      keyPaths(v, `${at}.${k}`, into)
    }
  }
  return into
}

test('a 2-shard merge has every field a one-process run of the same options has, and no other', async () => {
  const one = JSON.parse(await readFile(await runSaved('one', []), 'utf8')) as Record<string, unknown>
  const shards = [await runSaved('shard-0', ['--shard', '0/2', '--run-id', 'fields']), await runSaved('shard-1', ['--shard', '1/2', '--run-id', 'fields'])]
  const r = await runMain(['merge', ...shards, '-o', 'json'], { timeoutMs: 30_000 })
  assert.equal(r.code, 0, r.stderr)
  const merged = JSON.parse(r.stdout) as Record<string, unknown>
  const inOne = keyPaths(one)
  const inMerged = keyPaths(merged)
  const rowOf = (k: string): string | undefined => KEPT_IN_ROWS[/^\.\w+/.exec(k)![0]]
  const lost = [...inOne].filter((k) => !inMerged.has(k) && !(rowOf(k) !== undefined && inMerged.has(rowOf(k)!)))
  const added = [...inMerged].filter((k) => !inOne.has(k) && !MERGE_ONLY.some((re) => re.test(k)))
  assert.deepEqual({ lost, added }, { lost: [], added: [] })
})
