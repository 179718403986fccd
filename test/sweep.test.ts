/**
 * hedgebench sweep on the simulated replicas: one warm-up, then one window in
 * which the plain lane and a lane per setting take turns; every lane gets its
 * share exactly and the lanes' attempts are what the servers received; the
 * frontier's cost falls as the delay rises, the recommendation keeps to
 * --max-extra, shared slowness gets no recommendation, an interrupted sweep
 * (Ctrl-C to the CLI) keeps what every lane measured, and bad lists are one
 * line and exit 2. With --server-stats every attempt of a lane carries its
 * tag (x-hedgebench-lane), and the simulated replicas, HTTP and gRPC, count
 * each lane's attempts exactly; a target that does not count lanes gets '-'.
 * -z bounds the window by time, the lanes still in equal shares.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { LANE_HEADER } from '../src/wire/stats.js'
import { startServer } from './helpers/servers.js'
import { spawnTarget, type Target } from '../src/sim/target.js'
import { MAX_SWEEP_SETTINGS, parseAttemptsList, parseBudgetList, parseDelayList, planSettings, sweep } from '../src/run/sweep.js'
import { shuffledBlocks } from '../src/run/lane.js'
import { seededRandom } from '../src/core/random.js'
import { sweepFrontier } from '../src/report/sweep-frontier.js'
import { renderSweepText } from '../src/report/sweep-text.js'
import { UsageError } from '../src/core/errors.js'
import { SIM_PROTO, SIM_WORK_CALL } from '../src/sim/grpc-sim-service.js'
import type { SweepResult } from '../src/results/sweep-result.js'
import { runMainCases } from './helpers/main-cases.js'
import { startCli } from './helpers/cli.js'
import { cliSession } from './helpers/cli-session.js'
import { until } from './helpers/until.js'

const session = cliSession('hedgebench-sweep-')
let pi: Target
let shared: Target
before(async () => {
  ;[pi, shared] = await Promise.all([spawnTarget({ profile: 'pi', seed: 3 }), spawnTarget({ profile: 'shared-slow', seed: 11 })])
})
after(async () => {
  await Promise.all([pi?.close(), shared?.close()])
})

/** Each lane's count at the servers is exactly its attempts: the plain lane's and every setting's. */
function assertLaneCounts(result: SweepResult): void {
  const plain = result.run.phases.plain!
  assert.ok(result.plainServer, 'the plain lane counted at the servers')
  assert.equal(result.plainServer.received, plain.attempts, 'plain lane')
  assert.equal(result.plainServer.clientAttempts, plain.attempts)
  assert.equal(result.plainServer.match, true)
  for (const s of result.settings) {
    assert.ok(s.server, `${s.label} counted at the servers`)
    assert.equal(s.server.received, s.hedged.attempts, `${s.label}: the servers' count of its lane is its attempts`)
    assert.equal(s.server.match, true)
    if (!result.partial) assert.equal(s.server.received, s.server.completed + s.server.cancelled, `${s.label}: every attempt answered or cancelled`)
    assert.ok(s.server.started !== undefined && s.server.started <= s.server.received, `${s.label}: started`)
  }
  assert.equal(
    result.plainServer.received + result.settings.reduce((sum, s) => sum + s.server!.received, 0),
    result.server?.received,
    'the lanes add up to the window',
  )
}

/** Every attempt of every lane, the plain one included. */
function laneAttempts(result: SweepResult): number {
  return result.run.phases.plain!.attempts + result.settings.reduce((sum, s) => sum + s.hedged.attempts, 0)
}

test('the lists: delays, attempts and budgets, each item read as its flag reads one', () => {
  assert.deepEqual(parseDelayList('p75, p99.9,20ms,1s'), [
    { label: 'p75', percentile: 75 },
    { label: 'p99.9', percentile: 99.9 },
    { label: '20ms', fixedMs: 20 },
    { label: '1s', fixedMs: 1000 },
  ])
  for (const bad of ['', 'p75,,p90', 'p100', 'fast', 'p90,p90', 'auto']) assert.throws(() => parseDelayList(bad), UsageError, bad)
  assert.deepEqual(parseAttemptsList('2, 3'), [2, 3])
  for (const bad of ['1', '6', '2,2', 'two', '2.5', '']) assert.throws(() => parseAttemptsList(bad), UsageError, bad)
  assert.deepEqual(parseBudgetList('5%,10,off'), [5, 10, null])
  for (const bad of ['101%', '5,5%', 'off,off', 'some', '%']) assert.throws(() => parseBudgetList(bad), UsageError, bad)
})

