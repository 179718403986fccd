/** Runs for the HTML tests: the shared hedged fixture with hedges and delays in its timeline, as the engine records them. */
import type { RunResult } from '../../src/results/run-result.js'
import { makeHedgedRun } from './result-fixture.js'

export function hedgedRunWithTimeline(): RunResult {
  const run = makeHedgedRun()
  for (const p of run.phases.hedged?.timeline ?? []) Object.assign(p, { hedges: 10 + (p.t % 4), delayMs: 14 + (p.t % 3) / 2 })
  return run
}
