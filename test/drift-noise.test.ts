/**
 * compare under drift (issue 44): runs of a simulated target whose latency
 * wanders within and between runs (the sim's drift model), built in process
 * from the sim's latency model and the real timeline recorders, so that 20
 * trials of 7 runs of 4,000 requests take a second, not 140 CLI runs.
 *
 * What must hold, with the margins derived in drift-noise.ts (never tuned
 * here): over 20 A/A pairs judged against an A/A baseline set, at most 1 in
 * 20 metric comparisons called better or worse; a real 2x change in p99 at
 * n = 4,000 called worse in every one of the 20.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createReplicaModels, type ModelSpec } from '../src/sim/latency-model.js'
import { FINE_BUCKET_MS, FINE_HORIZON_MS, TimelineRecorder } from '../src/stats/timeline.js'
import { compareRuns, type Comparison } from '../src/report/compare.js'
import { studentTQuantile } from '../src/stats/noise.js'
import { DRIFT_ALPHA, levelSpread, runSpread, timeSeriesInterval } from '../src/stats/drift-noise.js'
import { makeFigures, makePhase, makeRunResult } from './helpers/result-fixture.js'
import type { RunResult } from '../src/results/run-result.js'

const N = 4000
/** One request every millisecond: a run lasts 4 s, within the fine timeline's horizon as a real one would be. */
const GAP_MS = 1
/** Between two runs of a trial, the time a CLI run takes to start and save. */
const PAUSE_MS = 2000
const BASELINES = 5
const TRIALS = 20

/** p99 = median * e^(2.326 sigma): sigma 0.5 gives 3.2x the median; TAIL_2X's sigma doubles p99 and keeps the median. */
const SIGMA = 0.5
const SIGMA_2X = (Math.log(2) + 2.326 * SIGMA) / 2.326

/** Latency that wanders about ±10 % over about two seconds: within a run, and from one run to the next. */
const DRIFT = { sigma: 0.1, tauMs: 2000 }

function spec(sigma: number): ModelSpec {
  return { base: { type: 'lognormal', median: 10, sigma }, drift: DRIFT }
}

/** One trial's target: a drift shared by every run in it, from the trial's seed. */
function target(seed: number) {
  const [plain] = createReplicaModels(spec(SIGMA), 1, seed, 0)
  const [tail2x] = createReplicaModels(spec(SIGMA_2X), 1, seed, 0)
  return { plain: plain!, tail2x: tail2x! }
}

/** A run of N requests starting at `startMs` on the model's clock, as a saved result with its timelines. */
function runAt(model: ReturnType<typeof target>['plain'], startMs: number, label: string): RunResult {
  return runOf((sent) => model.finishAt(sent, model.draw().workMs), startMs, label)
}

/** A run of N requests, one every `gapMs` from `startMs`, each ending when `endOf` says. */
function runOf(endOf: (sent: number, i: number) => number, startMs: number, label: string, gapMs = GAP_MS): RunResult {
  const seconds = new TimelineRecorder(startMs)
  const fine = new TimelineRecorder(startMs, FINE_BUCKET_MS)
  const latencies: number[] = []
  let end = startMs
  for (let i = 0; i < N; i++) {
    const sent = startMs + i * gapMs
    end = endOf(sent, i)
    latencies.push(end - sent)
    seconds.request(end, end - sent, false, null)
    fine.request(end, end - sent, false, null)
  }
  const durationMs = end - startMs
  // The figures once (makePhase would summarise the latencies again per replica and per second).
  const figures = makeFigures(latencies)
  const phase = makePhase('plain', [], {
    ...figures,
    durationMs,
    rps: (N * 1000) / durationMs,
    timeline: seconds.finish(end),
    ...fineSeries(fine, end, durationMs),
  })
  return makeRunResult({ label, phases: { plain: phase } })
}

/** As a phase keeps it: 100 ms points for phases of up to 5 s, none beyond (one point a second then). */
function fineSeries(fine: TimelineRecorder, end: number, durationMs: number): { timelineFine?: ReturnType<TimelineRecorder['finish']> } {
  return durationMs <= FINE_HORIZON_MS ? { timelineFine: fine.finish(end) } : {}
}

interface Trial {
  baselines: RunResult[]
  same: RunResult
  tail2x: RunResult
}

/** BASELINES runs of the baseline, then an A/A run and a run with p99 doubled, back to back on one drifting target. */
function trial(seed: number): Trial {
  const t = target(seed)
  const slot = (i: number): number => i * (N * GAP_MS + PAUSE_MS)
  const baselines = Array.from({ length: BASELINES }, (_, i) => runAt(t.plain, slot(i), `a${i + 1}`))
  return { baselines, same: runAt(t.plain, slot(BASELINES), 'same'), tail2x: runAt(t.tail2x, slot(BASELINES + 1), 'tail2x') }
}