test('the settings are the product of the lists, in order, named by what varies; too many is refused', () => {
  const delays = parseDelayList('p90,20ms')
  const plan = planSettings(delays, [2, 3], [10])
  assert.deepEqual(
    plan.map((s) => [s.label, s.maxAttempts, s.budgetPct]),
    [
      ['p90, 2 attempts', 2, 10],
      ['p90, 3 attempts', 3, 10],
      ['20ms, 2 attempts', 2, 10],
      ['20ms, 3 attempts', 3, 10],
    ],
  )
  assert.deepEqual(plan[2]!.hedge, { delay: { fixedMs: 20 }, maxAttempts: 2, budgetPct: 10 })
  assert.deepEqual(
    planSettings(delays, [2], [5, null]).map((s) => s.label),
    ['p90, budget 5%', 'p90, budget off', '20ms, budget 5%', '20ms, budget off'],
  )
  const many = parseDelayList(Array.from({ length: MAX_SWEEP_SETTINGS / 2 + 1 }, (_, i) => `${i + 1}ms`).join(','))
  assert.equal(planSettings(many.slice(1), [2, 3], [null]).length, MAX_SWEEP_SETTINGS)
  assert.throws(() => planSettings(many, [2, 3], [null]), /42 settings \(21 delays × 2 --max-attempts × 1 budgets\): a sweep takes at most 40/)
})

test('a sweep refuses --workers before it sends anything: the lanes share one thread', async () => {
  await assert.rejects(
    sweep({ urls: ['http://127.0.0.1:9'], delays: [20], workers: 2 }),
    (err: Error) => err instanceof UsageError && /--workers is not supported/.test(err.message),
  )
})

test('lanes by shuffled blocks: each block holds every lane once, in a seeded order', () => {
  const draw = (seed: number): number[] => {
    const next = shuffledBlocks(5, seededRandom(seed))
    return Array.from({ length: 50 }, next)
  }
  const picks = draw(1)
  for (let b = 0; b < 10; b++) assert.deepEqual([...picks.slice(b * 5, b * 5 + 5)].sort(), [0, 1, 2, 3, 4], `block ${b}`)
  assert.deepEqual(draw(1), picks, 'the same seed, the same order')
  assert.notDeepEqual(draw(2), picks)
  assert.notDeepEqual(picks.slice(0, 5), picks.slice(5, 10), 'not one fixed order')
})

