import { test } from 'node:test'
import assert from 'node:assert/strict'
import { unsentBreakdown } from '../src/report/unsent-text.js'
import { renderText } from '../src/report/text.js'
import { makeFigures, makeHedgedRun, makePhase, makeReplica, makeRunResult, stallingLatencies } from './helpers/result-fixture.js'

const HEY_SECTIONS = ['Summary:', 'Response time histogram:', 'Latency distribution:', 'Status code distribution:', 'Error distribution:']

function erroringRun() {
  const phase = makePhase('plain', stallingLatencies(400), { errors: 10, ok: 390, statusCodes: { '200': 390, '503': 6 }, errorKinds: { ECONNRESET: 4 } })
  return makeRunResult({ phases: { plain: phase } })
}

test("each phase has hey's sections in hey's order", () => {
  const text = renderText(erroringRun())
  const positions = HEY_SECTIONS.map((s) => text.indexOf(`\n${s}\n`))
  assert.ok(
    positions.every((p) => p > 0),
    `missing a section: ${positions.join(',')}`,
  )
  assert.deepEqual(
    [...positions].sort((a, b) => a - b),
    positions,
  )
  assert.match(text, /\[503\] 6 responses/)
  assert.match(text, /\[4\] ECONNRESET/)
})

test('the latency distribution goes down to p99.99 and the slow count is stated', () => {
  const text = renderText(makeRunResult())
  for (const p of ['10%', '50%', '99%', '99.9%', '99.99%']) assert.match(text, new RegExp(`^\\s+${p.replace('.', '\\.')}\\s+in\\s`, 'm'))
  assert.match(text, /Slow:\s+4 requests over 1 s \(1\.00%\)/)
})

test('the response time histogram draws bars, the tallest 40 wide', () => {
  const text = renderText(makeRunResult())
  const bars = text.split('\n').filter((l) => / \[\d+\]\s+\|/.test(l))
  assert.equal(bars.length, 11)
  assert.equal(Math.max(...bars.map((l) => (l.match(/■/g) ?? []).length)), 40)
  // 400 requests in all: the buckets account for every one.
  assert.equal(
    bars.reduce((n, l) => n + Number(/\[(\d+)\]/.exec(l)![1]), 0),
    400,
  )
})

test('a plain + hedged run gets the side-by-side table and the verdict', () => {
  const run = makeHedgedRun()
  const text = renderText(run)
  assert.match(text, /^\s+plain\s+hedged\s+change$/m)
  for (const key of ['p10', 'p50', 'p99', 'p99.9', 'p99.99', 'mean', 'max', 'errors', 'requests/s']) {
    assert.match(text, new RegExp(`^  ${key.replace('.', '\\.')}\\s+\\S+( \\S+)?\\s+\\S+( \\S+)?\\s+(n/a|[+-]?\\d+\\.\\d%)$`, 'm'), key)
  }
  assert.match(text, /^\s+over 1 s\s+40\s+0\s+-100\.0%$/m)
  assert.match(
    text,
    /^Verdict: Hedging removed 40 of 40 requests over 1 s \(-100 %, 95 % CI -100 % to -90 %\) and cut p99\.9 from 1\.02 s to 30\.9 ms, for \+3\.5 % requests\.$/m,
  )
  // The comparison comes after both phases.
  assert.ok(text.indexOf('plain vs hedged') > text.indexOf('=== hedged phase ==='))
})

test('unsent, said as it splits: hedges and originals apart; a result saved before they were counted apart says both', () => {
  const h = makeHedgedRun().phases.hedged!.hedging!
  assert.equal(unsentBreakdown({ ...h, unsent: 3, unsentOriginals: 0 }), ' (3 hedges)')
  assert.equal(unsentBreakdown({ ...h, unsent: 1, unsentOriginals: 1 }), ' (1 original still waiting for a connection when a hedge won)')
  assert.equal(unsentBreakdown({ ...h, unsent: 0, unsentOriginals: 0 }), '')
  const { unsentOriginals: _absent, ...older } = h
  assert.equal(unsentBreakdown(older), ' (hedges, or originals still waiting for a connection when a hedge won)')
})

test('the hedging section shows the delay, its source and every counter', () => {
  const run = makeHedgedRun()
  const h = run.phases.hedged!.hedging!
  const text = renderText(run)
  const section = text.slice(text.indexOf('\nHedging:\n'), text.indexOf('\nReplicas:', text.indexOf('\nHedging:\n')))
  assert.match(section, /Delay:\s+14\.8 ms \(p95 of 1000 warm-up requests = 14\.8 ms\)/)
  assert.match(
    section,
    new RegExp(
      `Hedges sent:\\s+${h.hedgesSent} \\(\\+3\\.5% extra load\\); ${h.unsent} more stopped before the wire \\(10 hedges, 2 originals still waiting for a connection when a hedge won\\)`,
    ),
  )
  assert.match(section, /Trigger rate:\s+3\.8%/)
  assert.match(section, new RegExp(`hedge ${h.hedgeWins} / original ${h.originalWins}`))
  assert.match(section, new RegExp(`${h.cancelled} attempts aborted; ${h.lateDiscarded} late answers discarded`))
  for (const label of ['Budget denied:', 'Deadline suppressed:', 'Non-fatal triggered:', 'Timer lateness:']) assert.ok(section.includes(label), label)
  assert.match(section, /0 \(original\)\s+4000/)
  assert.match(section, /1 \(hedge\)\s+140/)
  assert.doesNotMatch(section, /Adaptive delay/)
})

