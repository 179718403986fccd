/**
 * -z bounds the warm-up too: it stops after --warmup requests or -z,
 * whichever comes first. Before, `-z 1s -c 5` against a 200 ms server was
 * still warming up after 25 s (1000 warm-up requests, the default cap when
 * -z leaves -n unset). Real server in a child process, through the CLI.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import type { RunResult } from '../src/results/run-result.js'
import { killAllChildren, runCli } from './helpers/cli.js'
import { spawnFixedDelayServer } from './helpers/fixed-delay-server.js'

after(() => killAllChildren())

test('-z 300ms -c 5 against a 200 ms server: the warm-up stops at 300 ms too', async (t) => {
  const server = await spawnFixedDelayServer(200)
  t.after(() => server.close())
  const run = await runCli([server.url, '-z', '300ms', '-c', '5', '--mode', 'plain', '--no-save', '-o', 'json'], { timeoutMs: 20_000 })
  assert.equal(run.timedOut, false, 'the run ended on its own (an unbounded warm-up takes 40 s)')
  assert.equal(run.code, 0, run.stderr)
  const warmup = (JSON.parse(run.stdout) as RunResult).phases.warmup!
  // Closed loop, 5 slots, each request >= 200 ms: a slot starts at 0 ms and at
  // ~200 ms (< 300 ms), and no third time (>= 400 ms): at most 10 requests, at
  // least the first 5; the window ends when the second round answers (~400 ms).
  assert.ok(warmup.requests >= 5 && warmup.requests <= 10, `warm-up requests ${warmup.requests}`)
  assert.equal(warmup.errors, 0)
  // Issuing stops at 300 ms; the last requests, started before it, end 200 ms
  // later: by 500 ms, plus timer lateness in the server and the client (given
  // 200 ms here: stalls of a loaded 2-core machine). Unbounded, it took ~40 s.
  assert.ok(warmup.durationMs < 300 + 200 + 200, `warm-up took ${warmup.durationMs} ms`)
})