test('pi, 4 delays in one window: one warm-up, equal shares, attempts == servers received, extra load falls as the delay rises, the recommendation keeps to --max-extra', async () => {
  const requests = 2000
  const result = await sweep({
    urls: pi.urls,
    // 8 ms is below most of pi's 5-15 ms answers (a hedge for most requests), 400 ms above all but its 1 s stalls (and still hedges them under 1 s).
    delays: [8, 'p50', 'p90', 400],
    // ~20 stalls of 1 s in the plain lane: the exact test tells their removal from noise (it needs 6 against none).
    requests,
    warmup: 200,
    concurrency: 16,
    seed: 7,
    slowMs: 1000,
    serverStatsUrl: pi.statsUrl,
    hedge: { budgetPct: null as unknown as number },
  })
  assert.equal(result.partial, false)
  assert.ok(result.run.phases.warmup, 'one warm-up, in the run')
  assert.equal(result.run.phases.hedged, undefined, 'each setting has its own lane')
  assert.deepEqual(
    result.settings.map((s) => s.label),
    ['8ms', 'p50', 'p90', '400ms'],
  )
  assert.deepEqual(
    [result.run.phases.plain!, ...result.settings.map((s) => s.hedged)].map((p) => p.requests),
    [requests, requests, requests, requests, requests],
    'each lane its share, exactly',
  )
  assert.equal(result.server?.received, laneAttempts(result), "the lanes' attempts are what the servers received")
  assert.equal(result.server?.match, true)
  assertLaneCounts(result)
  assert.ok(result.settings[1]!.delayMs <= result.settings[2]!.delayMs, "the warm-up's p50 is at most its p90")
  const frontier = sweepFrontier(result, 5)
  const text = renderSweepText(result, frontier)
  // Extra load falls as the delay rises (the warm-up's percentiles fall where a loaded machine puts them): never distinguishably
  // higher than at the shorter delay before, and clearly lower at 400 ms than at 8 ms.
  const rising = [...frontier.rows].sort((a, b) => a.delayMs - b.delayMs)
  for (let i = 1; i < rising.length; i++)
    assert.ok(rising[i]!.extraLoadPct.interval![0] <= rising[i - 1]!.extraLoadPct.interval![1], `extra load by rising delay:\n${text}`)
  const extra = frontier.rows.map((r) => r.extraLoadPct)
  assert.ok(extra[3]!.interval![1] < extra[0]!.interval![0], text)
  for (const row of frontier.rows) {
    const [low, high] = row.extraLoadPct.interval!
    assert.ok(low <= row.extraLoadPct.value && row.extraLoadPct.value <= high, `${row.label}: ${row.extraLoadPct.value} in [${low}, ${high}]`)
    assert.ok(row.p50.interval && row.p50.interval[0] <= row.p50.value && row.p50.value <= row.p50.interval[1], `${row.label} p50 interval`)
  }
  const chosen = frontier.rows.find((r) => r.label === frontier.recommendation.label)
  assert.ok(chosen, text)
  assert.ok(chosen.extraLoadPct.value <= 5, `${chosen.label}: ${chosen.extraLoadPct.value} %`)
  assert.match(frontier.recommendation.sentence, new RegExp(`--hedge-delay ${chosen.delayLabel} --max-attempts 2 --hedge-budget off\\b`))
  assert.ok(
    frontier.rows.some((r) => r.onFrontier),
    text,
  )
  assert.match(text, /p99\.9/)
  assert.match(text, /Servers received \d+ requests; the lanes sent \d+ attempts \(they match\)/)
  assert.match(text, /Each lane's count at the servers is its attempts, exactly\./)
  // The server-work column: the servers' own count (pi has no queue: every copy received starts, so it is the extra load).
  assert.match(text.split('\n')[2]!, /extra load +server work/)
  assert.equal(frontier.plain.serverWorkPct?.value, 0, 'the plain lane: one execution per request')
  for (const [i, row] of frontier.rows.entries()) {
    const s = result.settings[i]!
    const originals = s.hedged.attempts - s.hedged.hedging!.hedgesSent
    assert.equal(row.serverWorkPct?.value, Math.round(((s.server!.started! - originals) / originals) * 100 * 1000) / 1000, row.label)
  }
  assert.equal(text.split('\n').filter((l) => /^\*/.test(l)).length, frontier.rows.filter((r) => r.onFrontier).length)
})

test('shared slowness: no setting is recommended, whatever it costs', async () => {
  const result = await sweep({ urls: shared.urls, delays: ['p90', 40], requests: 300, warmup: 100, concurrency: 4, seed: 5, slowMs: 1000 })
  for (const maxExtra of [5, 100]) {
    const frontier = sweepFrontier(result, maxExtra)
    assert.equal(frontier.recommendation.label, null, frontier.recommendation.sentence)
    assert.match(frontier.recommendation.sentence, /^No hedging recommended: no setting improved the tail/)
  }
})

test('a sweep stopped in its window keeps what every lane measured, in equal shares, and the counts still match', async () => {
  const stop = new AbortController()
  const result = await sweep({
    urls: pi.urls,
    delays: [20, 40],
    maxAttempts: [2, 3],
    requests: 100_000,
    warmup: 20,
    concurrency: 8,
    seed: 9,
    serverStatsUrl: pi.statsUrl,
    signal: stop.signal,
    onProgress: (p) => (p.phase !== 'warmup' && p.done >= 200 ? stop.abort() : undefined),
  })
  assert.equal(result.partial, true)
  assert.deepEqual(
    result.settings.map((s) => s.label),
    ['20ms, 2 attempts', '20ms, 3 attempts', '40ms, 2 attempts', '40ms, 3 attempts'],
  )
  const lanes = [result.run.phases.plain!, ...result.settings.map((s) => s.hedged)]
  const issued = lanes.map((p) => p.requests + (p.interrupted ?? 0))
  assert.ok(
    issued.every((n) => n >= 40),
    `every lane measured: ${issued}`,
  )
  assert.ok(Math.max(...issued) - Math.min(...issued) <= 1, `shares within one request: ${issued}`)
  assert.ok(issued.reduce((a, b) => a + b, 0) < 100_000 * 5)
  assert.equal(result.server?.received, laneAttempts(result))
  assertLaneCounts(result)
  assert.match(renderSweepText(result, sweepFrontier(result)), /interrupted: what each lane measured until then/)
})

test('gRPC: the lane tag travels as metadata and the simulated gRPC replicas count each lane exactly', async () => {
  const grpc = await spawnTarget({ profile: 'pi', grpc: true, seed: 6 })
  try {
    const result = await sweep({
      urls: grpc.urls,
      grpc: { call: SIM_WORK_CALL, proto: SIM_PROTO },
      delays: [5, 'p90'],
      maxAttempts: [2, 3],
      requests: 150,
      warmup: 60,
      concurrency: 6,
      seed: 6,
      serverStatsUrl: grpc.statsUrl,
      hedge: { budgetPct: null as unknown as number },
    })
    assert.equal(result.partial, false)
    assertLaneCounts(result)
    assert.ok(
      result.settings.some((s) => s.hedged.hedging!.hedgesSent > 0),
      'hedges were sent, and counted in their lane',
    )
    const frontier = sweepFrontier(result)
    assert.ok(frontier.rows.every((r) => r.serverWorkPct !== null))
  } finally {
    await grpc.close()
  }
})

test("a target whose stats do not count lanes: '-' in the server-work column; the tag goes on every window request only when the stats are read", async () => {
  const target = await startServer({ delayMs: 2, record: [LANE_HEADER] })
  // The stats contract's required totals, and no `lanes`.
  const stats = createServer((req, res) => {
    req.resume()
    const { received, completed, cancelled } = target
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ totals: { received, completed, cancelled, hedgeHeader: 0 } }))
  })
  await new Promise<void>((r) => stats.listen(0, '127.0.0.1', r))
  const statsUrl = `http://127.0.0.1:${(stats.address() as AddressInfo).port}/stats`
  try {
    const warmup = 30
    const common = { urls: [target.url], delays: [1, 50], requests: 40, warmup, concurrency: 2, seed: 8 }
    const result = await sweep({ ...common, serverStatsUrl: statsUrl })
    assert.equal(result.server?.match, true)
    assert.equal(result.plainServer, undefined)
    assert.ok(result.settings.every((s) => s.server === undefined))
    const frontier = sweepFrontier(result)
    assert.ok([frontier.plain, ...frontier.rows].every((f) => f.serverWorkPct === null))
    const text = renderSweepText(result, frontier)
    const table = text.split('\n').slice(2, 6)
    assert.match(table[0]!, /extra load +server work/)
    for (const line of table.slice(1)) assert.match(line, / - +0 \[0, \d+\]/, line)
    assert.match(text, /The servers do not count the lanes apart/)
    // The warm-up untagged; in the window, each lane's value on every attempt of it.
    const tags = target.seen.map((h) => h[LANE_HEADER])
    assert.deepEqual(tags.slice(0, warmup), Array(warmup).fill(undefined))
    const window = tags.slice(warmup)
    assert.equal(window.length, laneAttempts(result))
    assert.equal(window.filter((t) => t === 'plain').length, result.run.phases.plain!.attempts)
    for (const [i, s] of result.settings.entries()) assert.equal(window.filter((t) => t === String(i + 1)).length, s.hedged.attempts, s.label)
    // Without --server-stats nobody reads a count: the requests are a run's, untagged.
    target.seen.length = 0
    await sweep(common)
    assert.ok(target.seen.length > warmup)
    assert.ok(
      target.seen.every((h) => h[LANE_HEADER] === undefined),
      'no tag without --server-stats',
    )
  } finally {
    await new Promise<void>((r) => stats.close(() => r()))
    await target.close()
  }
})

