#!/usr/bin/env node
/**
 * `npm run mutate [group ...]`: StrykerJS over each group of scripts/mutation-groups.mjs (all when none is
 * named), one after another; the score of each is printed by Stryker and kept in reports/mutation/.
 */
import { spawnSync } from 'node:child_process'
import { MUTATION_GROUPS } from './mutation-groups.mjs'

const asked = process.argv.slice(2)
const groups = asked.length > 0 ? asked : Object.keys(MUTATION_GROUPS)
for (const g of groups) {
  if (!MUTATION_GROUPS[g]) {
    console.error(`mutate: unknown group ${g}: one of ${Object.keys(MUTATION_GROUPS).join(', ')}`)
    process.exit(2)
  }
}
let failed = 0
for (const g of groups) {
  const r = spawnSync('npx', ['stryker', 'run', 'stryker.config.mjs'], { stdio: 'inherit', env: { ...process.env, MUTATE_GROUP: g } })
  if (r.status !== 0) failed = r.status ?? 1
}
process.exitCode = failed
