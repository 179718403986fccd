/**
 * What makes shards of one run recognisable as such: the run id, the
 * shard's share of the load, the start record. A merge refuses results
 * whose run id or configuration differ (stats/result-merge.ts, with results/run-compat.ts).
 */
import { createHash } from 'node:crypto'
import { hostname } from 'node:os'
import { UsageError } from '../core/errors.js'
import { comparableConfig } from '../results/run-compat.js'
import type { RunConfig, StartRecord } from '../results/run-result.js'
import type { ResolvedRun } from './resolve-options.js'
import { rateShareOf, shareOf, type Shard } from '../results/shard-share.js'
import { checkedShare } from './shard.js'

/**
 * Default run id: the agreed start time (or this process's own start) and
 * a short hash of the configuration, e.g. 20261201T070000Z-3f9a1c2b. Shards
 * launched with one --start-at and one config agree on it without talking.
 */
export function deriveRunId(startMs: number, config: RunConfig): string {
  const time = new Date(startMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
  const hash = createHash('sha256')
    .update(JSON.stringify(comparableConfig(config)))
    .digest('hex')
    .slice(0, 8)
  return `${time}-${hash}`
}

export function checkRunId(id: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(id)) throw new UsageError(`invalid --run-id "${id}" (letters, digits, '.', '_' and '-', at most 100)`)
  return id
}

/** The shard's part of the run: its exact share of -n, -q and --skip-first (a shard may skip none), its own seed (the same --seed must not replay one pick sequence N times). */
export function shardPart(cfg: ResolvedRun, shard: Shard | undefined): ResolvedRun {
  if (!shard || shard.count === 1) return cfg
  return {
    ...cfg,
    requests: cfg.requests === null ? null : checkedShare(cfg.requests, shard, '-n'),
    rate: cfg.rate === null ? null : rateShare(cfg.rate, shard),
    skipFirst: shareOf(cfg.skipFirst, shard),
    seed: cfg.seed + shard.index,
    shardOffsetMs: cfg.rate === null ? 0 : (shard.index * 1000) / cfg.rate,
    firstReplica: shard.index % cfg.origins.length,
    shard,
  }
}

function rateShare(rate: number, shard: Shard): number {
  const share = rateShareOf(rate, shard)
  if (share <= 0) throw new UsageError(`-q ${rate} split over ${shard.count} shards leaves shard ${shard.index} no requests/s (give at least ${shard.count})`)
  return share
}

/** Default --max-start-lateness: a small fraction of a timed phase, within [50 ms, 1 s]; 100 ms for a counted one. */
export function defaultMaxLateness(cfg: ResolvedRun): number {
  if (cfg.durationMs === null) return 100
  return Math.min(1000, Math.max(50, cfg.durationMs * 0.01))
}

export function startRecord(scheduledAt: number | undefined, firstPhaseAt: number, maxLatenessMs: number): StartRecord {
  const lateMs = scheduledAt === undefined ? 0 : Math.round((firstPhaseAt - scheduledAt) * 10) / 10
  return {
    scheduledAt: scheduledAt === undefined ? null : new Date(scheduledAt).toISOString(),
    lateMs,
    maxLatenessMs,
    late: lateMs > maxLatenessMs,
  }
}

export function hostName(): string {
  return process.env.HOSTNAME || hostname()
}