test('-z through the CLI: the window is timed, its lanes in equal shares to one request, the servers counting each; --workers is refused with its reason', () => {
  const [timed, workers] = runMainCases([
    {
      args: [
        'sweep',
        ...pi.urls,
        '--hedge-delay',
        '20ms,p90',
        '-z',
        '1500ms',
        '-n',
        '100000',
        '-c',
        '4',
        '--warmup',
        '20',
        '--seed',
        '5',
        '--server-stats',
        pi.statsUrl,
        '-o',
        'json',
        '--no-save',
      ],
      cwd: process.cwd(),
    },
    { args: ['sweep', ...pi.urls, '--workers', '2', '--no-save'], cwd: process.cwd() },
  ]).map((r) => r!)
  assert.equal(workers!.code, 2, workers!.stderr)
  assert.match(workers!.stderr, /^hedgebench: a sweep runs its lanes on one thread: --workers is not supported \(.+\)\n$/)
  assert.equal(timed!.code, 0, timed!.stderr)
  const out = JSON.parse(timed!.stdout) as SweepResult
  assert.equal(out.partial, false)
  assert.equal(out.run.config.durationMs, 1500)
  const lanes = [out.run.phases.plain!, ...out.settings.map((s) => s.hedged)]
  const requests = lanes.map((p) => p.requests)
  assert.ok(
    requests.every((n) => n > 0 && n < 100_000),
    `timed, not counted: ${requests}`,
  )
  assert.ok(Math.max(...requests) - Math.min(...requests) <= 1, `shares within one request: ${requests}`)
  assert.ok(
    out.warnings.some((w) => /-z 1\.50? s and -n 100000 given: -z wins/.test(w)),
    out.warnings.join('\n'),
  )
  assertLaneCounts(out)
})