const TRIAL_RUNS = Array.from({ length: TRIALS }, (_, i) => trial(1000 + i))

function compareWith(t: Trial, candidate: RunResult, withSet: boolean): Comparison {
  const baselines = t.baselines.map((result, i) => ({ name: `a${i + 1}.json`, result }))
  return compareRuns([baselines[0]!, { name: 'b.json', result: candidate }], withSet ? { baselines } : {})
}

/** Every metric change that was judged (an interval, enough requests), and those called better or worse. */
function calls(c: Comparison): { judged: number; called: string[] } {
  const judged = c.metrics.filter((m) => m.changes[1]?.interval && m.changes[1].verdict !== 'not enough requests')
  return { judged: judged.length, called: judged.filter((m) => m.changes[1]!.verdict !== 'within noise').map((m) => `${m.metric} ${m.changes[1]!.verdict}`) }
}

test('the false-call rate is derived: at most one call in 20 A/A pairs with 95 % probability', () => {
  const tail = (a: number): number => 1 - (1 - a) ** 20 - 20 * a * (1 - a) ** 19
  assert.ok(Math.abs(tail(DRIFT_ALPHA) - 0.05) < 1e-6, `P(Bin(20, ${DRIFT_ALPHA}) >= 2) = ${tail(DRIFT_ALPHA)}`)
})

test('the sim drifts: runs of one target move their p99 by far more than 4,000 requests explain', () => {
  const p99s = TRIAL_RUNS.flatMap((t) => t.baselines.map((r) => r.phases.plain!.latencyMs.p99))
  const spread = Math.max(...p99s) / Math.min(...p99s)
  assert.ok(spread > 1.3, `p99 across runs of one target moves by more than 30 % (seen ${spread.toFixed(2)}x)`)
})

test('over 20 A/A pairs judged against a baseline set, at most 1 in 20 metric comparisons is called better or worse', (t) => {
  let judged = 0
  const called: string[] = []
  for (const [i, t] of TRIAL_RUNS.entries()) {
    const c = calls(compareWith(t, t.same, true))
    judged += c.judged
    called.push(...c.called.map((x) => `trial ${i}: ${x}`))
  }
  t.diagnostic(`${called.length} of ${judged} called`)
  assert.ok(judged >= TRIALS * 8, `judged ${judged}`)
  assert.ok(called.length * 20 <= judged, `${called.length} of ${judged} called: ${called.join(', ')}`)
})

test('a real 2x change in p99 at n = 4,000 is called worse in every trial, with the baseline set as noise floor', () => {
  for (const [i, t] of TRIAL_RUNS.entries()) {
    const row = compareWith(t, t.tail2x, true).metrics.find((m) => m.metric === 'p99')!
    const p99 = t.baselines[0]!.phases.plain!.latencyMs.p99
    assert.equal(row.changes[1]!.verdict, 'worse', `trial ${i}: p99 ${p99} -> ${row.values[1]} (${JSON.stringify(row.changes[1])})`)
  }
})

/**
 * Without a baseline set, wander faster than a run (here over 200 ms in
 * runs of 4 s) is what the time series sees; the request count alone calls
 * it better or worse. Wander as slow as a run moves it whole and needs the
 * baseline set (docs/compare-and-ci.md gives the figures).
 */
test('a single baseline: the time series judges wander faster than a run, which the request count calls better or worse', (t) => {
  const count = (strip: boolean): { judged: number; called: number } => {
    let [judged, called] = [0, 0]
    for (let seed = 0; seed < TRIALS; seed++) {
      const [model] = createReplicaModels({ ...spec(SIGMA), drift: { ...DRIFT, tauMs: 200 } }, 1, 2000 + seed, 0)
      const runs = [0, 1].map((i) => runAt(model!, i * (N * GAP_MS + PAUSE_MS), `r${i}`))
      if (strip) for (const r of runs) Object.assign(r.phases.plain!, { timeline: [], timelineFine: undefined })
      const c = calls(compareRuns(runs.map((result, i) => ({ name: `r${i}.json`, result }))))
      judged += c.judged
      called += c.called.length
    }
    return { judged, called }
  }
  const countOnly = count(true)
  const withSeries = count(false)
  t.diagnostic(`request count alone: ${countOnly.called} of ${countOnly.judged} called; with the time series: ${withSeries.called} of ${withSeries.judged}`)
  assert.ok(countOnly.called * 20 > countOnly.judged, `the request count alone calls ${countOnly.called} of ${countOnly.judged}`)
  assert.ok(withSeries.called * 20 <= withSeries.judged, `with the time series ${withSeries.called} of ${withSeries.judged} called`)
})

