/**
 * Progress on a real pseudo-terminal (util-linux `script`), including the
 * 0-column terminal some CI runners and `script` itself report: the run must
 * end on its own, honour SIGINT, and keep stdout free of progress. The old
 * ora spinner computed the lines to clear from the width and looped forever
 * at 0 columns, ignoring every signal (issue #12 item 2).
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RunResult } from '../src/results/run-result.js'
import { until } from './helpers/until.js'
import { BIN } from './helpers/cli.js'
import { startServer, type CountingServer } from './helpers/servers.js'
import { skipWithout } from './helpers/required-tool.js'
import { children, hasScript, quote, runInPty } from './helpers/pty.js'

const servers: CountingServer[] = []

after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
  await Promise.all(servers.map((s) => s.close()))
})

describe('progress on a terminal', { skip: skipWithout(hasScript, 'script', 'util-linux `script` is not installed') }, () => {
  test('a 0-column terminal: the run ends on its own, with its report', async () => {
    const s = await startServer({ delayMs: 5 })
    servers.push(s)
    // 2 x 60 requests of 5 ms at -c 2 take well under a second; 15 s is only a hang detector.
    const run = await runInPty([s.url, '-n', '60', '-c', '2', '--warmup', '10', '--no-save'], 0, 15_000)
    assert.equal(run.timedOut, false, `hung on a 0-column terminal; last output: ${JSON.stringify(run.screen.slice(-300))}`)
    assert.equal(run.code, 0, run.screen.slice(-2000))
    assert.match(run.screen, /hedged/)
    // No progress drawing at all when the width is unknown: no carriage-return redraws, no cursor moves.
    assert.doesNotMatch(run.screen, /\r(?!\n)|\x1b\[\d*[AK]/, 'progress was drawn on a 0-column terminal')
  })

  test('a 0-column terminal: SIGINT stops a long run and it still reports', async () => {
    const s = await startServer({ delayMs: 20 })
    servers.push(s)
    let sentAt = 0
    const run = await runInPty([s.url, '-z', '20s', '-c', '2', '--warmup', '4', '--no-save', '--mode', 'plain'], 0, 15_000, (pid) => {
      // Signal once the measured phase is under way (the server has seen more than the 4 warm-up
      // requests): a signal during start-up would meet Node's default handler, which is not what is tested.
      const poll = setInterval(() => {
        if (s.received <= 20) return
        clearInterval(poll)
        sentAt = performance.now()
        process.kill(pid, 'SIGINT')
      }, 20)
      setTimeout(() => clearInterval(poll), 10_000).unref()
    })
    assert.equal(run.timedOut, false, `SIGINT was not honoured; last output: ${JSON.stringify(run.screen.slice(-300))}`)
    assert.ok(sentAt > 0, 'the pid was never printed')
    // In-flight requests of 20 ms finish at once; the engine's grace is ~2 s at most.
    assert.ok(performance.now() - sentAt < 5000, `took ${Math.round(performance.now() - sentAt)} ms after SIGINT`)
    assert.match(run.screen, /SIGINT: stopping/)
    assert.match(run.screen, /plain/)
  })

  test('an 80-column terminal: one bar line redrawn in place, never wider than the terminal', async () => {
    const s = await startServer({ delayMs: 10 })
    servers.push(s)
    // -z 1.2s: the window runner reports progress every PROGRESS_EVERY_MS, so a bar is drawn several times.
    const run = await runInPty([s.url, '-z', '1200ms', '-c', '2', '--warmup', '4', '--no-save', '--mode', 'plain'], 80, 15_000)
    assert.equal(run.code, 0, run.screen.slice(-2000))
    const bars = run.screen.split('\r').filter((l) => /plain/.test(l) && /req\/s/.test(l))
    assert.ok(bars.length >= 2, `expected the bar redrawn; screen: ${JSON.stringify(run.screen.slice(0, 1500))}`)
    for (const bar of bars) {
      const visible = bar.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').split('\n')[0]!
      assert.ok(visible.length < 80, `bar wider than the terminal: ${JSON.stringify(visible)}`)
    }
    const last = bars[bars.length - 1]!
    assert.match(last, /ETA/)
    assert.match(last, /\d+(\.\d)? ?s ?\/ ?1\.2 ?s|of 1\.2 ?s/, `elapsed of -z: ${JSON.stringify(last)}`)
  })

  test('the terminal closes mid-run (SIGHUP, then EIO on every write): the partial run is still saved', async (t) => {
    const s = await startServer({ delayMs: 50 })
    servers.push(s)
    const dir = await mkdtemp(join(tmpdir(), 'hedgebench-hup-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    const inner = `exec ${quote(process.execPath)} ${quote(BIN)} ${[s.url, '--mode', 'plain', '--warmup', '0', '-n', '100000', '-c', '2', '--out-dir', dir].map(quote).join(' ')}`
    const term = spawn('script', ['-qfec', inner, '/dev/null'], { env: { ...process.env, TERM: 'xterm', NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] })
    children.push(term)
    term.stdout.resume()
    await until('requests to arrive', () => s.received >= 4, 40_000)
    // The terminal goes away without a word: the kernel hangs up its session (the launcher), which forwards SIGHUP.
    term.kill('SIGKILL')
    await until('the partial run to be saved', () => readdirSync(dir).some((f) => f.endsWith('.json')), 40_000)
    const saved = JSON.parse(readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.json'))!), 'utf8')) as RunResult
    assert.equal(saved.partial, true)
    assert.equal(saved.stoppedIn, 'plain')
    assert.ok(saved.phases.plain!.requests > 0)
    const atSave = s.received
    await new Promise((r) => setTimeout(r, 300))
    assert.ok(s.received <= atSave + 2, 'stopped sending')
  })
})
