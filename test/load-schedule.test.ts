/**
 * --load-schedule and --skip-first (issue 48 item 5, ghz's): the pacer's
 * send times as the schedule places them, counted per step from its own
 * intended starts (the request log); the schedule recorded in the JSON
 * exactly, the same for the plain and the hedged phase; what --skip-first
 * leaves out beside the server's count; bad input refused in one line.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { concurrencySeconds, SendTimes, scheduleSeconds, slotSpans, stairRates } from '../src/engine/load-schedule.js'
import { run } from '../src/run/run.js'
import { fetchServerStats, resetServerStats, startTarget, type Target } from '../src/sim/target.js'
import { parseProfile } from '../src/sim/profile.js'
import type { LoadSchedule, PhaseResult, RunResult } from '../src/results/run-result.js'
import type { RunOptions } from '../src/run/run-options.js'
import type { RequestRecord } from '../src/results/request-record.js'
import { renderText } from '../src/report/text.js'
import { renderHtml } from '../src/report/html.js'
import { renderCsvSummary } from '../src/report/csv.js'
import { parseCsvObjects } from './helpers/csv.js'
import { runMain } from './helpers/main-cases.js'
import { mergeResults } from '../src/stats/result-merge.js'
import { sumScheduleSeconds } from '../src/stats/phase-algebra.js'

let target: Target
before(async () => {
  const profile = parseProfile({ name: 'quick', description: 'fast', replicas: 2, model: { base: { type: 'uniform', min: 1, max: 2 } } }, 'quick')
  target = await startTarget({ profile, seed: 3 })
})
after(async () => {
  await target?.close()
})

/** A run with its request log kept in memory. */
async function runLogged(options: RunOptions): Promise<{ result: RunResult; records: RequestRecord[] }> {
  const records: RequestRecord[] = []
  const result = await run({ ...options, requestSink: { write: (r) => records.push(r) > 0, waitForDrain: async () => {} } })
  return { result, records }
}

const STEP: LoadSchedule = { kind: 'step', start: 40, step: 40, end: 120, stepMs: 250, maxMs: null }

test('step: each stair its rate, held at --load-end; the k-th send when the running count reaches k', () => {
  assert.deepEqual(stairRates(STEP), [40, 80, 120])
  const times = new SendTimes(STEP)
  // 40/s for 250 ms is 10 sends, 25 ms apart; then 20 at 12.5 ms; then 30/250 ms at 120/s, held.
  assert.equal(times.at(0), 0)
  assert.equal(times.at(9), 225)
  assert.equal(times.at(10), 250)
  assert.equal(times.at(29), 250 + 19 * 12.5)
  assert.equal(times.at(30), 500)
  assert.equal(times.at(90), 1000)
  assert.deepEqual(
    [250, 500, 750, 1000].map((ms) => times.dueBefore(ms)),
    [10, 30, 60, 90],
  )
  // Sends are asked for in order, but a question out of order is answered alike.
  assert.equal(times.at(5), 125)
})

test('line: a step every second; a step down held at its end; --load-max-duration holds the rate reached', () => {
  assert.deepEqual(stairRates({ kind: 'line', start: 10, step: 5, end: 22, stepMs: 1000, maxMs: null }), [10, 15, 20, 22])
  assert.deepEqual(stairRates({ kind: 'step', start: 100, step: -30, end: 20, stepMs: 1000, maxMs: null }), [100, 70, 40, 20])
  assert.deepEqual(stairRates({ kind: 'line', start: 10, step: 10, end: null, stepMs: 1000, maxMs: 2500 }), [10, 20, 30])
  assert.deepEqual(stairRates({ kind: 'const', start: 7, step: 0, end: null, stepMs: 1000, maxMs: null }), [7])
})

test('per second: the sends the schedule placed, never past the last one sent, beside the sends counted', () => {
  const times = new SendTimes({ kind: 'line', start: 10, step: 10, end: 30, stepMs: 1000, maxMs: null })
  assert.deepEqual(scheduleSeconds(times, [10, 19, 21, 5], 55), [
    { t: 0, rate: 10, asked: 10, sent: 10 },
    { t: 1, rate: 20, asked: 20, sent: 19 },
    { t: 2, rate: 30, asked: 25, sent: 21 },
    { t: 3, rate: 30, asked: 0, sent: 5 },
  ])
})

