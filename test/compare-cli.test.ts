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
  // after.json: the same server three times slower, at twice the concurrency.
  const before = makeRunResult({ label: 'before' })
  const after = makeRunResult({
    label: 'after',
    config: makeConfig({ concurrency: 8 }),
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

test('--fail-if exits 1 exactly when a condition holds', async (t) => {
  const dir = fixtureDir(t)
  const cases: Array<[string[], number]> = [
    [['--fail-if', 'p50>+10%'], 1],
    [['--fail-if', 'p50>+500%'], 0],
    [['--fail-if', 'p50<-10%'], 0],
    [['--fail-if', 'p50>20ms'], 1],
    [['--fail-if', 'p50>50ms'], 0],
    [['--fail-if', 'error_rate>0%'], 0],
    [['--fail-if', 'rps<-5%'], 1],
    // p99, not p99.9: 400 requests cannot bound a p99.9 (compare says "not enough requests"): a change
    // gate on it does not hold, and stderr says it was not checked.
    [['--fail-if', 'p50>50ms', '--fail-if', 'p99>+100%'], 1],
    [['--fail-if', 'p99.9>+100%'], 0],
    [[], 0],
  ]
  for (const [flags, expected] of cases) {
    const r = await hedgebench(dir, 'compare', 'before.json', 'after.json', ...flags)
    assert.equal(r.code, expected, `${flags.join(' ')}: ${r.stderr}`)
    assert.match(r.stdout, /p50/)
    if (expected === 1) assert.match(r.stderr, /--fail-if ".*" holds for after\.json/)
    else if (flags.includes('p99.9>+100%'))
      assert.equal(
        r.stderr,
        `hedgebench: --fail-if "p99.9>+100%" not checked for after.json: not enough requests (n = 400 for p99.9; needs ${requestsNeeded(99.9)})\n`,
      )
    else assert.equal(r.stderr, '')
  }
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
  assert.match(text.stdout, /Configuration differs[^\n]*\n.*\n\s+concurrency\s+4\s+8/)
  const json = JSON.parse((await hedgebench(dir, 'compare', 'before.json', 'after.json', '-o', 'json')).stdout)
  assert.deepEqual(json.configDifferences, [{ key: 'concurrency', values: ['4', '8'] }])
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
