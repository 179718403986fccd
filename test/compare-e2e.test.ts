/**
 * `hedgebench compare` on runs made for real: the bin measures fixed-delay
 * servers running in child processes (their timers never share the client's
 * event loop), saves the runs, and compare reads the saved files back.
 *
 * Why the assertions hold (not luck):
 * - Self-compare: every change is exactly 0, and compare calls a change
 *   better/worse only when its interval excludes 0, so "within noise" is
 *   deterministic. (It pins how identical small runs are judged.)
 * - The same configuration measured twice (fast, fast-again: one server, one
 *   after the other): compare must read each file (changes are not all 0),
 *   see identical configurations, and show each metric's verdict; error_rate
 *   and slow are 0 in both, so "within noise" there is exact. "p50>+100%"
 *   cannot hold: the 5 ms server's median doubling needs the client stalled
 *   for most of 300 requests (the same bound as below). Other latency
 *   verdicts are not asserted: a real shift of the machine's load between
 *   two real runs is a real difference.
 * - 5 ms vs 15 ms: the 15 ms server cannot answer in under 15 ms, so the slow
 *   run's p50 >= 15 ms. "p50>+10%" fails to hold only if the fast run's
 *   p50 > 15 / 1.1 = 13.6 ms, i.e. the 5 ms server's median inflated by
 *   > 8.6 ms (the client's event loop stalled for most of 300 requests); a
 *   ~10 ms shift against an order-statistic interval of a few hundred µs (as
 *   measured) is "worse" by a wide margin.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { requestsNeeded } from '../src/stats/noise.js'
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnFixedDelayServer, type FixedDelayServer } from './helpers/fixed-delay-server.js'
import type { CliRun } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { parseCsvObjects } from './helpers/csv.js'
import type { RunResult } from '../src/results/run-result.js'

let dir = ''
const servers: FixedDelayServer[] = []

after(async () => {
  await Promise.all(servers.map((s) => s.close()))
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** Runs the bin with a temp --out-dir and copies the saved JSON to `dir/<name>.json`. */
async function measure(name: string, args: string[]): Promise<string> {
  const r = await runMain([...args, '--label', name, '--out-dir', join(dir, 'results'), '-o', 'json'], { timeoutMs: 60_000 })
  assert.equal(r.code, 0, `run ${name}: ${r.stderr}`)
  const saved = /^saved (\S+\.json) and /m.exec(r.stderr)
  assert.ok(saved, `run ${name} says where it saved: ${r.stderr}`)
  const file = join(dir, `${name}.json`)
  copyFileSync(saved[1]!, file)
  return file
}

function compare(...args: string[]): Promise<CliRun> {
  return runMain(['compare', ...args], { cwd: dir, timeoutMs: 30_000 })
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hedgebench-compare-e2e-'))
  const [fast, slow] = await Promise.all([spawnFixedDelayServer(5), spawnFixedDelayServer(15)])
  servers.push(fast!, slow!)
  const common = ['-n', '300', '--warmup', '20', '--mode', 'plain', '--seed', '7']
  // One at a time: the runs must not compete for the two cores.
  await measure('fast', [fast!.url, ...common, '-c', '4'])
  await measure('fast-again', [fast!.url, ...common, '-c', '4'])
  // The same concurrency: another one would make the runs not comparable, and their gates inconclusive (exit 3).
  await measure('slow', [slow!.url, ...common, '-c', '4'])
  // Hedged at 3 ms against 5 ms answers: every request wants a hedge, the budget (10 %) sends some.
  await measure('both', [fast!.url, '-n', '200', '--warmup', '50', '--mode', 'both', '-c', '4', '--seed', '7', '--hedge-delay', '3ms'])
})

/** Percentiles 300 requests cannot bound (noise.ts: q^n > 2.5 %). */
const UNJUDGED = new Set(['p99', 'p99.9', 'p99.99'])

