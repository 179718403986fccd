/**
 * hedgebench sweep on the simulated replicas: one warm-up, then a plain and a
 * hedged phase per delay; the frontier's cost falls as the delay rises, the
 * recommendation keeps to --max-extra, shared slowness gets no
 * recommendation, an interrupted sweep keeps its finished settings, and a
 * bad list is one line and exit 2.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnTarget, type Target } from '../src/sim/target.js'
import { parseDelayList, settingOptions, sweep } from '../src/run/sweep.js'
import { sweepFrontier } from '../src/report/sweep-frontier.js'
import { renderSweepText } from '../src/report/sweep-text.js'
import { UsageError } from '../src/core/errors.js'
import { runMainCases } from './helpers/main-cases.js'

let pi: Target
let shared: Target
before(async () => {
  ;[pi, shared] = await Promise.all([spawnTarget({ profile: 'pi', seed: 3 }), spawnTarget({ profile: 'shared-slow', seed: 11 })])
})
after(async () => {
  await Promise.all([pi?.close(), shared?.close()])
})

test('a --hedge-delay list: percentiles and durations, each read as the flag reads one', () => {
  assert.deepEqual(parseDelayList('p75, p99.9,20ms,1s'), [
    { label: 'p75', percentile: 75 },
    { label: 'p99.9', percentile: 99.9 },
    { label: '20ms', fixedMs: 20 },
    { label: '1s', fixedMs: 1000 },
  ])
  for (const bad of ['', 'p75,,p90', 'p100', 'fast', 'p90,p90', 'auto']) assert.throws(() => parseDelayList(bad), UsageError, bad)
})

test('the first setting warms up; the later ones do not, and take their percentile from that warm-up', () => {
  const base = { urls: ['http://127.0.0.1:1'], warmup: 100, delays: [] }
  const first = settingOptions(base, { label: 'p90', percentile: 90 }, 0, null)
  assert.equal(first.warmup, 100)
  assert.equal(first.hedge?.delay, 'p90')
  assert.equal(first.schedule, 'interleaved')
  const later = settingOptions(base, { label: 'p90', percentile: 90 }, 1, (p) => p / 10)
  assert.equal(later.warmup, 0)
  assert.equal(later.hedge?.delay, 9)
  assert.equal(later.hedge?.minHedgeWindowMs, 5, 'the warm-up p50, which a run without a warm-up cannot measure')
  assert.equal(settingOptions(base, { label: '20ms', fixedMs: 20 }, 2, (p) => p).hedge?.delay, 20)
})

test('pi: extra load does not rise as the delay rises, and the recommendation keeps to --max-extra', async () => {
  const result = await sweep({
    urls: pi.urls,
    delays: ['p25', 'p50', 'p75', 200],
    // ~15 stalls of 1 s in each plain phase: enough for the verdict to tell their removal from noise.
    requests: 1500,
    warmup: 200,
    concurrency: 8,
    seed: 7,
    slowMs: 1000,
    hedge: { budgetPct: null as unknown as number },
  })
  assert.equal(result.partial, false)
  assert.deepEqual(result.settings.map((s) => s.label), ['p25', 'p50', 'p75', '200ms'])
  const delays = result.settings.map((s) => s.delayMs)
  assert.deepEqual([...delays].sort((a, b) => a - b), delays, `delays rise: ${delays}`)
  // One warm-up: only the first setting's run has one.
  assert.ok(result.settings[0]!.result.phases.warmup)
  assert.ok(result.settings.slice(1).every((s) => s.result.phases.warmup === undefined))
  const frontier = sweepFrontier(result, 5)
  const extra = frontier.rows.map((r) => r.extraLoadPct)
  for (let i = 1; i < extra.length; i++) assert.ok(extra[i]! <= extra[i - 1]!, `extra load by rising delay ${delays}: ${extra}`)
  const chosen = frontier.rows.find((r) => r.label === frontier.recommendation.label)
  assert.ok(chosen, renderSweepText(result, frontier))
  assert.ok(chosen.extraLoadPct <= 5, `${chosen.label}: ${chosen.extraLoadPct} %`)
  assert.match(frontier.recommendation.sentence, new RegExp(`--hedge-delay ${chosen.label}\\b`))
  assert.ok(frontier.rows.some((r) => r.onFrontier))
  const text = renderSweepText(result, frontier)
  assert.match(text, /p99\.9/)
  assert.equal(text.split('\n').filter((l) => /^\*/.test(l)).length, frontier.rows.filter((r) => r.onFrontier).length)
})

test('shared slowness: no delay is recommended, whatever it costs', async () => {
  const result = await sweep({ urls: shared.urls, delays: ['p90', 40], requests: 400, warmup: 100, concurrency: 4, seed: 5, slowMs: 1000 })
  const frontier = sweepFrontier(result, 100)
  assert.equal(frontier.recommendation.label, null, frontier.recommendation.sentence)
  assert.match(frontier.recommendation.sentence, /^No hedging recommended: no delay improved the tail/)
})

test('a sweep stopped between settings keeps the ones finished (partial)', async () => {
  const stop = new AbortController()
  const result = await sweep({
    urls: pi.urls,
    delays: [40, 80, 120],
    requests: 50,
    warmup: 20,
    concurrency: 4,
    seed: 9,
    signal: stop.signal,
    onSetting: (i) => (i === 1 ? stop.abort() : undefined),
  })
  assert.equal(result.partial, true)
  assert.equal(result.planned, 3)
  assert.deepEqual(result.settings.map((s) => s.label), ['40ms'])
  assert.match(renderSweepText(result, sweepFrontier(result)), /interrupted: 1 of 3 settings finished/)
})

test('a bad list or --max-extra is one line and exit 2', () => {
  const cases = [['p90,,p99'], ['p90,soon'], ['p120']].map((list) => ({ args: ['sweep', 'http://127.0.0.1:9', '--hedge-delay', ...list], cwd: process.cwd() }))
  cases.push({ args: ['sweep', 'http://127.0.0.1:9', '--max-extra', 'lots'], cwd: process.cwd() })
  for (const [i, r] of runMainCases(cases).entries()) {
    assert.equal(r.code, 2, `${cases[i]!.args.join(' ')}: ${r.stderr}`)
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
    assert.match(r.stderr, /^hedgebench: .*--(hedge-delay|max-extra)/)
  }
})

test('-o json: the sweep with its frontier, one setting per delay', () => {
  const [r] = runMainCases([{ args: ['sweep', ...pi.urls, '--hedge-delay', '40ms,80ms', '-n', '40', '--warmup', '20', '--seed', '4', '-o', 'json', '--no-save'], cwd: process.cwd() }])
  assert.equal(r!.code, 0, r!.stderr)
  const out = JSON.parse(r!.stdout) as { kind: string; partial: boolean; settings: Array<{ label: string; delayMs: number }>; frontier: { rows: Array<{ label: string }>; maxExtraPct: number; recommendation: { sentence: string } } }
  assert.equal(out.kind, 'sweep')
  assert.equal(out.partial, false)
  assert.deepEqual(out.settings.map((s) => [s.label, s.delayMs]), [['40ms', 40], ['80ms', 80]])
  assert.deepEqual(out.frontier.rows.map((row) => row.label), ['40ms', '80ms'])
  assert.equal(out.frontier.maxExtraPct, 5)
  assert.ok(out.frontier.recommendation.sentence.length > 0)
})
