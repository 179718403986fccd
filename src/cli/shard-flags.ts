/**
 * The run command's flags for a sharded run (--shard, --start-at,
 * --max-start-lateness, --run-id, --frames) and --config, which reads any
 * flags from a JSON file (how deploy/kubernetes hands a pod its ConfigMap).
 */
import type { Argv } from 'yargs'
import { parseDuration } from '../core/duration.js'
import type { RunOptions } from '../run/run-options.js'
import { parseShard } from '../run/shard.js'
import { parseStartAt } from '../run/start-at.js'
import { checkRunId } from '../run/run-identity.js'

export interface ShardFlags {
  shard?: string
  startAt?: string
  maxStartLateness?: string
  runId?: string
  frames?: boolean
}

export function shardFlags(y: Argv): Argv {
  return y
    .option('shard', {
      type: 'string',
      describe: 'run shard I of N (0-based): -n and -q are split exactly; auto/N reads I from JOB_COMPLETION_INDEX',
      group: 'Sharding:',
    })
    .option('start-at', { type: 'string', describe: 'wait until this wall-clock time before the first phase (RFC 3339, or +30s)', group: 'Sharding:' })
    .option('max-start-lateness', {
      type: 'string',
      describe: 'mark the shard late if it starts later than this after --start-at [default: 1% of -z, else 100ms]',
      group: 'Sharding:',
    })
    .option('run-id', { type: 'string', describe: 'name shared by the shards of one run [default: from --start-at and the config]', group: 'Sharding:' })
    .option('frames', {
      type: 'boolean',
      describe: 'also print the result as framed lines, for kubectl logs | hedgebench merge --from-logs -',
      group: 'Sharding:',
    })
    .config('config', 'read flags from a JSON file ({"shard": "auto/4", "urls": [...], ...})')
}

export function shardOptions(f: ShardFlags, now: number = Date.now()): Partial<RunOptions> {
  const o: Partial<RunOptions> = {}
  if (f.shard !== undefined) o.shard = parseShard(String(f.shard))
  if (f.startAt !== undefined) o.startAt = parseStartAt(String(f.startAt), now)
  if (f.maxStartLateness !== undefined) o.maxStartLatenessMs = parseDuration(f.maxStartLateness, '--max-start-lateness')
  if (f.runId !== undefined) o.runId = checkRunId(String(f.runId))
  return o
}
