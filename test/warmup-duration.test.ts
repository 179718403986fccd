/**
 * -z bounds the warm-up too: it stops after --warmup requests or -z,
 * whichever comes first. Before, `-z 1s -c 5` against a 200 ms server was
 * still warming up after 25 s (1000 warm-up requests, the default cap when
 * -z leaves -n unset). Real server in a child process, through the CLI.
 * And the default warm-up's least duration (resolve-options.ts), against a
 * real counting server in this process.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { RunResult } from '../src/results/run-result.js'
import { runMain } from './helpers/main-cases.js'
import { spawnFixedDelayServer } from './helpers/fixed-delay-server.js'
import { startServer } from './helpers/servers.js'
import { run } from '../src/run/run.js'
import { DEFAULTS } from '../src/run/resolve-options.js'

test('-z 300ms -c 5 against a 200 ms server: the warm-up stops at 300 ms too', async (t) => {
  const server = await spawnFixedDelayServer(200)
  t.after(() => server.close())
  const run = await runMain([server.url, '-z', '300ms', '-c', '5', '--mode', 'plain', '--no-save', '-o', 'json'], { timeoutMs: 20_000 })
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

test('the default warm-up of a run of 1,000 requests or more lasts at least 2 s; a given --warmup, and a short run, are taken as they are', async (t) => {
  // A fast target: 1,000 requests at -c 8 take well under a second, less than V8 needs to compile the request path.
  const server = await startServer({ delayMs: 1 })
  t.after(() => server.close())
  const long = await run({ urls: [server.url], concurrency: 8, requests: 1000, mode: 'plain', seed: 1 })
  const w = long.phases.warmup!
  // Both bounds hold whatever the machine's speed: at least 2 s and at least the 1,000 (past 1,000 when they took
  // less than 2 s, as on an idle machine; exactly 1,000 when a loaded one needed longer).
  assert.ok(w.durationMs >= DEFAULTS.warmupMinMs, `default warm-up took ${w.durationMs} ms`)
  assert.ok(w.requests >= DEFAULTS.warmupCap, `default warm-up sent ${w.requests} requests: at least ${DEFAULTS.warmupCap}`)
  assert.equal(w.errors, 0)
  // The same run with --warmup 1000 given: exactly 1,000, however fast (no 2 s minimum would stop at 1,000).
  const given = await run({ urls: [server.url], concurrency: 8, requests: 1000, warmup: 1000, mode: 'plain', seed: 1 })
  assert.equal(given.phases.warmup!.requests, 1000)
  // hey's default -n 200: a warm-up of n, no minimum.
  const short = await run({ urls: [server.url], concurrency: 8, requests: 200, mode: 'plain', seed: 1 })
  assert.equal(short.phases.warmup!.requests, 200)
})