test('a run compared with itself is within noise on every metric; --fail-if holds on none, and fails closed on the one it cannot judge', async () => {
  const json = await compare('fast.json', 'fast.json', '-o', 'json')
  assert.equal(json.code, 0, json.stderr)
  const c = JSON.parse(json.stdout) as {
    configDifferences: unknown[]
    metrics: Array<{ metric: string; changes: Array<{ abs: number; verdict: string } | null> }>
  }
  assert.deepEqual(c.configDifferences, [])
  assert.ok(c.metrics.length >= 15, `every metric compared (${c.metrics.length})`)
  for (const m of c.metrics) {
    const change = m.changes[1]
    assert.ok(change, `${m.metric} has a change`)
    assert.equal(change.abs, 0, m.metric)
    // 300 requests cannot bound p99 and above (the slowest request is no 97.5 % bound: 0.99^300 = 4.9 %).
    assert.equal(change.verdict, UNJUDGED.has(m.metric) ? 'not enough requests' : 'within noise', m.metric)
  }

  const text = await compare('fast.json', 'fast.json', '--fail-if', 'p50>+10%', '--fail-if', 'p99>+1%')
  // p99 cannot be judged from 300 requests: its gate fails closed, not passed in silence.
  assert.equal(text.code, 1, text.stderr)
  assert.equal(
    text.stderr,
    'hedgebench: --fail-if "p50>+10%" does not hold for fast.json #2: p50 +0.0% is within noise' +
      text.stderr.slice(text.stderr.indexOf(' (interval'), text.stderr.indexOf('\n')) +
      '\n' +
      `hedgebench: --fail-if "p99>+1%" not judged for fast.json #2: not enough requests (n = 300 for p99; needs ${requestsNeeded(99)})\n` +
      'hedgebench: a gate could not be judged: failing closed (--allow-unjudged lets it pass)\n',
  )
  assert.match(text.stdout, /Configuration: identical/)
  const rows = text.stdout.split('\n').filter((l) => /^\s+(p[\d.]+|min|max|mean|stddev|slow|error_rate|rps)\s/.test(l))
  assert.ok(rows.length >= 15, text.stdout)
  for (const row of rows)
    assert.match(row, UNJUDGED.has(row.trim().split(' ')[0]!) ? /not enough requests \(n = 300 for p[\d.]+; needs \d+\)$/ : /within noise\s*$/, row)
  assert.doesNotMatch(text.stdout, /\b(better|worse)\s*$/m)
})

test('the same configuration measured twice: identical configurations, each file read, and --fail-if fires only as their p50s say', async () => {
  const json = await compare('fast.json', 'fast-again.json', '-o', 'json')
  assert.equal(json.code, 0, json.stderr)
  type Row = { metric: string; values: Array<number | null>; changes: Array<{ abs: number; verdict: string } | null> }
  const c = JSON.parse(json.stdout) as { configDifferences: unknown[]; metrics: Row[] }
  assert.deepEqual(c.configDifferences, [])
  assert.ok(c.metrics.length >= 15, `every metric compared (${c.metrics.length})`)
  for (const m of c.metrics) assert.ok(m.changes[1], `${m.metric} has a change`)
  // Each file's own figures, not one file twice.
  const saved = (name: string) => (JSON.parse(readFileSync(join(dir, name), 'utf8')) as RunResult).phases.plain!
  const [a, b] = [saved('fast.json'), saved('fast-again.json')]
  const metric = (key: string): Row => c.metrics.find((m) => m.metric === key)!
  for (const key of ['p50', 'p99', 'mean'] as const) assert.deepEqual(metric(key).values, [a.latencyMs[key], b.latencyMs[key]], key)
  assert.ok(
    c.metrics.some((m) => m.changes[1]!.abs !== 0),
    'two real runs differ somewhere',
  )
  for (const key of ['error_rate', 'slow']) {
    assert.deepEqual(metric(key).values, [0, 0], key)
    assert.equal(metric(key).changes[1]!.verdict, 'within noise', key)
  }

  // Two runs one after the other on a shared machine can differ by more than any fixed ratio (a loaded
  // machine once doubled the second one's p50: 9.6 -> 20.1 ms): whether the gate fires is compare's
  // decision on the two files' own p50s, and on a quiet machine it does not.
  // A gate says what the table says: it holds only on a p50 the table calls worse.
  const holds = b.latencyMs.p50 > 2 * a.latencyMs.p50 && metric('p50').changes[1]!.verdict === 'worse'
  const text = await compare('fast.json', 'fast-again.json', '--fail-if', 'p50>+100%')
  assert.equal(text.code, holds ? 1 : 0, `p50 ${a.latencyMs.p50} -> ${b.latencyMs.p50} ms: ${text.stderr}`)
  assert.match(text.stderr, new RegExp(`^hedgebench: --fail-if "p50>\\+100%" ${holds ? 'holds' : 'does not hold'} for fast-again\\.json: `))
  assert.match(text.stdout, /Configuration: identical/)
  // The table shows the verdict compare computed, row by row (a verdict may carry its reason in parentheses).
  for (const m of c.metrics)
    assert.match(text.stdout, new RegExp(`^  ${m.metric.replace('.', '\\.')}\\s.*\\s${m.changes[1]!.verdict}( \\(.*\\))?$`, 'm'), m.metric)
})