test('concurrency: a slot takes part while its stair holds more than its index; a step down retires slots at its stairs', () => {
  const up: LoadSchedule = { kind: 'line', start: 2, step: 3, end: 7, stepMs: 1000, maxMs: null }
  assert.deepEqual(stairRates(up), [2, 5, 7])
  assert.deepEqual(
    slotSpans(up, 7).map((s) => [s.fromMs, s.untilMs]),
    [
      [0, Infinity],
      [0, Infinity],
      [1000, Infinity],
      [1000, Infinity],
      [1000, Infinity],
      [2000, Infinity],
      [2000, Infinity],
    ],
  )
  const down: LoadSchedule = { kind: 'step', start: 3, step: -1, end: 1, stepMs: 500, maxMs: null }
  assert.deepEqual(
    slotSpans(down, 3).map((s) => [s.fromMs, s.untilMs]),
    [
      [0, Infinity],
      [0, 1000],
      [0, 500],
    ],
  )
  assert.deepEqual(concurrencySeconds(up, [10, 20, 30, 40]), [
    { t: 0, concurrency: 2, sent: 10 },
    { t: 1, concurrency: 5, sent: 20 },
    { t: 2, concurrency: 7, sent: 30 },
    { t: 3, concurrency: 7, sent: 40 },
  ])
})

test('parts of a schedule (--workers, --shard): part i of n sends the sends i, i+n, ...; their asked counts, rates and stairs add up to the whole', () => {
  const whole = new SendTimes(STEP)
  const parts = [0, 1, 2].map((index) => new SendTimes(STEP, { index, count: 3 }))
  const times = parts.flatMap((p) => Array.from({ length: 30 }, (_, k) => p.at(k))).sort((a, b) => a - b)
  assert.deepEqual(
    times,
    Array.from({ length: 90 }, (_, k) => whole.at(k)),
  )
  for (const ms of [1, 250, 260, 500, 777, 1000])
    assert.equal(
      parts.reduce((sum, p) => sum + p.dueBefore(ms), 0),
      whole.dueBefore(ms),
      `${ms} ms`,
    )
  // Each part's series asks its share; summed, the whole's (rates to the thousandth: 40/3 is 13.333).
  const series = parts.map((p) => scheduleSeconds(p, [30, 30], 30))
  assert.deepEqual(
    series.map((s) => s[0]!.asked),
    [30, 30, 30],
  )
  assert.deepEqual(sumScheduleSeconds(series)[0], { t: 0, rate: 39.999, asked: 90, sent: 90 })
  // A concurrency schedule's stairs 2, 5, 7 over 2 threads: 1+1, 3+2, 4+3 (the first thread takes the remainder).
  const up: LoadSchedule = { kind: 'line', start: 2, step: 3, end: 7, stepMs: 1000, maxMs: null }
  const halves = [0, 1].map((index) => concurrencySeconds(up, [1, 1, 1], { index, count: 2 }))
  assert.deepEqual(
    halves.map((h) => h.map((s) => s.concurrency)),
    [
      [1, 3, 4],
      [1, 2, 3],
    ],
  )
  assert.deepEqual(
    sumScheduleSeconds(halves).map((s) => s.concurrency),
    [2, 5, 7],
  )
  assert.deepEqual(
    slotSpans(up, 3, { index: 1, count: 2 }).map((s) => [s.fromMs, s.untilMs]),
    [
      [0, Infinity],
      [1000, Infinity],
      [2000, Infinity],
    ],
  )
})

/** A phase's records by the window's sequence (the skipped first among them), intended starts from the window's start. */
function intendedStarts(records: RequestRecord[], phase: PhaseResult): number[] {
  return records
    .filter((r) => r.phase === phase.name)
    .sort((a, b) => a.seq - b.seq)
    .map((r) => r.startMs - phase.startOffsetMs)
}

