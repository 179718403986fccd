/**
 * Whether saved results belong to one run: the same configuration, with
 * what each generator may legitimately choose for itself (its seed) left out.
 */
import { configEntries } from './config-entries.js'
import type { RunConfig } from './run-result.js'

export function comparableConfig(config: RunConfig): Omit<RunConfig, 'seed'> {
  const { seed: _seed, ...rest } = config
  return rest
}

/** The first setting in which two configs differ, as "requests (4000 vs 2000)", or null when they agree. */
export function configDifference(a: RunConfig, b: RunConfig): string | null {
  const left = configEntries(comparableConfig(a) as RunConfig)
  const right = configEntries(comparableConfig(b) as RunConfig)
  for (const key of new Set([...left.keys(), ...right.keys()])) {
    if (left.get(key) !== right.get(key)) return `${key} (${left.get(key) ?? 'absent'} vs ${right.get(key) ?? 'absent'})`
  }
  return null
}
