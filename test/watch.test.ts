/**
 * `hedgebench watch` end to end against the simulated replicas (the pi
 * profile: 5-15 ms, 1 % stalls of 1 s): the plain lines, the marks from
 * --mark-at, SIGUSR2 and POST /mark, the segments compared, the file saved
 * as it goes, the metrics read by Prometheus' own parser, and the bad input.
 */
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fetchServerStats, startTarget } from '../src/sim/target.js'
import { YOUNG_GENERATION_FLAGS } from '../src/cli/launcher.js'
import { compareSegments, watch, Watch } from '../src/index.js'
import type { FinishedWatch } from '../src/results/watch-result.js'
import type { SegmentComparison } from '../src/report/watch-compare.js'
import { NOTHING_MEASURED } from '../src/report/watch-text.js'
import { cliSession } from './helpers/cli-session.js'
import { runCli, startCli } from './helpers/cli.js'
import { skipWithout } from './helpers/required-tool.js'
import { until, untilAsync } from './helpers/until.js'
import { hasPrometheusParser, parseExposition, type Families } from './helpers/prometheus-parser.js'

const session = cliSession('hedgebench-watch-')
const target = await startTarget({ profile: 'pi', replicas: 3, seed: 47 })
after(() => target.close())
const fast = { nodeArgs: YOUNG_GENERATION_FLAGS, timeoutMs: 60_000 }
const base = [...target.urls, '--warmup', '60', '--seed', '3']

/** What the file and -o json hold at the end. */
type SavedWatch = FinishedWatch & { comparisons: SegmentComparison[] }

function savedWatch(dir: string): SavedWatch {
  const files = readdirSync(dir).filter((f) => f.startsWith('watch-') && f.endsWith('.json'))
  assert.equal(files.length, 1, `one watch file in ${dir}: ${files}`)
  return JSON.parse(readFileSync(join(dir, files[0]!), 'utf8'))
}

test('as a library: watch() with marksAt, Watch.mark() from a program, each segment judged', { timeout: 60_000 }, async () => {
  const options = { urls: target.urls, rate: 200, durationMs: 3000, warmup: 60, seed: 3 }
  const result = await watch({ ...options, marksAt: [{ atS: 1, name: 'flip' }] })
  assert.deepEqual(result.marks, [{ atS: 1, name: 'flip', source: 'mark-at' }])
  assert.equal(result.partial, false)
  assert.deepEqual(
    compareSegments(result).map((c) => [c.before, c.after, c.lane]),
    [
      ['start', 'flip', 'plain'],
      ['start', 'flip', 'hedged'],
    ],
  )
  // A mark taken while second 1 is read starts its segment then, to the millisecond: second 2 is split there.
  const w: Watch = new Watch({ ...options, onSecond: (s) => void (s.t === 1 && w.mark('flag on')) })
  const marked = await w.run()
  assert.deepEqual(
    marked.marks.map((m) => [m.name, m.source]),
    [['flag on', 'api']],
  )
  const atS = marked.marks[0]!.atS
  assert.ok(atS >= 1 && atS < 2, `taken in second 2: ${atS}`)
  assert.deepEqual(
    marked.segments.map((s) => s.fromS),
    [0, atS],
  )
  assert.equal(marked.segments[0]!.toS, atS)
})

test('no -q: exit 2 and one line', async () => {
  const run = await runCli(['watch', ...target.urls], fast)
  assert.equal(run.code, 2)
  assert.equal(run.stderr, 'hedgebench: watch needs an open-loop rate: -q N (requests/s, both lanes together)\n')
})

test('a mark before the measured window is ignored, with the line saying so', () => {
  const watch = new Watch({ urls: target.urls, rate: 100 })
  assert.deepEqual(watch.mark('early', 'key'), { taken: false, line: 'mark ignored: no traffic yet (the measured window has not started)' })
})

