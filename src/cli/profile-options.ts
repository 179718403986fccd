/**
 * A profile's run defaults (sim/profile.ts) as the library's options: here,
 * above both, so the simulated target never depends on the client.
 */
import type { Profile } from '../sim/profile.js'
import type { HedgeRunOptions, RunOptions } from '../run/run-options.js'

/** The profile's run defaults as library options (the caller's own options win). */
export function profileRunOptions(profile: Profile): Partial<RunOptions> {
  const r = profile.run ?? {}
  const out: Partial<RunOptions> = { profile: profile.name }
  if (profile.seed !== undefined) out.seed = profile.seed
  const plain = ['concurrency', 'requests', 'durationMs', 'rate', 'warmup', 'fanout', 'slowMs', 'timeoutMs', 'mode'] as const
  for (const k of plain) if (r[k] !== undefined) (out as Record<string, unknown>)[k] = r[k]
  const hedge: HedgeRunOptions = {}
  if (r.hedgeDelay !== undefined) hedge.delay = r.hedgeDelay
  if (r.maxAttempts !== undefined) hedge.maxAttempts = r.maxAttempts
  if (r.budgetPct !== undefined) hedge.budgetPct = r.budgetPct
  if (Object.keys(hedge).length > 0) out.hedge = hedge
  return out
}
