/**
 * The -q rate a result was asked for: the whole run's, or a shard's share of
 * it (a shard reports against its own share, not the run's), or the shares
 * of the shards a partial merge holds. Null in a closed loop, and under a
 * schedule that steps the rate.
 */
import { rateShareOf } from '../results/shard-share.js'
import type { RunResult } from '../results/run-result.js'
import { round3 } from '../core/round.js'

export function askedRate(result: RunResult): number | null {
  const rate = result.config.rate
  // A step or line --load-schedule asks no one rate (`rate` is its start): its seconds say what it asked.
  if (rate === null || (result.config.loadSchedule && result.config.loadSchedule.kind !== 'const')) return null
  if (result.shard) return rateShareOf(rate, result.shard)
  const count = result.merge?.shardCount
  if (result.generators && count !== undefined) return round3(result.generators.reduce((sum, g) => sum + rateShareOf(rate, { index: g.shard, count }), 0))
  return rate
}