test('a step schedule: every send at the time the schedule gives it, the same stairs for the plain and the hedged phase, recorded exactly', {
  timeout: 60_000,
}, async () => {
  const { result, records } = await runLogged({
    urls: target.urls,
    requests: 100,
    warmup: 20,
    concurrency: 20,
    seed: 5,
    loadSchedule: { kind: 'step', start: 40, step: 40, end: 120, stepDurationMs: 250 },
    // No hedge fires before this: the hedged phase sends what the plain one does.
    hedge: { delay: 10_000 },
  })
  assert.deepEqual(result.config.loadSchedule, STEP)
  assert.equal(result.config.rate, 40, "the rate the warm-up ran at: the schedule's start")
  const times = new SendTimes(STEP)
  const plain = result.phases.plain!
  const hedged = result.phases.hedged!
  for (const phase of [plain, hedged]) {
    const starts = intendedStarts(records, phase)
    assert.equal(starts.length, 100, phase.name)
    // The log keeps microseconds of the run's clock; the phase's offset too: two roundings apart at most.
    for (const [k, at] of starts.entries()) assert.ok(Math.abs(at - times.at(k)) <= 0.002, `${phase.name} send ${k}: ${at} ms, scheduled ${times.at(k)} ms`)
    // Per stair, the sends the schedule placed in it: 10, 20, then 30 per 250 ms.
    const perStair = [0, 1, 2, 3].map((i) => starts.filter((s) => s >= i * 250 - 0.002 && s < (i + 1) * 250 - 0.002).length)
    assert.deepEqual(perStair, [10, 20, 30, 30], phase.name)
    // The JSON's series: what the schedule asked each second (the 100 sends were all placed in the first), and every send counted once.
    const series = phase.scheduleSeconds!
    assert.deepEqual(series[0], { t: 0, rate: 40, asked: 90, sent: series[0]!.sent })
    assert.equal(
      series.reduce((sum, s) => sum + s.asked!, 0),
      100,
    )
    assert.equal(
      series.reduce((sum, s) => sum + s.sent, 0),
      100,
    )
    // A send never leaves before its time: by the end of each second, no more sent than asked.
    let asked = 0
    let sent = 0
    for (const s of series) {
      asked += s.asked!
      sent += s.sent
      assert.ok(sent <= asked, `${phase.name} at ${s.t} s: ${sent} sent, ${asked} asked`)
    }
  }
  assert.deepEqual(
    plain.scheduleSeconds!.map((s) => [s.t, s.rate, s.asked]),
    hedged.scheduleSeconds!.map((s) => [s.t, s.rate, s.asked]),
  )
  assert.equal(plain.scheduleSeconds!.length >= 2, true)
  assert.match(renderText(result), /Schedule \(step 40\/s → 120\/s, \+40\/s every 250 ms\): 100 sends asked, 100 sent/)
  assert.match(renderText(result), /--load-schedule step 40\/s → 120\/s, \+40\/s every 250 ms \(open loop\)/)
  const html = renderHtml(result)
  for (const name of ['plain', 'hedged']) assert.ok(html.includes(`data-series="${name}:asked"`), name)
})

test("a step schedule over --workers 2: every send at its global time, the threads' series summed to the schedule, the server counts every one", {
  timeout: 60_000,
}, async () => {
  await resetServerStats(target.statsUrl)
  const { result, records } = await runLogged({
    urls: target.urls,
    requests: 100,
    warmup: 20,
    concurrency: 20,
    workers: 2,
    seed: 16,
    mode: 'plain',
    loadSchedule: { kind: 'step', start: 40, step: 40, end: 120, stepDurationMs: 250 },
    serverStatsUrl: target.statsUrl,
  })
  const times = new SendTimes(STEP)
  const plain = result.phases.plain!
  const starts = intendedStarts(records, plain)
  assert.equal(starts.length, 100)
  // A worker's k-th request is the log's k·2 + i: the schedule's send of that number, whichever thread sent it (from the first send: the threads share its instant).
  for (const [k, at] of starts.entries())
    assert.ok(Math.abs(at - starts[0]! - times.at(k)) <= 0.002, `send ${k}: ${at - starts[0]!} ms, scheduled ${times.at(k)} ms`)
  const series = plain.scheduleSeconds!
  assert.deepEqual(series[0], { t: 0, rate: 40, asked: 90, sent: series[0]!.sent })
  assert.equal(
    series.reduce((sum, s) => sum + s.asked!, 0),
    100,
  )
  assert.equal(
    series.reduce((sum, s) => sum + s.sent, 0),
    100,
  )
  assert.equal(plain.requests, 100)
  assert.equal(plain.server!.received, 100)
  assert.equal(plain.server!.match, true)
})