test('an adaptive run reports the delay range', () => {
  const run = makeHedgedRun()
  Object.assign(run.phases.hedged!.hedging!, { adaptive: true, delayUsedMs: { min: 20, p50: 31.5, max: 80 } })
  assert.match(renderText(run), /Adaptive delay:\s+min 20\.0 ms \/ p50 31\.5 ms \/ max 80\.0 ms/)
})

test('the per-replica table makes a broken replica obvious', () => {
  const urls = ['http://a:8080/x', 'http://b:8080/x', 'http://c:8080/x']
  const replicas = urls.map((url) => makeReplica(url, stallingLatencies(100)))
  replicas[1] = { ...replicas[1]!, ok: 20, errors: 80, statusCodes: { '200': 20, '503': 80 } }
  const run = makeRunResult({ phases: { plain: makePhase('plain', stallingLatencies(300), { replicas }) } })
  const lines = renderText(run).split('\n')
  assert.match(lines.find((l) => l.includes('url') && l.includes('attempts'))!, /url\s+attempts\s+ok\s+errors\s+p50\s+p99\s+max\s+wins/)
  assert.match(lines.find((l) => l.includes('http://b:8080/x'))!, /<- 80\.0% errors !$/)
  assert.doesNotMatch(lines.find((l) => l.includes('http://a:8080/x'))!, /!/)
})

test('a dead replica failing fast does not make the healthy ones look slow', () => {
  const urls = ['http://a:8080/x', 'http://b:8080/x', 'http://c:8080/x']
  const replicas = urls.map((url) =>
    makeReplica(
      url,
      Array.from({ length: 100 }, () => 11),
    ),
  )
  // Replica c refuses every connection within half a millisecond.
  replicas[2] = makeReplica(
    urls[2]!,
    Array.from({ length: 100 }, () => 0.4),
    { ok: 0, errors: 100, statusCodes: {}, errorKinds: { ECONNREFUSED: 100 } },
  )
  const run = makeRunResult({
    phases: {
      plain: makePhase(
        'plain',
        Array.from({ length: 300 }, () => 11),
        { replicas },
      ),
    },
  })
  const lines = renderText(run).split('\n')
  for (const url of urls.slice(0, 2)) assert.doesNotMatch(lines.find((l) => l.includes(url))!, /!/, url)
  assert.match(lines.find((l) => l.includes('http://c:8080/x'))!, /<- 100\.0% errors !$/)
  // A replica that answers, three times slower than the others, is still marked.
  replicas[0] = makeReplica(
    urls[0]!,
    Array.from({ length: 100 }, () => 40),
  )
  const slow = renderText(
    makeRunResult({
      phases: {
        plain: makePhase(
          'plain',
          Array.from({ length: 300 }, () => 11),
          { replicas },
        ),
      },
    }),
  ).split('\n')
  assert.match(slow.find((l) => l.includes('http://a:8080/x'))!, /<- slow !$/)
})

test('partial runs and warnings are printed prominently', () => {
  const run = makeHedgedRun({ partial: true, stoppedIn: 'hedged', warnings: ['one URL: copies go to the same origin'] })
  const lines = renderText(run).split('\n')
  assert.match(lines[3]!, /^PARTIAL: interrupted during hedged/)
  assert.equal(lines[4], 'WARNING: one URL: copies go to the same origin')
  assert.equal(lines.at(-2), 'PARTIAL: interrupted during hedged')
})

test('the warm-up is one line, never a full section', () => {
  const text = renderText(makeHedgedRun())
  assert.match(text, /^Warm-up \(excluded from statistics\): 1000 requests in /m)
  assert.doesNotMatch(text, /=== warmup/)
  assert.equal(text.split('\nSummary:\n').length - 1, 2)
})

