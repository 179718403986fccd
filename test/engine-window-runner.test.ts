/**
 * One measured window on a thread (window-runner.ts), as both the main
 * thread and every worker thread run it: connections count for the window
 * that opened them (for the last lane when two are interleaved), the end
 * waits for the losing attempts to settle, the duration stops at the last
 * request, and progress is reported while the window sends. Measured
 * against real counting servers on 127.0.0.1; only the bound on a stuck
 * attempt, which a correct engine and a real server cannot produce, is
 * checked on a stand-in window.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import type { Lane, LoadWindow } from '../src/engine/load-generator.js'
import type { Progress } from '../src/run/run-options.js'
import { run } from '../src/run/run.js'
import { PhaseStats } from '../src/stats/phase-stats.js'
import { WindowRunner } from '../src/run/window-runner.js'
import { settle, startServer } from './helpers/servers.js'

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

test('window runner: each connection counts for the window that opened it, exactly; interleaved, for the last lane', async (t) => {
  const server = await startServer({ delayMs: 2 })
  t.after(() => server.close())
  // c = 3 on keep-alive connections that the server never closes: the
  // warm-up opens one per slot, and the later windows reuse them. The
  // 5 s hedge delay never fires against 2 ms answers.
  const sequential = await run({ urls: [server.url], concurrency: 3, requests: 30, warmup: 12, mode: 'both', seed: 3, hedge: { delay: 5000 } })
  const { warmup, plain, hedged } = sequential.phases
  assert.deepEqual([warmup!.connectionsOpened, plain!.connectionsOpened, hedged!.connectionsOpened], [3, 0, 0])
  await settle([server], 72)
  // The server's own count: the 3 connections, and the run's reachability probe (one TCP connect per origin).
  assert.equal(server.accepted, 3 + 1)

  // Two lanes in one window: their shared connections count for the last one (hedged).
  const before = server.accepted
  const interleaved = await run({
    urls: [server.url],
    concurrency: 3,
    requests: 20,
    warmup: 0,
    mode: 'both',
    schedule: 'interleaved',
    seed: 4,
    hedge: { delay: 5000 },
  })
  assert.deepEqual([interleaved.phases.plain!.connectionsOpened, interleaved.phases.hedged!.connectionsOpened], [0, 3])
  await settle([server], 72 + 40)
  assert.equal(server.accepted - before, 3 + 1)
})

test('window runner: the end waits for every losing attempt to settle, and the duration stops at the last request', async (t) => {
  // Originals answer in 400 ms, hedges (tagged x-hedge-attempt) in 2 ms. With
  // --cancel ignore every request is won by its hedge at ~22 ms and leaves
  // its original running on the server until 400 ms.
  const slowOriginals = { delayMs: (_n: number, req: { headers: Record<string, unknown> }) => (req.headers['x-hedge-attempt'] ? 2 : 400) }
  const servers = await Promise.all([startServer(slowOriginals), startServer(slowOriginals)])
  t.after(() => Promise.all(servers.map((s) => s.close())).then(() => {}))
  const progress: Progress[] = []
  const n = 6
  const result = await run({
    urls: servers.map((s) => s.url),
    concurrency: 2,
    requests: n,
    warmup: 0,
    mode: 'hedged',
    seed: 5,
    hedge: { delay: 20, cancel: 'ignore', budgetPct: null as unknown as number },
    onProgress: (p) => progress.push(p),
  })
  const phase = result.phases.hedged!
  const h = phase.hedging!
  assert.equal(h.hedgeWins, n)
  // Read the moment run() returns, with no waiting: every loser had made its
  // last callback (counted as a late answer discarded) and every original
  // was answered by the server. A window that ended at its last request
  // would have counted the last losers as neither.
  assert.equal(h.lateDiscarded, n, 'every loser settled before the phase was taken')
  assert.deepEqual(
    servers.map((s) => s.completed - s.received),
    [0, 0],
    'every original was answered before run() returned',
  )
  // Three requests in a row per slot, each ended by its hedge at ~22 ms:
  // the duration stops there, not at the last loser (>= 400 ms after the
  // last original started).
  assert.ok(phase.durationMs < 400, `duration ${phase.durationMs} ms`)
  // Progress comes while the window sends, never during the drain (here
  // ~330 ms, long enough for a 250 ms tick if the reports went on).
  assert.ok(
    progress.every((p) => p.phase === 'hedged' && p.elapsedMs <= phase.durationMs),
    JSON.stringify(progress),
  )
})

test('window runner: progress is reported every 250 ms while the window sends', async (t) => {
  const server = await startServer({ delayMs: 25 })
  t.after(() => server.close())
  const progress: Progress[] = []
  // c = 1, 30 requests of 25 ms: the window sends for >= 750 ms, so the
  // 250 ms tick comes at least once (a late timer still fires before the
  // loop can finish the remaining requests).
  const result = await run({ urls: [server.url], concurrency: 1, requests: 30, warmup: 0, mode: 'plain', seed: 6, onProgress: (p) => progress.push(p) })
  const durationMs = result.phases.plain!.durationMs
  assert.ok(durationMs >= 750)
  assert.ok(progress.length >= 1, 'at least one report while sending')
  // The k-th report comes at 250 k ms or a little later (timers are never early), and before the window ended.
  for (const [i, p] of progress.entries()) {
    assert.equal(p.phase, 'plain')
    assert.equal(p.total, 30)
    assert.ok(p.elapsedMs >= 250 * (i + 1) - 1 && p.elapsedMs <= durationMs, JSON.stringify(p))
    assert.ok(p.done <= 30 && p.done >= (i > 0 ? progress[i - 1]!.done : 0), JSON.stringify(progress))
  }
})

function lane(name: 'plain' | 'hedged'): Lane {
  const stats = new PhaseStats({ name, slowMs: 30, replicas: ['http://127.0.0.1:1'], fanout: 1, openLoop: false, runStartedAt: performance.now() })
  return { stats } as Lane
}

/** A window that sends for `ms` (what the runner reads of a LoadWindow). */
function windowOf(ms: number): LoadWindow {
  const w = {
    startedAt: performance.now(),
    completed: 0,
    run: async () => {
      w.completed = 5
      await sleep(ms)
      w.completed = 10
    },
  }
  return w as unknown as LoadWindow
}

test('window runner: the wait for stuck attempts is bounded by the timeout (+100 ms); no progress during that wait', async () => {
  // An attempt that never settles outlives its own -t, which a correct
  // engine never lets happen against a real server: so this bound, a
  // safety net, is checked on a stand-in window with one attempt left out.
  const runner = new WindowRunner(new EventEmitter(), 100)
  const lanes = [lane('plain')]
  lanes[0]!.stats.launched = 1 // never settles
  runner.begin(lanes)
  const progress: number[] = []
  const t0 = performance.now()
  const end = await runner.run(windowOf(300), null, (done) => progress.push(done))
  const waited = performance.now() - end.endedAt
  assert.ok(waited >= 195 && waited < 1000, `bounded wait: ${waited} ms`)
  assert.ok(end.endedAt - t0 >= 295)
  assert.deepEqual(progress, [5], 'one progress report while the window sent, none during the drain')
})