/**
 * A concurrency schedule's phase: its series asks `asked` in its two seconds and counts every request sent; by the
 * log, never more in flight than the stair asks (all threads together). Returns the most in flight in the last stair.
 */
function checkConcurrency(plain: PhaseResult, records: RequestRecord[], schedule: LoadSchedule, asked: number[]): number {
  assert.deepEqual(
    plain.scheduleSeconds!.map((s) => [s.t, s.concurrency]),
    asked.map((c, t) => [t, c]),
  )
  assert.equal(
    plain.scheduleSeconds!.reduce((sum, s) => sum + s.sent, 0),
    plain.requests,
  )
  const mine = records
    .filter((r) => r.phase === 'plain')
    .map((r) => ({ start: r.startMs - plain.startOffsetMs, end: r.startMs - plain.startOffsetMs + r.latencyMs }))
  const counts = new SendTimes(schedule)
  let most = 0
  for (const r of mine) {
    // In flight as this one left: a slot's next request leaves after its last one ended (the log's microseconds apart at most).
    const inFlight = mine.filter((o) => o.start <= r.start && o.end > r.start + 0.002).length
    assert.ok(inFlight <= counts.rateAt(r.start), `${inFlight} in flight at ${r.start} ms, ${counts.rateAt(r.start)} asked`)
    if (r.start >= 900) most = Math.max(most, inFlight)
  }
  return most
}

test('a concurrency step up over --workers 2: each thread its share of each stair, never more in flight in all than the stair asks', {
  timeout: 60_000,
}, async () => {
  const schedule: LoadSchedule = { kind: 'step', start: 3, step: 2, end: 7, stepMs: 300, maxMs: null }
  const { result, records } = await runLogged({
    urls: target.urls,
    durationMs: 1200,
    warmup: 10,
    mode: 'plain',
    workers: 2,
    seed: 17,
    concurrencySchedule: { kind: 'step', start: 3, step: 2, end: 7, stepDurationMs: 300 },
  })
  checkConcurrency(result.phases.plain!, records, schedule, [3, 7])
})

test('two shards of a step schedule: each sends its part; their merge asks and sends the whole schedule', { timeout: 60_000 }, async () => {
  await resetServerStats(target.statsUrl)
  const shards = []
  for (const index of [0, 1])
    shards.push(
      await run({
        urls: target.urls,
        requests: 100,
        warmup: 20,
        concurrency: 10,
        seed: 18,
        mode: 'plain',
        runId: 'sched',
        shard: { index, count: 2 },
        loadSchedule: { kind: 'step', start: 40, step: 40, end: 120, stepDurationMs: 250 },
      }),
    )
  for (const r of shards) {
    const series = r.phases.plain!.scheduleSeconds!
    assert.deepEqual(series[0], { t: 0, rate: 20, asked: 45, sent: series[0]!.sent })
    assert.equal(
      series.reduce((sum, s) => sum + s.asked!, 0),
      50,
    )
  }
  const merged = mergeResults(shards.map((result, i) => ({ result, source: `s${i}.json` })))
  const series = merged.phases.plain!.scheduleSeconds!
  assert.deepEqual(series[0], { t: 0, rate: 40, asked: 90, sent: series[0]!.sent })
  assert.equal(
    series.reduce((sum, s) => sum + s.asked!, 0),
    100,
  )
  assert.equal(
    series.reduce((sum, s) => sum + s.sent, 0),
    100,
  )
  assert.equal((await fetchServerStats(target.statsUrl)).totals.received, 2 * 20 + 100, 'each shard warms up with --warmup')
})