test('fan-out calls, service time, server cross-check and generator health appear when present', () => {
  const phase = makePhase('plain', stallingLatencies(200), {
    calls: { ...makeFigures(stallingLatencies(2000)), fanout: 10 },
    serviceTime: { ...makePhase('plain', [4, 5, 6]), lateSends: 17 },
    server: { received: 205, completed: 200, cancelled: 0, hedgeHeader: 0, clientAttempts: 200, match: false },
  })
  phase.generator = { ...phase.generator, saturated: true, warnings: ['event loop p99 42 ms: the generator may be the bottleneck'] }
  const run = makeRunResult({ phases: { plain: phase } })
  run.config.rate = 200
  phase.rps = 168.4
  const text = renderText(run)
  assert.match(text, /Fan-out calls \(10 per request/)
  assert.match(text, /^Latency distribution:\n {2}\(from each request's intended start on the -q schedule: corrected for coordinated omission, as wrk2's\)\n/m)
  assert.match(text, /17 sends left later than scheduled: every -c slot was busy \(raise -c when the target's stalls hold them\), or the generator fell behind/)
  assert.match(text, /rate: 168\.4\/s achieved of 200\/s asked/)
  assert.match(text, /2000 calls, 0 errors, 20 over 1 s/)
  assert.match(text, /Service time \(from the actual send/)
  assert.match(text, /17 sends left later than scheduled/)
  assert.match(text, /server received 205 vs client attempts 200: MISMATCH/)
  assert.match(text, /completed 200, cancelled 0, carrying the hedge header 0\n/, 'a target that stalls nothing on purpose: no such count')
  phase.server!.stalled = 19
  assert.match(renderText(run), /completed 200, cancelled 0, carrying the hedge header 0, stalled on purpose 19\n/)
  assert.match(text, /CPU 23\.5% of one core .* SATURATED/)
  assert.match(text, /WARNING: event loop p99 42 ms/)
})

test('colour only when asked; a phase with no requests still renders', () => {
  assert.doesNotMatch(renderText(makeHedgedRun()), /\u001b\[/)
  assert.match(renderText(makeHedgedRun({ warnings: ['x'] }), { color: true }), /\u001b\[33mWARNING: x\u001b\[39m/)
  const empty = makeRunResult({ partial: true, stoppedIn: 'plain', phases: { plain: makePhase('plain', [], { replicas: [] }) } })
  const text = renderText(empty)
  assert.match(text, /no request finished in this phase/)
  assert.doesNotMatch(text, /NaN|undefined|Infinity/)
})

test('a password in a URL never reaches the text report', () => {
  const phase = makePhase('plain', [5, 6], { replicas: [makeReplica('http://u:s3cret@h/x', [5, 6])] })
  const run = makeRunResult({ phases: { plain: phase } })
  run.config.urls = ['http://u:s3cret@h/x']
  const text = renderText(run)
  assert.doesNotMatch(text, /s3cret/)
  assert.match(text, /http:\/\/\*\*\*@h\/x/)
})

test('server work with --fanout is per call, as the extra load is (not copies per logical request)', () => {
  const run = makeHedgedRun()
  const hedged = run.phases.hedged!
  // 400 requests of 40 calls each; the servers began 16,160 copies: 1 % more than the calls.
  hedged.requests = 400
  hedged.calls = { ...makeFigures(Array.from({ length: 16_000 }, () => 10)), fanout: 40 }
  hedged.hedging!.extraLoadPct = 1
  hedged.server = { received: 16_160, completed: 16_160, cancelled: 0, hedgeHeader: 160, clientAttempts: 16_160, match: true, started: 16_160 }
  assert.match(renderText(run), /work: 16160 copies began executing for 16000 calls: \+1\.0% extra work \(vs \+1\.0% extra calls sent\)/)
})

test("a shard's own report says it is a shard and gives its share of -n and -q (the config is the whole run's, for merge)", () => {
  const run = makeHedgedRun({ shard: { index: 0, count: 2 } })
  run.config.requests = 2001
  run.config.rate = 401
  const header = renderText(run).split('\n')[1]!
  assert.match(header, / · -n 1001 of 2001 per phase · -q 201\/s of 401\/s \(open loop\) · .* · shard 0\/2$/)
  // A run that is not a shard keeps hey's header.
  const whole = makeHedgedRun()
  whole.config.requests = 2001
  assert.match(renderText(whole).split('\n')[1]!, / · -n 2001 per phase · /)
})

test('--tied against a target that never dropped a twin asks whether it implements ties', () => {
  const run = makeHedgedRun()
  Object.assign(run.phases.hedged!.hedging!, {
    tied: true,
    parallel: true,
    tiedDropped: 0,
    delaySource: 'tied: both copies sent at once; the first server to start one drops the other',
  })
  const text = renderText(run)
  assert.match(text, /Delay:\s+\S+ \S+ \(tied: both copies sent at once/)
  assert.match(
    text,
    /Tied:\s+0 copies dropped by their server \(409: the twin had started elsewhere\); none at all: does the target implement tied requests\? \(docs\/policy\.md, tied requests\)/,
  )
  Object.assign(run.phases.hedged!.hedging!, { tiedDropped: 37 })
  assert.match(renderText(run), /Tied:\s+37 copies dropped by their server \(409: the twin had started elsewhere\)\n/)
  // Not tied: no such line.
  assert.doesNotMatch(renderText(makeHedgedRun()), /Tied:/)
})

test('the Requests line counts attempts and connections in the singular when there is one', () => {
  const one = makePhase('plain', [5], { attempts: 1, connectionsOpened: 1 })
  assert.match(renderText(makeRunResult({ phases: { plain: one } })), /Requests: +1 \(1 attempt on the wire, 1 connection opened\)/)
  const many = makePhase('plain', [5, 6], { attempts: 3, connectionsOpened: 2 })
  assert.match(renderText(makeRunResult({ phases: { plain: many } })), /Requests: +2 \(3 attempts on the wire, 2 connections opened\)/)
})
