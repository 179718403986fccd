/**
 * --shard I/N: one of N generators of one run, read from the command line;
 * the split itself is results/shard-share.ts.
 */
import { UsageError } from '../core/errors.js'
import { shareOf, type Shard } from '../results/shard-share.js'

export type { Shard } from '../results/shard-share.js'

/** Upper bound on N: far more pods than anyone schedules for one target, small enough to catch a typo. */
const MAX_SHARDS = 10_000

/**
 * "I/N", or "auto/N" where I comes from JOB_COMPLETION_INDEX (set by a
 * Kubernetes Indexed Job in every pod), so a pod needs no shell.
 */
export function parseShard(text: string, env: NodeJS.ProcessEnv = process.env): Shard {
  const m = /^(auto|\d+)\/(\d+)$/.exec(text.trim())
  if (!m) throw new UsageError(`invalid --shard "${text}" (expected I/N with 0 <= I < N, e.g. 0/4, or auto/N to read I from JOB_COMPLETION_INDEX)`)
  const count = Number(m[2])
  if (!(count >= 1 && count <= MAX_SHARDS)) throw new UsageError(`invalid --shard "${text}" (N must be from 1 to ${MAX_SHARDS})`)
  const raw = m[1] === 'auto' ? env.JOB_COMPLETION_INDEX : m[1]
  if (raw === undefined)
    throw new UsageError(`--shard ${text}: JOB_COMPLETION_INDEX is not set (run it in a Kubernetes Indexed Job, or give the index: --shard I/${count})`)
  if (!/^\d+$/.test(raw)) throw new UsageError(`--shard ${text}: JOB_COMPLETION_INDEX "${raw}" is not a whole number`)
  const index = Number(raw)
  if (index >= count) throw new UsageError(`invalid --shard ${index}/${count} (the index is 0-based: 0 to ${count - 1})`)
  return { index, count }
}

/** The share, refused when a shard would get nothing to do. */
export function checkedShare(total: number, s: Shard, flag: string): number {
  const share = shareOf(total, s)
  if (share === 0) throw new UsageError(`${flag} ${total} split over ${s.count} shards leaves shard ${s.index} nothing to do (give at least ${s.count})`)
  return share
}