test('-z with --mark-at: one plain line a second, two segments compared lane by lane, the file saved', async () => {
  const dir = await session.tempDir()
  const run = await runCli(['watch', ...base, '-q', '200', '-z', '4s', '--mark-at', '2s=flip', '--out-dir', dir, '--html', join(dir, 'watch.html')], fast)
  assert.equal(run.code, 0, run.stderr)
  const lines = run.stdout.split('\n').filter((l) => /^\d+ s {2}plain /.test(l))
  assert.ok(lines.length >= 4, run.stdout)
  assert.deepEqual(
    lines.map((l) => Number(l.split(' ')[0])),
    lines.map((_, i) => i + 1),
    'one line per second, in order',
  )
  assert.match(lines[0]!, /^1 s {2}plain requests \d+ p50 .+ p99 .+ slow \d+ errors \d+ \| hedged requests \d+ .+ extra [\d.]+% delay /)
  assert.match(run.stderr, /mark "flip" \(--mark-at\): a new segment from 2 s/)
  assert.match(run.stdout, /^start -> flip, plain lane$/m)
  assert.match(run.stdout, /^start -> flip, hedged lane$/m)
  const saved = savedWatch(dir)
  assert.deepEqual(saved.marks, [{ atS: 2, name: 'flip', source: 'mark-at' }])
  assert.deepEqual(
    saved.segments.map((s) => [s.name, s.fromS]),
    [
      ['start', 0],
      ['flip', 2],
    ],
  )
  assert.equal(saved.segments[0].toS, 2)
  assert.equal(saved.sentUntilS, 4)
  assert.equal(saved.comparisons.length, 2)
  // The mark is drawn across both charts over time (latency and throughput, hedging).
  const html = readFileSync(join(dir, 'watch.html'), 'utf8')
  assert.equal(html.match(/data-mark="mark &quot;flip&quot; at 2 s \(mark-at\)"/g)?.length, 2)
  // Both lanes take turns in blocks of two: their shares differ by one request at most.
  const plain = saved.run.phases.plain!
  const hedged = saved.run.phases.hedged!
  assert.ok(Math.abs(plain.requests - hedged.requests) <= 1, `${plain.requests} vs ${hedged.requests}`)
  // The seconds add up to the segments, and the segments to the window.
  for (const lane of ['plain', 'hedged'] as const) {
    const perSecond = saved.seconds.reduce((sum, s) => sum + s[lane].requests, 0)
    const perSegment = saved.segments.reduce((sum, s) => sum + s.lanes[lane].requests, 0)
    assert.equal(perSecond, perSegment)
    assert.equal(perSegment, saved.run.phases[lane]!.requests)
  }
})

test('--fail-if with one segment (no mark) cannot be judged: it fails closed, and --allow-unjudged lets it pass', async () => {
  const gate = ['watch', ...base, '-q', '100', '-z', '2s', '--no-save', '--fail-if', 'p99>+10%']
  const [closed, allowed] = await Promise.all([runCli(gate, fast), runCli([...gate, '--allow-unjudged'], fast)])
  assert.equal(closed.code, 1, closed.stderr)
  assert.match(closed.stderr, /^hedgebench: --fail-if not judged: one segment only \(no mark\); failing closed \(--allow-unjudged lets it pass\)$/m)
  assert.equal(allowed.code, 0, allowed.stderr)
  assert.match(allowed.stderr, /^hedgebench: --fail-if not judged: one segment only \(no mark\); passing \(--allow-unjudged\)$/m)
})

test('SIGUSR2 marks a watch (through the launcher) and Ctrl-C ends it with every segment compared; a mark later is a second one', async () => {
  const dir = await session.tempDir()
  const cli = startCli(['watch', ...base, '-q', '200', '--out-dir', dir, '-o', 'json'], { timeoutMs: 60_000 })
  await until('the second second', () => /^2 s /m.test(cli.stderr), 30_000)
  cli.child.kill('SIGUSR2')
  await cli.waitForStderr(/mark "mark 1" \(signal\): a new segment from [\d.]+ s/)
  const marked = Number(/a new segment from ([\d.]+) s/.exec(cli.stderr)![1])
  await until('two seconds after the mark', () => new RegExp(`^${Math.floor(marked) + 2} s `, 'm').test(cli.stderr), 30_000)
  // The file on disk already holds the mark and both segments before the end.
  const live = savedWatch(dir)
  assert.equal(live.finishedAt, null)
  assert.deepEqual(
    live.segments.map((s) => s.name),
    ['start', 'mark 1'],
  )
  cli.child.kill('SIGINT')
  const run = await cli.done
  assert.equal(run.code, 0, run.stderr)
  const out = JSON.parse(run.stdout) as SavedWatch
  assert.equal(out.partial, true)
  assert.deepEqual(
    out.marks.map((m) => [Number(m.atS.toFixed(1)), m.name, m.source]),
    [[marked, 'mark 1', 'signal']],
  )
  assert.deepEqual(
    out.comparisons.map((c) => [c.before, c.after, c.lane]),
    [
      ['start', 'mark 1', 'plain'],
      ['start', 'mark 1', 'hedged'],
    ],
  )
  assert.ok(out.comparisons[0].comparison.metrics.some((m) => m.metric === 'p50' && m.changes[1]?.verdict))
})

