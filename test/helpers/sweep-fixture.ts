/**
 * Sweep results built in process for the renderers' tests and the docs'
 * screenshots (a real sweep takes its time): a plain lane whose requests
 * stall 1 in `stallEvery` for 1 s, and one hedged lane per delay in which
 * every request slower than the delay was hedged and won at the delay plus
 * a base latency. Every figure comes from real HDR histograms.
 */
import { seededRandom } from '../../src/core/random.js'
import type { SweepResult, SweepSetting } from '../../src/results/sweep-result.js'
import { makeConfig, makeHedgingStats, makePhase, makeRunResult, stallingLatencies } from './result-fixture.js'

export interface SweepFixture {
  /** Each setting's delay: `p90` (of the plain lane) or a fixed `20ms`. */
  delays: string[]
  /** Requests per lane. */
  requests?: number
  seed?: number
  label?: string
  stallEvery?: number
}

export const TWELVE_DELAYS = ['p50', 'p70', 'p75', 'p80', 'p85', 'p90', 'p95', 'p99', '20ms', '22ms', '50ms', '200ms']

export function makeSweep({ delays, requests = 2000, seed = 1, label = 'sweep-fixture', stallEvery = 50 }: SweepFixture): SweepResult {
  const plainLatencies = stallingLatencies(requests, seed, stallEvery)
  const plain = makePhase('plain', plainLatencies)
  const sorted = [...plainLatencies].sort((a, b) => a - b)
  const settings = delays.map((delayLabel, i): SweepSetting => {
    const percentile = delayLabel.startsWith('p') ? Number(delayLabel.slice(1)) : null
    const delayMs = percentile === null ? Number(delayLabel.replace('ms', '')) : sorted[Math.floor((percentile / 100) * (sorted.length - 1))]!
    const next = seededRandom(seed * 100 + i)
    let hedgesSent = 0
    const latencies = stallingLatencies(requests, seed + i + 1, stallEvery).map((ms) => {
      if (ms <= delayMs) return ms
      hedgesSent++
      return Math.min(ms, delayMs + 5 + next() * 10)
    })
    const hedged = makePhase('hedged', latencies, {
      attempts: requests + hedgesSent,
      hedging: makeHedgingStats({
        delayMs,
        maxAttempts: 2,
        budgetPct: null,
        hedgesSent,
        extraLoadPct: Math.round((hedgesSent / requests) * 100_000) / 1000,
        perAttempt: [],
      }),
    })
    return { label: delayLabel, delayLabel, percentile, delayMs, maxAttempts: 2, budgetPct: null, hedged }
  })
  return {
    kind: 'sweep',
    run: makeRunResult({ label, config: makeConfig({ mode: 'both', requests, warmup: 200 }), phases: { plain } }),
    settings,
    connections: { connectionsOpened: 4, connectionsClosedByCancel: 0, streamsResetByCancel: 0, streamsResentAfterGoaway: 0 },
    partial: false,
    warnings: [],
  }
}
