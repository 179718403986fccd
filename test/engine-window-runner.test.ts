/**
 * One measured window on a thread (window-runner.ts), as both the main
 * thread and every worker thread run it: connections count for the
 * window's last lane while it runs, the end waits for the losing attempts
 * to settle (bounded by the timeout), the duration stops at the last
 * request, and progress is reported while the window sends.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import type { Lane, LoadWindow } from '../src/engine/load-generator.js'
import { PhaseStats } from '../src/stats/phase-stats.js'
import { WindowRunner } from '../src/run/window-runner.js'

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

function lane(name: 'plain' | 'hedged'): Lane {
  const stats = new PhaseStats({ name, slowMs: 30, replicas: ['http://127.0.0.1:1'], fanout: 1, openLoop: false, runStartedAt: performance.now() })
  return { stats } as Lane
}

/** A window that sends for `ms` (what the runner reads of a LoadWindow); `during` runs while it sends, `atEnd` as it ends. */
function windowOf(ms: number, during?: () => void, atEnd?: () => void): LoadWindow {
  const w = {
    startedAt: performance.now(),
    completed: 0,
    run: async () => {
      w.completed = 5
      during?.()
      await sleep(ms)
      w.completed = 10
      atEnd?.()
    },
  }
  return w as unknown as LoadWindow
}

test('window runner: connections count for the last lane while the window runs; it ends when every attempt has settled', async () => {
  const agent = new EventEmitter()
  const runner = new WindowRunner(agent, 5000)
  const lanes = [lane('plain'), lane('hedged')]
  agent.emit('connect') // between windows: counts for no one
  runner.begin(lanes)
  const plain = lanes[0]!.stats
  plain.launched = 1 // a losing attempt still out when the window ends, settling 60 ms later
  const progress: number[] = []
  const window = windowOf(
    60,
    () => agent.emit('connect'),
    () => setTimeout(() => (plain.settled = 1), 60),
  )
  const end = await runner.run(window, 50, (done) => progress.push(done))
  const after = performance.now()
  agent.emit('connect') // after the window: counts for no one
  assert.deepEqual(lanes.map((l) => l.stats.connectionsOpened), [0, 1])
  assert.ok(after - end.endedAt >= 55, 'the end waited for the losing attempt to settle')
  assert.equal(end.durationMs, end.endedAt - window.startedAt, 'the duration stops at the last request, not after the drain')
  assert.equal(end.health.cores, 1)
  assert.ok(progress.length <= 1, 'progress every 250 ms')
})

test('window runner: the wait for stuck attempts is bounded by the timeout (+100 ms); progress is reported while sending', async () => {
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