test('the drift is seeded: the same seed and clock give the same factors, another seed others', () => {
  const factors = (seed: number): number[] => {
    const [model] = createReplicaModels({ base: { type: 'fixed', ms: 10 }, drift: DRIFT }, 1, seed, 0)
    return [0, 500, 1000, 5000].map((t) => model!.finishAt(t, 10) - t)
  }
  assert.deepEqual(factors(1), factors(1))
  assert.notDeepEqual(factors(1), factors(2))
  assert.ok(new Set(factors(1)).size > 1, 'the factor wanders')
})

test('the block bootstrap is seeded: the same series gives the same spread; a flat one none', () => {
  const series = Array.from({ length: 40 }, (_, i) => 10 + Math.sin(i / 4))
  const weights = series.map(() => 100)
  assert.equal(levelSpread(series, weights), levelSpread(series, weights))
  assert.equal(
    levelSpread(
      series.map(() => 10),
      weights,
    ),
    0,
  )
  assert.equal(runSpread({ timeline: [] }), null)
})

/**
 * A run that falls behind its rate (an open-loop queue: every request waits
 * for all before it) wanders by about half its own level over the run; the
 * bound is on the ratio, so a rise of three orders of magnitude stands out
 * of it, and no latency below 0 is allowed (the symmetric bound of a
 * difference read this as "within noise", [-66 ms, +3.8 s] for +1.9 s).
 */
test('a queue that grows all run long: a thousandfold rise is worse, and the interval allows no latency below 0', () => {
  // 12 s at 333 requests/s, as `-q 333 -z 12s`: one window a second, so few blocks and a wide t, as the run that read
  // "within noise" had; its latency climbs from 1 ms to 4 s.
  const steady = runOf((sent, i) => sent + 1 + (i % 7) / 10, 0, 'steady', 3)
  const queue = runOf((sent, i) => sent + 1 + i, 100 * N, 'queue', 3)
  const c = compareRuns([
    { name: 'steady.json', result: steady },
    { name: 'queue.json', result: queue },
  ])
  for (const metric of ['p50', 'p99', 'mean']) {
    const change = c.metrics.find((m) => m.metric === metric)!.changes[1]!
    assert.equal(change.noise, 'time series', metric)
    assert.equal(change.verdict, 'worse', `${metric}: ${JSON.stringify(change)}`)
    assert.ok(change.interval![0] > 0, `${metric}: ${change.interval}`)
  }
})

/** Student's t at the drift level with 30 degrees of freedom. */
const DRIFT_T30 = studentTQuantile(1 - DRIFT_ALPHA / 2, 30)

test("the time series' bound is on the ratio: equal spreads allow the same factor up and down; small ones the symmetric bound", () => {
  const wide = timeSeriesInterval(90, { value: 10, spread: 0.5, df: 8 }, { value: 100, spread: 0.5, df: 8 })!
  // after * e^-h - before and after * e^h - before: the factors either side of 100 are one.
  const [down, up] = [(wide[0] + 10) / 100, (wide[1] + 10) / 100]
  assert.ok(Math.abs(down * up - 1) < 1e-9, `${down} x ${up}`)
  assert.ok(wide[0] > -10, 'never below a latency of 0')
  const narrow = timeSeriesInterval(1, { value: 100, spread: 0.01, df: 30 }, { value: 101, spread: 0.01, df: 30 })!
  // The symmetric bound was 1 ± t * hypot(1, 1.01): the same width within 1 %, its centre off the change by about h / 2 of it.
  const half = (narrow[1] - narrow[0]) / 2
  const symmetric = DRIFT_T30 * Math.hypot(1, 1.01)
  assert.ok(Math.abs(half / symmetric - 1) < 0.01, `${half} against ${symmetric}`)
  assert.ok(Math.abs(narrow[0] + half - 1) < 0.05 * half, `centred on the change: ${narrow}`)
  // Only the side with a spread counts; none: no interval.
  assert.equal(timeSeriesInterval(1, { value: 1, spread: null, df: 0 }, { value: 2, spread: null, df: 0 }), null)
  assert.deepEqual(
    timeSeriesInterval(1, { value: 1, spread: null, df: 0 }, { value: 2, spread: 0.1, df: 8 }),
    timeSeriesInterval(1, { value: 1, spread: 0, df: 8 }, { value: 2, spread: 0.1, df: 8 }),
  )
})
