/**
 * The report explains hedging that went wrong (trust issue #12 item 11):
 * a trigger rate far above what the delay's percentile implies, hedges the
 * budget refused and the slow requests among them, what to try, and small
 * runs passing the budget because of the bucket's initial burst.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { hedgingAdvice } from '../src/report/hedging-advice.js'
import { renderText } from '../src/report/text.js'
import type { RunResult } from '../src/results/run-result.js'
import { startServer, type CountingServer } from './helpers/servers.js'
import { makeHedgedRun } from './helpers/result-fixture.js'
import { killAllChildren, runCli } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'

const servers: CountingServer[] = []
after(async () => {
  killAllChildren()
  await Promise.all(servers.map((s) => s.close()))
})

async function runJson(args: string[]): Promise<RunResult> {
  const r = await runMain([...args, '--no-save', '-o', 'json'], { timeoutMs: 60_000 })
  assert.equal(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as RunResult
}

test('20 requests against a 10 % budget: the burst, the refusals, the slow requests refused a hedge, what to try', async () => {
  const s = await startServer({ delayMs: 20 })
  servers.push(s)
  // -c 1, a 1 ms delay against a 20 ms server: every request wants a hedge. The bucket starts
  // with 10 tokens (its capacity), each request earns 0.1 before its hedge spends 1: before the
  // k-th hedge it holds 10 - 0.9 (k - 1) >= 1 for k <= 11, so 11 hedges (+55 %) and 9 refusals.
  // Under load a request can miss its timer (the loop stalls past the 20 ms answer, which is
  // handled first): it then neither hedges nor is refused, and if it is among the first (the
  // bucket still full) its 0.1 token is lost to the cap, so 10 or 11 hedges; never more.
  const result = await runJson([s.url, '-n', '20', '-c', '1', '--mode', 'hedged', '--warmup', '0', '--hedge-delay', '1ms', '--slow', '10ms'])
  const hedged = result.phases.hedged!
  const h = hedged.hedging!
  const hedges = h.hedgesSent + h.unsent
  assert.ok(hedges === 10 || hedges === 11, JSON.stringify(h))
  assert.ok(h.budgetDenied >= 1 && h.budgetDenied <= 20 - hedges, `refused ${h.budgetDenied}`)
  assert.equal(hedged.slow.count, 20, 'every request is over 10 ms')
  assert.equal(h.slowBudgetDenied, h.budgetDenied, 'so every refused one was slow (one refusal per request at --max-attempts 2)')
  const advice = hedgingAdvice(hedged, result.config)
  assert.deepEqual(advice, [
    `the 10% budget refused ${h.budgetDenied} hedges; ${h.budgetDenied} of the 20 requests over 10 ms wanted a hedge and were refused one`,
    // Every copy of a 20 ms answer sent 1 ms later loses to its original: a larger budget would buy more losers.
    `try a later percentile (--hedge-delay p99) or fewer in flight (-c 1), not a larger budget: only ${Math.round((1000 * h.hedgeWins) / h.hedgesSent) / 10}% of the ${h.hedgesSent} hedges sent won, so more copies would mostly lose (or the replicas are slow together, which no copy escapes)`,
    `extra load ${(100 * (hedged.attempts / 20 - 1)).toFixed(1)}% is over the 10% budget because the budget starts with a burst of 10 hedges: 20 requests allow up to 10 + 10% x 20 = 12 hedges (60%); from -n 1000 the burst adds at most 1 point`,
  ])
  assert.ok(renderText(result).includes(`  ! ${advice[0]}`), 'the text report prints it under Hedging')
})

test('a delay measured on a fast warm-up, then a slower target: the trigger rate far above the p95 is explained', async () => {
  // 60 warm-up requests at 1 ms, then 200 ms. The delay is the p95 of the last 30 warm-up
  // requests (rank 29: the second slowest), so it reaches 200 ms only if two 1 ms requests took
  // over 200 ms (a 200 ms freeze of the client or server, twice); otherwise all 12 hedged
  // requests fire a hedge: 100 % against the 5 % a p95 implies. (With a 30 ms step, a loaded
  // machine once pushed the warm-up p95 near the step.)
  const s = await startServer({ delayMs: (n) => (n < 60 ? 1 : 200) })
  servers.push(s)
  const result = await runJson([s.url, '-n', '12', '-c', '3', '--mode', 'hedged', '--warmup', '60', '--hedge-budget', 'off'])
  const hedged = result.phases.hedged!
  assert.ok(hedged.hedging!.delayMs < 200, `delay ${hedged.hedging!.delayMs} ms`)
  assert.equal(hedged.hedging!.triggerRate, 100)
  const advice = hedgingAdvice(hedged, result.config)
  assert.match(
    advice[0]!,
    /^\d+\.\d% of requests fired a hedge, far above the ~5% a p95 delay implies: requests were slower while hedging than when the delay was measured/,
  )
  assert.match(advice[1]!, /^try a later percentile \(--hedge-delay p99\)/)
  assert.equal(advice.length, 2, advice.join('\n'))
})

test('hedges that win, refused by the budget: the advice may raise the budget', () => {
  const result = makeHedgedRun()
  const hedged = result.phases.hedged!
  Object.assign(hedged.hedging!, { budgetDenied: 30, hedgesSent: 140, hedgeWins: 100 })
  const advice = hedgingAdvice(hedged, result.config)
  assert.ok(
    advice.some((a) => a.startsWith('try a later percentile') && a.includes('a larger budget (--hedge-budget 20)')),
    advice.join('\n'),
  )
  // The same refusals with hedges that mostly lost: not a larger budget.
  Object.assign(hedged.hedging!, { hedgeWins: 10 })
  assert.ok(hedgingAdvice(hedged, result.config).some((a) => a.includes('not a larger budget: only 7.1% of the 140 hedges sent won')))
})

test('a hedged run that behaves gets no advice', async () => {
  const s = await startServer({ delayMs: 2 })
  servers.push(s)
  const result = await runJson([s.url, '-n', '20', '-c', '1', '--mode', 'hedged', '--warmup', '0', '--hedge-delay', '1s'])
  assert.deepEqual(hedgingAdvice(result.phases.hedged!, result.config), [])
})

test("--help describes the budget's burst", async () => {
  const r = await runCli(['--help'], { timeoutMs: 30_000 })
  assert.match(r.stdout.replace(/\s+/g, ' '), /starts with a burst of 10 hedges, so runs under ~1000 requests can pass the budget/)
})

test('hedges fired by failed attempts (a dead replica) are blamed on the replica, not the delay', () => {
  const result = makeHedgedRun()
  result.config.eject = null
  result.config.hedge.nonFatalStatus = [502, 503, 504]
  const hedged = result.phases.hedged!
  // 10.9 % of 4000 requests fired a hedge, 420 of them at once after a refused connection: only 16 (0.4 %) at the delay.
  Object.assign(hedged.hedging!, { triggerRate: 10.9, nonFatalTriggered: 420, budgetDenied: 0 })
  const advice = hedgingAdvice(hedged, result.config)
  assert.deepEqual(
    advice.filter((a) => !a.startsWith('extra load')),
    [
      '420 of the 436 requests that fired a hedge fired it at once because an attempt failed (a connection error or a non-fatal status: 502/503/504), not because the delay passed: a failing replica, not the delay; outlier ejection (drop --no-eject) keeps requests off a replica that keeps failing',
    ],
  )
  // The same failovers beside a delay that fires far too often: both are named, the rate at the delay alone.
  Object.assign(hedged.hedging!, { triggerRate: 25 })
  const both = hedgingAdvice(hedged, result.config)
  assert.ok(
    both.some((a) =>
      a.startsWith(
        '14.5% of requests fired a hedge when the delay passed (besides 420 fired at once by a failed attempt), far above the ~5% a p95 delay implies',
      ),
    ),
    both.join('\n'),
  )
  assert.ok(!both.some((a) => a.startsWith('420 of')), 'failovers are not most of the triggers: no failover line')
  // A gRPC run's non-fatal statuses are codes, named as gRPC names them.
  Object.assign(hedged.hedging!, { triggerRate: 10.9 })
  result.config.hedge.nonFatalStatus = [14, 8]
  assert.match(hedgingAdvice(hedged, result.config)[0]!, /\(a connection error or a non-fatal status: UNAVAILABLE\/RESOURCE_EXHAUSTED\)/)
})

test('a saturation gate that held back more hedges than were sent is explained', () => {
  const result = makeHedgedRun()
  const hedged = result.phases.hedged!
  Object.assign(hedged.hedging!, {
    hedgesSent: 0,
    hedgeWins: 0,
    triggerRate: 0,
    budgetDenied: 0,
    nonFatalTriggered: 0,
    suppressed: { overload: 21, errorRate: 0, targetBusy: 0, pushback: 0 },
  })
  assert.ok(
    hedgingAdvice(hedged, result.config).includes(
      'the saturation gate held back 21 hedges (overload 21, error rate 0, target busy 0), and none was sent: hedging stood down while the replicas showed saturation, so this phase shows little of what hedging buys (--no-suppress hedges regardless)',
    ),
    hedgingAdvice(hedged, result.config).join('\n'),
  )
})