test('--skip-first: each measured phase sends N more first and counts none of them; the server counts them all', { timeout: 60_000 }, async () => {
  await resetServerStats(target.statsUrl)
  const result = await run({
    urls: target.urls,
    requests: 30,
    warmup: 10,
    concurrency: 4,
    seed: 6,
    skipFirst: 7,
    hedge: { delay: 10_000 },
    serverStatsUrl: target.statsUrl,
  })
  assert.equal(result.config.skipFirst, 7)
  assert.equal(result.phases.warmup!.requests, 10)
  assert.equal(result.phases.warmup!.skipped, undefined)
  for (const phase of [result.phases.plain!, result.phases.hedged!]) {
    assert.equal(phase.requests, 30, phase.name)
    assert.equal(phase.skipped, 7, phase.name)
    assert.equal(phase.attempts, 30, phase.name)
    assert.equal(phase.server!.received, 37, phase.name)
    assert.equal(phase.server!.clientAttempts, 37, phase.name)
    assert.equal(phase.server!.match, true, phase.name)
  }
  assert.equal((await fetchServerStats(target.statsUrl)).totals.received, 10 + 37 + 37)
  assert.match(renderText(result), /Skipped: the first 7 requests were sent and left out of every figure above \(--skip-first\)/)
  // The HTML's settings and the CSV's phase rows say it too.
  const html = renderHtml(result)
  assert.match(html, /requests each measured phase sent first and left out \(--skip-first\)/)
  assert.ok(html.includes('plain 7, hedged 7'), 'the HTML names what each phase left out')
  const csv = parseCsvObjects(renderCsvSummary(result))
  assert.deepEqual(
    csv.filter((r) => r.scope === 'phase').map((r) => [r.phase, r.skipped]),
    [
      ['warmup', ''],
      ['plain', '7'],
      ['hedged', '7'],
    ],
  )
  assert.ok(csv.filter((r) => r.scope === 'replica').every((r) => r.skipped === ''))
})

/** --skip-first 5 in a mix of two targets on `workers` threads: N per phase whatever target they drew; the per-target rows exclude them, every server count includes them. */
async function skipFirstMix(workers: number, seed: number): Promise<void> {
  await resetServerStats(target.statsUrl)
  const result = await run({
    urls: target.urls,
    targets: [
      { method: 'GET', path: '/a', weight: 2 },
      { method: 'GET', path: '/b' },
    ],
    requests: 30,
    warmup: 10,
    concurrency: 4,
    workers,
    seed,
    skipFirst: 5,
    hedge: { delay: 10_000 },
    serverStatsUrl: target.statsUrl,
  })
  const targets = result.targets!
  for (const name of ['plain', 'hedged'] as const) {
    const phase = result.phases[name]!
    assert.equal(phase.skipped, 5, name)
    assert.equal(phase.requests, 30, name)
    assert.equal(phase.attempts, 30, name)
    assert.equal(
      targets.reduce((sum, t) => sum + t.phases[name]!.requests, 0),
      30,
      `${name}: the targets' rows exclude the skipped`,
    )
    assert.equal(phase.server!.received, 35, name)
    assert.equal(phase.server!.match, true, name)
  }
  // Each target's count at the server: its counted attempts and the skipped ones it drew, in each window.
  for (const t of targets) for (const s of t.server!) assert.equal(s.match, true, `${t.name} ${s.phases}`)
  const measured = targets.map((t) => t.server!.filter((s) => !s.phases.includes('warmup')).reduce((sum, s) => sum + s.received, 0))
  assert.equal(
    measured.reduce((x, y) => x + y, 0),
    70,
  )
  assert.equal((await fetchServerStats(target.statsUrl)).totals.received, 10 + 35 + 35)
}

test('--skip-first with --targets: N per phase whatever target they drew; the per-target rows exclude them, the servers count them', { timeout: 60_000 }, () =>
  skipFirstMix(1, 12),
)