test('a sweep stopped in its warm-up has no setting to weigh, and says so', async () => {
  const stop = new AbortController()
  const result = await sweep({
    urls: pi.urls,
    delays: [20],
    requests: 50,
    warmup: 100_000,
    concurrency: 4,
    seed: 3,
    signal: stop.signal,
    onProgress: (p) => (p.done >= 20 ? stop.abort() : undefined),
  })
  assert.equal(result.partial, true)
  assert.equal(result.run.stoppedIn, 'warmup')
  assert.deepEqual(result.settings, [])
  const frontier = sweepFrontier(result)
  assert.equal(frontier.recommendation.label, null)
  assert.match(renderSweepText(result, frontier), /stopped in its warm-up, before any setting ran/)
})

test('bad input is one line and exit 2: lists, --max-extra, too many settings, TLS and grpc-js flags', () => {
  const url = 'http://127.0.0.1:9'
  const cases: Array<[string[], RegExp]> = [
    [['--hedge-delay', 'p90,,p99'], /--hedge-delay/],
    [['--hedge-delay', 'p90,soon'], /--hedge-delay/],
    [['--hedge-delay', 'p120'], /--hedge-delay/],
    [['--max-extra', 'lots'], /--max-extra/],
    [['--max-attempts', '1,2'], /--max-attempts item "1"/],
    [['--budget', '5%,5'], /--hedge-budget lists 5 twice/],
    [['--hedge-delay', '1ms,2ms,3ms,4ms,5ms,6ms,7ms', '--max-attempts', '2,3,4', '--hedge-budget', '1,2'], /42 settings .* at most 40/],
    [['--cacert', '/nonexistent/ca.pem'], /--cacert/],
    [['--hedge-by', 'grpc-js'], /--hedge-by and --service-config/],
  ]
  const runs = runMainCases(cases.map(([args]) => ({ args: ['sweep', url, '--no-save', ...args], cwd: process.cwd() })))
  for (const [i, r] of runs.entries()) {
    const [args, message] = cases[i]!
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
    assert.match(r.stderr, /^hedgebench: /)
    assert.match(r.stderr, message)
  }
})

