import { test } from 'node:test'
import assert from 'node:assert/strict'
import { requestsNeeded } from '../src/stats/noise.js'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { renderJson } from '../src/results/result-json.js'
import type { CliRun } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { makeConfig, makeHedgedRun, makePhase, makeRunResult, stallingLatencies } from './helpers/result-fixture.js'

function fixtureDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'hedgebench-compare-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  // after.json: the same server three times slower, with a longer --timeout (a setting that leaves the runs comparable;
  // another concurrency would make the gates inconclusive, see the test below).
  const before = makeRunResult({ label: 'before' })
  const after = makeRunResult({
    label: 'after',
    config: makeConfig({ timeoutMs: 30_000 }),
    phases: {
      plain: makePhase(
        'plain',
        stallingLatencies(400, 2).map((ms) => ms * 3),
      ),
    },
  })
  writeFileSync(join(dir, 'before.json'), renderJson(before))
  writeFileSync(join(dir, 'after.json'), renderJson(after))
  writeFileSync(join(dir, 'run.json'), renderJson(makeHedgedRun()))
  return dir
}

/** `hedgebench ARGS` in `dir`, through main() in this file's one driver process (compare's output and exit code are tested, not the process). */
function hedgebench(dir: string, ...args: string[]): Promise<CliRun> {
  return runMain(args, { cwd: dir, timeoutMs: 30_000 })
}

test('--fail-if exits 1 exactly when a condition holds, each gate saying which way it went', async (t) => {
  const dir = fixtureDir(t)
  const cases: Array<[string[], number]> = [
    [['--fail-if', 'p50>+10%'], 1],
    [['--fail-if', 'p50>+500%'], 0],
    [['--fail-if', 'p50<-10%'], 0],
    [['--fail-if', 'p50>20ms'], 1],
    [['--fail-if', 'p50>50ms'], 0],
    [['--fail-if', 'error_rate>0%'], 0],
    [['--fail-if', 'rps<-5%'], 1],
    // p99 of 400 requests stalling 1 in 100 sits on the stalls' edge: +200 % is within noise, and the gate says what the table says.
    [['--fail-if', 'p50>50ms', '--fail-if', 'p99>+100%'], 0],
    [['--fail-if', 'p50>20ms', '--fail-if', 'p99>+100%'], 1],
    [[], 0],
  ]
  for (const [flags, expected] of cases) {
    const r = await hedgebench(dir, 'compare', 'before.json', 'after.json', ...flags)
    assert.equal(r.code, expected, `${flags.join(' ')}: ${r.stderr}`)
    assert.match(r.stdout, /p50/)
    const gates = flags.filter((_, i) => flags[i - 1] === '--fail-if')
    // One line per gate, in order, which way it went for after.json.
    const lines = r.stderr.split('\n').filter((l) => l !== '')
    assert.equal(lines.length, gates.length, r.stderr)
    for (const [i, gate] of gates.entries()) assert.ok(lines[i]!.startsWith(`hedgebench: --fail-if ${JSON.stringify(gate)} `), lines[i])
    if (expected === 1) assert.match(r.stderr, /--fail-if ".*" holds for after\.json: /)
    else for (const line of lines) assert.match(line, /does not hold for after\.json: /)
  }
  // A change the table calls worse but below the threshold, and one it calls within noise, say so.
  const under = await hedgebench(dir, 'compare', 'before.json', 'after.json', '--fail-if', 'p50>+500%')
  assert.match(under.stderr, /does not hold for after\.json: p50 \+\d+\.\d%, worse beyond noise, not past > \+500%/)
  const same = await hedgebench(dir, 'compare', 'before.json', 'before.json', '--fail-if', 'p50>-50%')
  assert.equal(same.code, 0, same.stderr)
  // Its interval as the table shows it, in the metric's unit, not raw floats ("-158.473785 to 637.001785").
  assert.match(
    same.stderr,
    /does not hold for before\.json #2: p50 \+0\.0% is within noise \(interval [-+±]\d+(\.\d+)? (µs|ms|s) to [-+±]\d+(\.\d+)? (µs|ms|s)\)\n/,
  )
})

