/**
 * The demo (the CLI's: it runs the client against the simulated target): the Raspberry Pi article's experiment, reproduced against the built-in
 * simulated replicas. 3 replicas answering in 5-15 ms, 1 request in 100
 * stalling 1 s; 4000 plain calls then 4000 hedged calls at the warm-up p95,
 * at 4 and at 40 in flight, with the servers' own counts beside the client's.
 * With `http2`, each concurrency runs over HTTP/1.1 and then over h2c
 * against the same replicas, to show what a cancel costs on each.
 */
import { run } from '../run/run.js'
import { loadProfile, type Profile } from '../sim/profile.js'
import { spawnTarget, type Target } from '../sim/target.js'
import type { Progress } from '../run/run-options.js'
import type { RunResult } from '../results/run-result.js'
import type { DemoProtocol, DemoResult } from '../results/demo-result.js'
import { profileRunOptions } from './profile-options.js'

export type { DemoProtocol, DemoResult } from '../results/demo-result.js'

export interface DemoOptions {
  profile?: string
  /** Requests per phase (the seed used 4000; CI uses fewer). */
  requests?: number
  concurrencies?: number[]
  seed?: number
  /** Run each concurrency over HTTP/1.1 and then over h2c (HTTP/2 with prior knowledge). */
  http2?: boolean
  onProgress?: (concurrency: number, p: Progress) => void
  /** Stops the demo (Ctrl-C): the run in progress ends as an interrupted run does, and no further run starts. */
  signal?: AbortSignal
  /** Aborts in-flight requests at once (a second Ctrl-C). */
  stopNow?: AbortSignal
}

export async function runDemo(opts: DemoOptions = {}): Promise<DemoResult> {
  const profile = loadProfile(opts.profile ?? 'pi')
  const target = await spawnTarget({ profile: opts.profile ?? 'pi' })
  const runs: DemoResult['runs'] = []
  try {
    for (const concurrency of opts.concurrencies ?? [4, 40]) {
      for (const protocol of opts.http2 ? (['HTTP/1.1', 'h2c'] as const) : [null]) {
        if (opts.signal?.aborted) break
        const result = await demoRun(opts, profile, target, concurrency, protocol)
        runs.push(protocol ? { concurrency, result, protocol } : { concurrency, result })
      }
    }
  } finally {
    await target.close()
  }
  return { profile: profile.name, runs }
}

/** One run of the demo: warm-up, plain, hedged, with the replicas' counts beside the client's. */
function demoRun(opts: DemoOptions, profile: Profile, target: Target, concurrency: number, protocol: DemoProtocol | null): Promise<RunResult> {
  const defaults = profileRunOptions(profile)
  const requests = opts.requests ?? defaults.requests ?? 4000
  return run({
    ...defaults,
    urls: target.urls,
    serverStatsUrl: target.statsUrl,
    concurrency,
    requests,
    warmup: Math.min(defaults.warmup ?? 500, requests),
    label: `demo-c${concurrency}${protocol === 'h2c' ? '-h2c' : ''}`,
    profile: profile.name,
    seed: opts.seed ?? 1,
    http2: protocol === 'h2c',
    ...(opts.onProgress ? { onProgress: (p: Progress) => opts.onProgress!(concurrency, p) } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.stopNow ? { stopNow: opts.stopNow } : {}),
  })
}