test('Ctrl-C during the warm-up: one line that nothing was measured, the warm-up saved, no empty segment judged', { timeout: 60_000 }, async () => {
  const dir = await session.tempDir()
  // A warm-up far longer than the test: the interruption lands in it (once it sends: its handlers are in place by then).
  const interrupted = async (args: string[]): Promise<Awaited<ReturnType<typeof startCli>['done']>> => {
    const before = (await fetchServerStats(target.statsUrl)).totals.received
    const cli = startCli(['watch', ...target.urls, '-q', '100', '--warmup', '100000', '--seed', '3', ...args], { timeoutMs: 60_000 })
    await untilAsync('the warm-up to send', async () => (await fetchServerStats(target.statsUrl)).totals.received > before + 10)
    cli.child.kill('SIGINT')
    return cli.done
  }
  const run = await interrupted(['--out-dir', dir])
  // With -o json, the line goes to stderr; a gate has nothing to judge, and fails closed.
  const json = await interrupted(['--no-save', '-o', 'json', '--fail-if', 'p99>+10%'])
  assert.equal(json.code, 1, json.stderr)
  assert.deepEqual((JSON.parse(json.stdout) as SavedWatch).segments, [])
  assert.match(json.stderr, new RegExp(`^hedgebench: ${NOTHING_MEASURED.replace(/[()]/g, '\\$&')}\n`, 'm'))
  assert.match(json.stderr, /^hedgebench: --fail-if not judged: nothing measured; failing closed \(--allow-unjudged lets it pass\)$/m)
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stdout, `hedgebench watch: ${NOTHING_MEASURED}\n`)
  const saved = savedWatch(dir)
  assert.deepEqual(saved.segments, [])
  assert.deepEqual(saved.comparisons, [])
  assert.ok(saved.run.phases.warmup!.requests > 0, 'the warm-up is kept')
  assert.equal(saved.run.phases.plain, undefined)
})

test('SIGUSR2 during a run: one line that marks only apply to watch, and the run goes on', async () => {
  const before = (await fetchServerStats(target.statsUrl)).totals.received
  const cli = startCli([...target.urls, '-z', '3s', '-c', '4', '--warmup', '0', '--no-save'], { timeoutMs: 60_000 })
  // Sent once the run sends: its handler is in place by then (Node's default for SIGUSR2 ends the process).
  await untilAsync('the run to send', async () => (await fetchServerStats(target.statsUrl)).totals.received > before + 10)
  cli.child.kill('SIGUSR2')
  const run = await cli.done
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stderr, /^hedgebench: SIGUSR2: marks only apply to `hedgebench watch`; ignored$/m)
})

