/**
 * The demo: the seed article's experiment, reproduced against the built-in
 * simulated replicas. 3 replicas answering in 5-15 ms, 1 request in 100
 * stalling 1 s; 4000 plain calls then 4000 hedged calls at the warm-up p95,
 * at 4 and at 40 in flight, with the servers' own counts beside the client's.
 */
import { run } from '../run/run.js'
import { loadProfile, profileRunOptions } from './profile.js'
import { spawnTarget } from './target.js'
import type { Progress } from '../run/run-options.js'
import type { RunResult } from '../results/run-result.js'

export interface DemoOptions {
  profile?: string
  /** Requests per phase (the seed used 4000; CI uses fewer). */
  requests?: number
  concurrencies?: number[]
  seed?: number
  onProgress?: (concurrency: number, p: Progress) => void
}

export interface DemoResult {
  profile: string
  runs: Array<{ concurrency: number; result: RunResult }>
}

export async function runDemo(opts: DemoOptions = {}): Promise<DemoResult> {
  const profileName = opts.profile ?? 'pi'
  const profile = loadProfile(profileName)
  const defaults = profileRunOptions(profile)
  const target = await spawnTarget({ profile: profileName })
  const runs: DemoResult['runs'] = []
  try {
    for (const concurrency of opts.concurrencies ?? [4, 40]) {
      const requests = opts.requests ?? defaults.requests ?? 4000
      const result = await run({
        ...defaults,
        urls: target.urls,
        serverStatsUrl: target.statsUrl,
        concurrency,
        requests,
        warmup: Math.min(defaults.warmup ?? 500, requests),
        label: `demo-c${concurrency}`,
        profile: profile.name,
        seed: opts.seed ?? 1,
        ...(opts.onProgress ? { onProgress: (p: Progress) => opts.onProgress!(concurrency, p) } : {}),
      })
      runs.push({ concurrency, result })
    }
  } finally {
    await target.close()
  }
  return { profile: profile.name, runs }
}