test('--skip-first with --workers 2: N per phase over both threads (7: 4 and 3), exactly; the server counts them all', { timeout: 60_000 }, async () => {
  await resetServerStats(target.statsUrl)
  const result = await run({
    urls: target.urls,
    requests: 31,
    warmup: 10,
    concurrency: 4,
    workers: 2,
    seed: 13,
    skipFirst: 7,
    hedge: { delay: 10_000 },
    serverStatsUrl: target.statsUrl,
  })
  assert.equal(result.phases.warmup!.skipped, undefined)
  for (const phase of [result.phases.plain!, result.phases.hedged!]) {
    assert.equal(phase.requests, 31, phase.name)
    assert.equal(phase.skipped, 7, phase.name)
    assert.equal(phase.attempts, 31, phase.name)
    assert.equal(phase.server!.received, 38, phase.name)
    assert.equal(phase.server!.clientAttempts, 38, phase.name)
    assert.equal(phase.server!.match, true, phase.name)
  }
  assert.equal((await fetchServerStats(target.statsUrl)).totals.received, 10 + 38 + 38)
})

test('--skip-first with --workers 2 and --targets: N per phase over the threads and the targets; every count matches', { timeout: 60_000 }, () =>
  skipFirstMix(2, 14),
)

test('--skip-first with --shard: N split over the shards as -n is (5: 3 and 2); their merge skips N, the servers count every one', {
  timeout: 60_000,
}, async () => {
  await resetServerStats(target.statsUrl)
  const shards = []
  for (const index of [0, 1])
    shards.push(
      await run({
        urls: target.urls,
        requests: 30,
        warmup: 10,
        concurrency: 4,
        seed: 15,
        skipFirst: 5,
        runId: 'skip',
        shard: { index, count: 2 },
        hedge: { delay: 10_000 },
      }),
    )
  assert.deepEqual(
    shards.map((r) => r.phases.plain!.skipped),
    [3, 2],
  )
  const merged = mergeResults(shards.map((result, i) => ({ result, source: `s${i}.json` })))
  assert.equal(merged.config.skipFirst, 5)
  for (const name of ['plain', 'hedged'] as const) {
    assert.equal(merged.phases[name]!.skipped, 5, name)
    assert.equal(merged.phases[name]!.requests, 30, name)
  }
  assert.equal((await fetchServerStats(target.statsUrl)).totals.received, 2 * 10 + 35 + 35)
})

test('interleaved: one schedule for the window, each phase skipping its own first N', { timeout: 60_000 }, async () => {
  const result = await run({
    urls: target.urls,
    requests: 40,
    warmup: 10,
    concurrency: 8,
    seed: 8,
    schedule: 'interleaved',
    skipFirst: 3,
    loadSchedule: { kind: 'line', start: 100, step: 100, end: 200 },
    hedge: { delay: 10_000 },
  })
  const plain = result.phases.plain!
  const hedged = result.phases.hedged!
  assert.equal(plain.skipped, 3)
  assert.equal(hedged.skipped, 3)
  assert.equal(plain.requests + hedged.requests, 80)
  assert.deepEqual(plain.scheduleSeconds, hedged.scheduleSeconds)
  assert.equal(
    plain.scheduleSeconds!.reduce((sum, s) => sum + s.asked!, 0),
    86,
  )
})

test("a concurrency step up: never more requests in flight than the stair asks, by the generator's own clock; the stairs recorded", {
  timeout: 60_000,
}, async () => {
  const schedule: LoadSchedule = { kind: 'step', start: 2, step: 2, end: 8, stepMs: 300, maxMs: null }
  const { result, records } = await runLogged({
    urls: target.urls,
    durationMs: 1200,
    warmup: 10,
    mode: 'plain',
    seed: 9,
    concurrencySchedule: { kind: 'step', start: 2, step: 2, end: 8, stepDurationMs: 300 },
  })
  assert.deepEqual(result.config.concurrencySchedule, schedule)
  assert.equal(result.config.concurrency, 8, "the most in flight: the window's slots")
  assert.equal(result.config.rate, null)
  const most = checkConcurrency(result.phases.plain!, records, schedule, [2, 8])
  assert.ok(most > 2, `the last stair had ${most} in flight at most`)
  assert.match(renderText(result), /Concurrency schedule \(step 2 → 8, \+2 every 300 ms\): \d+ sent, 8 in flight asked in its last second/)
  assert.ok(renderHtml(result).includes('data-series="plain:in-flight"'))
})