test('a 5 ms target against a 15 ms target: p50 is worse, and --fail-if "p50>+10%" exits 1 exactly when it holds', async () => {
  const r = await compare('fast.json', 'slow.json', '--fail-if', 'p50>+10%')
  assert.equal(r.code, 1, r.stderr)
  // The value seen, and the change against the first run, as a run's own --fail-if names them.
  assert.match(r.stderr, /^hedgebench: --fail-if "p50>\+10%" holds for slow\.json: p50 \+\d+(\.\d)?%, worse beyond noise, past > \+10%\n$/)
  assert.match(r.stdout, /^\s+p50\s.*\sworse\s*$/m)
  assert.match(r.stdout, /^\s+mean\s.*\sworse\s*$/m)

  const json = JSON.parse((await compare('fast.json', 'slow.json', '-o', 'json')).stdout) as {
    metrics: Array<{ metric: string; values: number[]; changes: Array<{ abs: number; verdict: string } | null> }>
  }
  const p50 = json.metrics.find((m) => m.metric === 'p50')!
  // Each server's delay is a floor under its p50; how far above it is the machine's (a load of 17 put the 5 ms one at 25 ms).
  assert.ok(p50.values[0]! >= 5 && p50.values[1]! >= 15 && p50.values[1]! > p50.values[0]!, `p50s ${p50.values.join(' / ')} ms`)
  assert.equal(p50.changes[1]!.verdict, 'worse')

  // The reverse: slower p50 is better, so "p50>+10%" does not hold; "p50<-10%" does.
  const reverse = await compare('slow.json', 'fast.json', '--fail-if', 'p50>+10%')
  assert.equal(reverse.code, 0, reverse.stderr)
  assert.match(reverse.stdout, /^\s+p50\s.*\sbetter\s*$/m)
  assert.equal((await compare('slow.json', 'fast.json', '--fail-if', 'p50<-10%')).code, 1)
  // An absolute threshold between the two medians: holds for slow.json only. Between the files' own medians,
  // not between the servers' 5 and 15 ms: a loaded machine can put the 5 ms server's p50 above 14 ms.
  const between = `p50>${((p50.values[0]! + p50.values[1]!) / 2).toFixed(2)}ms`
  assert.equal((await compare('fast.json', 'slow.json', '--fail-if', between)).code, 1, between)
  assert.equal((await compare('slow.json', 'fast.json', '--fail-if', between)).code, 0, between)
})