test('a gate that cannot be judged fails closed (exit 1, one line why); --allow-unjudged lets it pass', async (t) => {
  const dir = fixtureDir(t)
  // 400 requests cannot bound a p99.9 (compare says "not enough requests").
  const closed = await hedgebench(dir, 'compare', 'before.json', 'after.json', '--fail-if', 'p99.9>+100%')
  assert.equal(closed.code, 1, closed.stderr)
  assert.equal(
    closed.stderr,
    `hedgebench: --fail-if "p99.9>+100%" not judged for after.json: not enough requests (n = 400 for p99.9; needs ${requestsNeeded(99.9)})\n` +
      'hedgebench: a gate could not be judged: failing closed (--allow-unjudged lets it pass)\n',
  )
  const allowed = await hedgebench(dir, 'compare', 'before.json', 'after.json', '--fail-if', 'p99.9>+100%', '--allow-unjudged')
  assert.equal(allowed.code, 0, allowed.stderr)
  assert.match(allowed.stderr, /not judged for after\.json: not enough requests/)
})

test('runs not comparable, or a saturated generator, make the gates inconclusive: exit 3, one line each why', async (t) => {
  const dir = fixtureDir(t)
  writeFileSync(join(dir, 'busier.json'), renderJson(makeRunResult({ label: 'busier', config: makeConfig({ concurrency: 8 }) })))
  const busier = await hedgebench(dir, 'compare', 'before.json', 'busier.json', '--fail-if', 'p50>+10%')
  assert.equal(busier.code, 3, busier.stderr)
  assert.match(busier.stderr, /^hedgebench: gates inconclusive \(exit 3\): the runs are not comparable: concurrency differs \(4 vs 8\)$/m)
  // An unset rate (closed loop) reads "none", as the configuration table shows it, not the stored null.
  writeFileSync(join(dir, 'paced.json'), renderJson(makeRunResult({ label: 'paced', config: makeConfig({ rate: 200 }) })))
  const paced = await hedgebench(dir, 'compare', 'before.json', 'paced.json', '--fail-if', 'p50>+10%')
  assert.equal(paced.code, 3, paced.stderr)
  assert.match(paced.stderr, /^hedgebench: gates inconclusive \(exit 3\): the runs are not comparable: rate differs \(none vs 200\)$/m)
  assert.match(paced.stdout, /^Configuration differs, compare with care:\n +before +paced\n {2}rate +none +200\n\n/m)
  const saturatedRun = makeRunResult({ label: 'saturated' })
  saturatedRun.phases.plain!.generator.saturated = true
  writeFileSync(join(dir, 'saturated.json'), renderJson(saturatedRun))
  // An A/A compare (the same baseline twice, in reversed order) with one run saturated: a verdict on the instrument, not a regression.
  for (const order of [
    ['saturated.json', 'before.json'],
    ['before.json', 'saturated.json'],
  ]) {
    const r = await hedgebench(dir, 'compare', ...order, '--fail-if', 'p50>+10%')
    assert.equal(r.code, 3, r.stderr)
    assert.match(r.stderr, /^hedgebench: gates inconclusive \(exit 3\): saturated\.json: the load generator was saturated \(plain phase\)$/m)
  }
  // Without gates there is nothing to be inconclusive about.
  assert.equal((await hedgebench(dir, 'compare', 'before.json', 'busier.json')).code, 0)
})