const NOWHERE = 'http://127.0.0.1:9/'

test('bad input: one line, exit 2, for each inconsistent schedule', { timeout: 60_000 }, async () => {
  const cases: Array<[string[], RegExp]> = [
    [['--load-schedule', 'step', '--load-start', '10', '--load-step-duration', '1s'], /^hedgebench: --load-schedule step needs --load-step/],
    [
      ['--load-schedule', 'step', '--load-start', '100', '--load-step', '10', '--load-end', '50', '--load-step-duration', '1s'],
      /--load-end 50 is below --load-start 100: a step up/,
    ],
    [['--load-schedule', 'step', '--load-start', '10', '--load-step', '5'], /--load-schedule step needs --load-step-duration/],
    [['--load-schedule', 'const'], /--load-schedule const needs -q/],
    [['--load-schedule', 'const', '-q', '0'], /invalid -q 0 \(must be above 0\)/],
    [['--concurrency-schedule', 'const', '-c', '0'], /invalid -c 0 \(must be a whole number above 0\)/],
    [['--load-schedule', 'const', '-q', '10', '--load-step', '5'], /--load-schedule const is -q's constant value: --load-step is only for step and line$/],
    [
      ['--load-schedule', 'const', '-q', '10', '--load-start', '5', '--load-end', '9'],
      /--load-schedule const is -q's constant value: --load-start, --load-end are only for step and line$/,
    ],
    [['--load-schedule', 'line', '-q', '10', '--load-start', '10', '--load-step', '5'], /-q with --load-schedule line: it starts at --load-start/],
    [['--load-start', '10'], /--load-start: only with --load-schedule step or line/],
    [['--load-schedule', 'line', '--load-start', '10', '--load-step=-5'], /a step down \(--load-step -5\) needs --load-end or --load-max-duration/],
    [['--load-schedule', 'line', '--load-start', '10', '--load-step=-5', '--load-max-duration', '3s'], /reaches 0 requests\/s before --load-max-duration/],
    [['--load-schedule', 'line', '--load-start', '10', '--load-step', '5', '--load-step-duration', '2s'], /--load-step-duration is for --load-schedule step/],
    [['--load-schedule', 'line', '--load-start', '0', '--load-step', '5'], /invalid --load-start 0/],
    [['--skip-first', '-1'], /invalid --skip-first -1/],
    [['--load-schedule', 'ramp'], /load-schedule/],
    [
      ['--concurrency-schedule', 'step', '-c', '4', '--concurrency-start', '2', '--concurrency-end', '8', '--concurrency-step-duration', '1s'],
      /-c with --concurrency-schedule step: it starts at --concurrency-start/,
    ],
    [['--concurrency-schedule', 'line', '--concurrency-start', '2'], /--concurrency-schedule line needs --concurrency-end or --concurrency-max-duration/],
    [
      ['--concurrency-schedule', 'line', '--concurrency-start', '2', '--concurrency-end', '8', '-q', '50'],
      /--concurrency-schedule is for a closed loop: -q makes the run open-loop/,
    ],
    [['--concurrency-schedule', 'line', '--concurrency-start', '2', '--concurrency-step', '1.5', '--concurrency-end', '8'], /invalid --concurrency-step 1.5/],
    [['--concurrency-end', '8'], /--concurrency-end: only with --concurrency-schedule step or line/],
  ]
  for (const [flags, message] of cases) {
    const out = await runMain([NOWHERE, '-n', '5', '--no-save', ...flags])
    assert.equal(out.code, 2, `${flags.join(' ')}: ${out.stderr}`)
    assert.equal(out.stderr.trim().split('\n').length, 1, `${flags.join(' ')}: ${out.stderr}`)
    assert.match(out.stderr.trim(), message, flags.join(' '))
  }
})