test('differing configurations are listed above the table (the URL)', async () => {
  const text = await compare('fast.json', 'slow.json')
  assert.equal(text.code, 0, text.stderr)
  const table = text.stdout.indexOf('  metric ')
  const differs = text.stdout.indexOf('Configuration differs')
  assert.ok(differs >= 0 && differs < table, text.stdout)
  assert.match(text.stdout, /^\s+urls\s+http:\/\/127\.0\.0\.1:\d+\/\s+http:\/\/127\.0\.0\.1:\d+\/\s*$/m)

  const json = JSON.parse((await compare('fast.json', 'slow.json', '-o', 'json')).stdout) as { configDifferences: Array<{ key: string; values: string[] }> }
  const keys = new Map(json.configDifferences.map((d) => [d.key, d.values]))
  assert.equal(keys.get('urls')?.length, 2)
  assert.notEqual(keys.get('urls')![0], keys.get('urls')![1])
  assert.ok(!keys.has('requests') && !keys.has('method'), `only what differs: ${[...keys.keys()].join(', ')}`)
})

test('-o csv parses back: one row per metric x run, values equal to -o json', async () => {
  const csv = await compare('fast.json', 'slow.json', '-o', 'csv')
  assert.equal(csv.code, 0, csv.stderr)
  const rows = parseCsvObjects(csv.stdout)
  const json = JSON.parse((await compare('fast.json', 'slow.json', '-o', 'json')).stdout) as {
    runs: Array<{ name: string }>
    metrics: Array<{ metric: string; values: Array<number | null>; changes: Array<{ abs: number; verdict: string } | null> }>
  }
  assert.equal(rows.length, json.metrics.length * 2)
  assert.deepEqual(
    json.runs.map((r) => r.name),
    ['fast.json', 'slow.json'],
  )
  for (const m of json.metrics) {
    for (const [i, run] of ['fast.json', 'slow.json'].entries()) {
      const row = rows.find((r) => r.metric === m.metric && r.run === run)
      assert.ok(row, `row ${m.metric} / ${run}`)
      assert.equal(row.phase, 'plain')
      if (m.values[i] === null) assert.equal(row.value, '')
      else assert.equal(Number(row.value), m.values[i], `${m.metric} ${run}`)
      const change = m.changes[i]
      if (i === 0 || !change) {
        assert.equal(row.change, '')
        assert.equal(row.verdict, '')
      } else {
        assert.equal(Number(row.change), change.abs)
        assert.equal(row.verdict, change.verdict)
      }
    }
  }
  assert.equal(rows.find((r) => r.metric === 'p50' && r.run === 'slow.json')?.verdict, 'worse')
})

test('compare RUN.json on a plain+hedged run compares its own two phases', async () => {
  const text = await compare('both.json')
  assert.equal(text.code, 0, text.stderr)
  assert.match(text.stdout, /Comparing the plain and hedged phases/)
  const json = JSON.parse((await compare('both.json', '-o', 'json')).stdout) as {
    kind: string
    runs: Array<{ name: string; phase: string; requests: number }>
    configDifferences: unknown[]
    metrics: Array<{ metric: string; values: Array<number | null> }>
  }
  assert.equal(json.kind, 'within')
  assert.deepEqual(
    json.runs.map((r) => [r.name, r.phase, r.requests]),
    [
      ['plain', 'plain', 200],
      ['hedged', 'hedged', 200],
    ],
  )
  assert.deepEqual(json.configDifferences, [])
  // Extra load from the saved counts: attempts per request - 1, in % (0 for the plain phase, which never hedges).
  const extra = json.metrics.find((m) => m.metric === 'extra_load')
  const saved = JSON.parse(readFileSync(join(dir, 'both.json'), 'utf8')) as RunResult
  const { plain, hedged } = saved.phases
  assert.equal(plain!.attempts, plain!.requests)
  assert.ok(hedged!.hedging!.hedgesSent > 0, 'the hedged phase hedged')
  const expected = Math.round((hedged!.attempts / hedged!.requests - 1) * 100 * 1000) / 1000
  assert.deepEqual(extra?.values, [0, expected], `extra load: ${JSON.stringify(extra)}, hedges sent ${hedged!.hedging!.hedgesSent}`)
  // A plain-only run has nothing to compare within: a one-line usage error.
  const plainOnly = await compare('fast.json')
  assert.equal(plainOnly.code, 2)
  assert.match(plainOnly.stderr, /no plain and hedged phase/)
})