test('--metrics-port: what Prometheus parses while the watch runs, and POST /mark', {
  skip: skipWithout(hasPrometheusParser, 'python3-prometheus-client', "Prometheus' parser (python3-prometheus-client) is not installed"),
}, async () => {
  const dir = await session.tempDir()
  const cli = startCli(['watch', ...base, '-q', '200', '-z', '8s', '--metrics-port', '127.0.0.1:0', '--out-dir', dir], fast)
  await cli.waitForStderr(/metrics at http:\/\/127\.0\.0\.1:\d+\/metrics/)
  const port = Number(/127\.0\.0\.1:(\d+)\/metrics/.exec(cli.stderr)![1])
  await until('the second second', () => /^2 s /m.test(cli.stdout), 30_000)
  const mark = await fetch(`http://127.0.0.1:${port}/mark`, { method: 'POST', body: 'flag on' }).catch((err) => {
    throw new Error(`POST /mark: ${err} ${err.cause}; stderr: ${cli.stderr}`)
  })
  assert.equal(mark.status, 200)
  assert.match(await mark.text(), /^mark "flag on" \(http\): a new segment from \d+ s\n$/)
  const families = parseExposition(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())
  const latency = families.hedgebench_request_duration_seconds!
  assert.equal(latency.type, 'histogram')
  for (const lane of ['plain', 'hedged']) {
    const count = latency.samples.find(([name, labels]) => name === 'hedgebench_request_duration_seconds_count' && labels.lane === lane)
    assert.ok(count && count[2] > 0, `${lane} latency count`)
  }
  const requests = families.hedgebench_requests!
  assert.equal(requests.type, 'counter')
  assert.deepEqual(requests.samples.map(([name, labels]) => [name, labels.lane]).sort(), [
    ['hedgebench_requests_total', 'hedged'],
    ['hedgebench_requests_total', 'plain'],
  ])
  for (const name of [
    'hedgebench_attempts',
    'hedgebench_hedges_sent',
    'hedgebench_hedges_won',
    'hedgebench_hedges_cancelled',
    'hedgebench_hedges_budget_denied',
    'hedgebench_errors',
  ])
    assert.equal(families[name]?.type, 'counter', name)
  const delay = families.hedgebench_hedge_delay_seconds!
  assert.equal(delay.type, 'gauge')
  assert.ok(delay.samples[0]![2] > 0 && delay.samples[0]![2] < 2, `delay ${delay.samples[0]![2]} s`)
  const run = await cli.done
  assert.equal(run.code, 0, run.stderr)
  assert.deepEqual(
    savedWatch(dir).marks.map((m) => [m.name, m.source]),
    [['flag on', 'http']],
  )
})

test('--metrics-port on a run: both lanes of an interleaved run while it goes; POST /mark says marks are for watch', {
  skip: skipWithout(hasPrometheusParser, 'python3-prometheus-client', "Prometheus' parser (python3-prometheus-client) is not installed"),
}, async () => {
  const cli = startCli([...base, '-q', '200', '-z', '6s', '--schedule', 'interleaved', '--metrics-port', '127.0.0.1:0', '--no-save'], fast)
  await cli.waitForStderr(/metrics at http:\/\/127\.0\.0\.1:\d+\/metrics/)
  const url = `http://127.0.0.1:${/127\.0\.0\.1:(\d+)\/metrics/.exec(cli.stderr)![1]}`
  const parse = async (): Promise<Families> => parseExposition(await (await fetch(`${url}/metrics`)).text())
  // Both lanes once the latency of a whole second of each has been read.
  await untilAsync(
    'both lanes measured',
    async () => ((await parse()).hedgebench_request_duration_seconds?.samples ?? []).filter(([n, , v]) => n.endsWith('_count') && v > 0).length === 2,
  )
  const families = await parse()
  assert.deepEqual(families.hedgebench_requests!.samples.map(([, labels]) => labels.lane).sort(), ['hedged', 'plain'])
  assert.equal(families.hedgebench_hedge_delay_seconds!.type, 'gauge')
  const mark = await fetch(`${url}/mark`, { method: 'POST' })
  assert.equal(mark.status, 409)
  assert.equal(await mark.text(), 'marks only apply to `hedgebench watch`; ignored\n')
  const run = await cli.done
  assert.equal(run.code, 0, run.stderr)
})

test('--metrics-port on a port in use: exit 2 naming it, before any traffic', async () => {
  const blocker = createServer()
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
  const port = (blocker.address() as { port: number }).port
  try {
    const run = await runCli(['watch', ...target.urls, '-q', '100', '--metrics-port', `127.0.0.1:${port}`, '--no-save'], fast)
    assert.equal(run.code, 2)
    assert.equal(run.stderr, `hedgebench: --metrics-port 127.0.0.1:${port}: port ${port} is in use (EADDRINUSE)\n`)
  } finally {
    blocker.close()
  }
})