test('--baseline: the runs judged against the mean of an A/A set, whose spread is a noise floor', async (t) => {
  const dir = fixtureDir(t)
  writeFileSync(join(dir, 'before2.json'), renderJson(makeRunResult({ label: 'before2', phases: { plain: makePhase('plain', stallingLatencies(400, 5)) } })))
  const r = await hedgebench(dir, 'compare', 'after.json', '--baseline', 'before.json', 'before2.json', '-o', 'json')
  assert.equal(r.code, 0, r.stderr)
  const c = JSON.parse(r.stdout) as { baselineSet: string[]; runs: Array<{ name: string }>; metrics: Array<{ metric: string; values: number[] }> }
  assert.deepEqual(c.baselineSet, ['before.json', 'before2.json'])
  assert.deepEqual(
    c.runs.map((x) => x.name),
    ['before.json', 'after.json'],
  )
  const mean =
    (JSON.parse(readFileSync(join(dir, 'before.json'), 'utf8')).phases.plain.latencyMs.p50 +
      JSON.parse(readFileSync(join(dir, 'before2.json'), 'utf8')).phases.plain.latencyMs.p50) /
    2
  assert.equal(c.metrics.find((m) => m.metric === 'p50')!.values[0], Number(mean.toPrecision(9)))
  const text = await hedgebench(dir, 'compare', 'after.json', '--baseline', 'before.json', 'before2.json')
  assert.match(text.stdout, /^Baseline \S+: the mean of 2 baseline runs \(before\.json, before2\.json\); their spread is a noise floor$/m)
  const none = await hedgebench(dir, 'compare', '--baseline', 'before.json', 'before2.json')
  assert.equal(none.code, 2)
  assert.match(none.stderr, /^hedgebench: compare --baseline needs the runs to judge before it/)
})

test('a bad --fail-if is a usage error (exit 2) with one line', async (t) => {
  const dir = fixtureDir(t)
  const r = await hedgebench(dir, 'compare', 'before.json', 'after.json', '--fail-if', 'p99>10parsecs')
  assert.equal(r.code, 2)
  assert.equal(r.stdout, '')
  assert.match(r.stderr, /^hedgebench: invalid --fail-if "p99>10parsecs": .*\n$/)
})

test('differing configs are listed; -o json and -o csv; a missing file is exit 2', async (t) => {
  const dir = fixtureDir(t)
  const text = await hedgebench(dir, 'compare', 'before.json', 'after.json')
  assert.equal(text.code, 0)
  assert.match(text.stdout, /Configuration differs[^\n]*\n.*\n\s+timeoutMs\s+20000\s+30000/)
  const json = JSON.parse((await hedgebench(dir, 'compare', 'before.json', 'after.json', '-o', 'json')).stdout)
  assert.deepEqual(json.configDifferences, [{ key: 'timeoutMs', values: ['20000', '30000'] }])
  const csv = (await hedgebench(dir, 'compare', 'before.json', 'after.json', '-o', 'csv')).stdout
  assert.match(csv, /^metric,unit,run,phase,value,/)
  const missing = await hedgebench(dir, 'compare', 'before.json', 'nope.json')
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /nope\.json/)
})

test('one file compares its own plain and hedged phases, and --html writes the report', async (t) => {
  const dir = fixtureDir(t)
  const r = await hedgebench(dir, 'compare', 'run.json', '--html', 'out.html', '--fail-if', 'p99.9>+0%')
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /Comparing the plain and hedged phases/)
  assert.match(r.stdout, /p99\.9 .* better/)
  // The verdict the run's own report prints (issue 30 item 4), after the table.
  const verdict =
    'Verdict: Hedging removed 40 of 40 requests over 1 s (-100 %, 95 % CI -100 % to -90 %) and cut p99.9 from 1.02 s to 30.9 ms, for +3.5 % requests.'
  assert.ok(r.stdout.split('\n').includes(verdict), r.stdout)
  assert.ok(r.stdout.indexOf(verdict) > r.stdout.indexOf('p99.9 '))
  const html = readFileSync(join(dir, 'out.html'), 'utf8')
  assert.ok(html.includes(`<p class="verdict good">${verdict.slice('Verdict: '.length)}</p>`))
  assert.match(html, /<svg data-chart="percentiles"/)
  assert.match(html, /data-series="hedged:p99"/)
})
