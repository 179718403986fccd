/**
 * A run's warnings, collected in one place (run/run-warnings.ts): every
 * source in the result's order, checked without a socket.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { resolveOptions } from '../src/run/resolve-options.js'
import { RunWarnings } from '../src/run/run-warnings.js'
import type { RunOptions } from '../src/run/run-options.js'
import type { PhaseResult, StartRecord } from '../src/results/run-result.js'

test('warnings: the server-stats failure first, then what the run said, what the options call for, the HTTP/2 limits servers broke, and each phase generator last', () => {
  const options: RunOptions = {
    urls: ['http://127.0.0.1:9/'],
    requests: 50,
    durationMs: 2000,
    concurrency: 2,
    warmup: 0,
    hedge: { adaptiveWindow: { requests: 10 } },
  }
  const cfg = resolveOptions(options, 1)
  const w = new RunWarnings()
  w.add('derived from too little')
  w.lateStart({ late: false, lateMs: 1, maxLatenessMs: 50 } as StartRecord)
  w.lateStart({ late: true, lateMs: 80, maxLatenessMs: 50 } as StartRecord)
  const replica = (url: string, errorKinds: Record<string, number>) => ({ url, errorKinds })
  const phase = (name: string, warnings: string[], replicas = [replica('http://127.0.0.1:9/', {})]) =>
    ({ name, generator: { warnings }, replicas }) as unknown as PhaseResult
  const out = w.finish({
    cfg,
    options,
    peers: ['127.0.0.1:9'],
    serverStats: { url: 'http://user:secret@127.0.0.1:8/stats', failure: 'ECONNREFUSED' },
    phases: [
      phase('plain', ['GC paused'], [replica('http://127.0.0.1:9/', { 'h2: PING flood': 3, ECONNRESET: 1 })]),
      phase('hedged', ['loop lagged'], [replica('http://127.0.0.1:9/', { 'h2: PING flood': 1, 'h2: header list over 64 KiB': 1 })]),
    ],
    grpcClient: null,
  })
  assert.deepEqual(out, [
    '--server-stats http://***@127.0.0.1:8/stats could not be read: ECONNREFUSED; no server cross-check',
    'derived from too little',
    "started 80.0 ms after --start-at (more than the 50.0 ms allowed): this shard's window may not overlap the others'",
    'one URL: hedges go to the same origin on a separate connection, so replica independence is not guaranteed',
    'closed loop: latency is what each worker observed, which understates the tail when the target stalls (use -q RATE for open-loop, corrected latency)',
    '--adaptive-window, --delay-min and --delay-max bound an adaptive delay: without --adaptive they had no effect',
    '-z 2.00 s and -n 50 given: -z wins (as in hey), each phase ran for 2.00 s and -n was ignored',
    'http://127.0.0.1:9/: 4 attempts failed as "h2: PING flood": the server broke a limit of the HTTP/2 client, which closed its connection (GOAWAY) and counted nothing it sent (--help, HTTP/2 limits)',
    'http://127.0.0.1:9/: 1 attempt failed as "h2: header list over 64 KiB": the server broke a limit of the HTTP/2 client, which closed its connection (GOAWAY) and counted nothing it sent (--help, HTTP/2 limits)',
    'plain: GC paused',
    'hedged: loop lagged',
  ])
  // Read again, the same: finishing does not consume what was said.
  assert.deepEqual(w.finish({ cfg, options, peers: ['127.0.0.1:9'], serverStats: null, phases: [], grpcClient: null }), out.slice(1, 7))
})