test('-o json through the CLI: the sweep and its frontier; gRPC targets with --call, --proto and -m metadata as a run takes them', async () => {
  const grpc = await spawnTarget({ profile: 'pi', grpc: true, seed: 4 })
  try {
    const common = ['--hedge-delay', '40ms,80ms', '-n', '30', '--warmup', '20', '--seed', '4', '-o', 'json', '--no-save']
    const out = mkdtempSync(join(tmpdir(), 'hedgebench-sweep-cli-'))
    const html = join(out, 'sweep.html')
    const [http, rpc] = runMainCases([
      // Saved under its --label, with the page beside (sweep-saved.test.ts reads such a file back).
      { args: ['sweep', ...pi.urls, ...common.slice(0, -1), '--out-dir', out, '--label', 'nightly', '--html', html], cwd: process.cwd() },
      { args: ['sweep', ...grpc.urls, '--call', SIM_WORK_CALL, '--proto', SIM_PROTO, '-m', '{"x-team":"sweep"}', ...common], cwd: process.cwd() },
    ])
    for (const r of [http!, rpc!]) {
      assert.equal(r.code, 0, r.stderr)
      const out = JSON.parse(r.stdout) as SweepResult & {
        frontier: { rows: Array<{ label: string }>; maxExtraPct: number; recommendation: { sentence: string } }
      }
      assert.equal(out.kind, 'sweep')
      assert.equal(out.partial, false)
      assert.deepEqual(
        out.settings.map((s) => [s.label, s.delayMs, s.hedged.requests]),
        [
          ['40ms', 40, 30],
          ['80ms', 80, 30],
        ],
      )
      assert.equal(out.run.phases.plain!.requests, 30)
      assert.deepEqual(
        out.frontier.rows.map((row) => row.label),
        ['40ms', '80ms'],
      )
      assert.equal(out.frontier.maxExtraPct, 5)
      assert.ok(out.frontier.recommendation.sentence.length > 0)
    }
    const saved = readdirSync(out).filter((f) => f.endsWith('-sweep.json'))
    assert.equal(saved.length, 1)
    assert.match(saved[0]!, /-nightly-sweep\.json$/, 'the label in the file name')
    assert.equal(readFileSync(join(out, saved[0]!), 'utf8'), http!.stdout, 'the saved sweep is what -o json printed')
    assert.match(readFileSync(html, 'utf8'), /<title>hedgebench sweep nightly: 2 settings<\/title>/)
    const rpcOut = JSON.parse(rpc!.stdout) as SweepResult
    assert.ok(grpc.urls.every((u) => u.startsWith('grpc://')))
    assert.deepEqual(
      rpcOut.run.protocols?.map((p) => p.protocol),
      grpc.urls.map(() => 'h2c'),
      'gRPC over h2c',
    )
    assert.equal(rpcOut.settings[0]!.hedged.errors, 0)
  } finally {
    await grpc.close()
  }
})

test('Ctrl-C to the CLI mid-sweep: as an interrupted run, it stops, reports what each lane measured (partial) and exits 0', async () => {
  const s = await session.server({ delayMs: 20 })
  const warmup = 10
  const cli = startCli(
    ['sweep', s.url, '--hedge-delay', '5ms,50ms', '-n', '100000', '-c', '4', '--warmup', String(warmup), '--seed', '2', '-o', 'json', '--no-save'],
    { timeoutMs: 30_000 },
  )
  await until('the window to start', () => s.received >= warmup + 40, 20_000)
  cli.child.kill('SIGINT')
  const run = await cli.done
  assert.equal(run.timedOut, false)
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stderr, /SIGINT: stopping/)
  const out = JSON.parse(run.stdout) as SweepResult
  assert.equal(out.partial, true)
  assert.equal(out.run.stoppedIn, 'hedged')
  assert.deepEqual(
    out.settings.map((x) => x.label),
    ['5ms', '50ms'],
  )
  assert.ok([out.run.phases.plain!, ...out.settings.map((x) => x.hedged)].every((p) => p.requests > 0))
  assert.equal(s.received, warmup + laneAttempts(out), "every attempt the server received is a lane's (or the warm-up's)")
})
