/**
 * A mix's cross-check per target (--targets with --server-stats): each
 * target's attempts in a window beside the server's count of its path, on a
 * target that counts per path (`totals.paths`, wire/stats.ts; the simulated
 * replicas do). A path is the target's joined onto each replica URL; targets
 * that send one path (GET /a and POST /a) are one count at the server, so
 * each is shown against their attempts together.
 */
import type { PhaseName, TargetServerCount } from '../results/run-result.js'
import type { ServerSnapshot } from './server-check.js'
import { joinPath, type ResolvedTarget } from './target-spec.js'

/** Each target's count for the window between `before` and `now`; null when the target does not count per path. */
export function targetServerCounts(
  targets: readonly ResolvedTarget[],
  urls: readonly string[],
  before: ServerSnapshot,
  now: ServerSnapshot,
  attempts: readonly number[],
  phases: PhaseName[],
): TargetServerCount[] | null {
  const counted = now.totals.paths
  if (typeof counted !== 'object' || counted === null) return null
  const was = before.totals.paths ?? {}
  const keys = targets.map((t) => [...new Set(urls.map((url) => joinPath(new URL(url), t.path)))].sort().join(' '))
  return targets.map((_, i) => {
    const received = keys[i]!.split(' ').reduce((sum, path) => sum + (counted[path] ?? 0) - (was[path] ?? 0), 0)
    const clientAttempts = attempts.reduce((sum, n, j) => (keys[j] === keys[i] ? sum + n : sum), 0)
    return { phases, received, clientAttempts, match: received === clientAttempts }
  })
}
