// Mutation testing (`npm run mutate [group]`, scripts/mutate.mjs): which tests would not notice a
// broken behaviour. Not in CI: slow. One group at a time, each the files it mutates and the test files
// that may catch them. Stryker's tap runner runs each built test file as its own `node` process (node:test
// prints TAP when piped) and records which files reach which mutant (coverage per file), so a mutant runs
// only the files that execute it, stopping at the first that fails; with the command runner every mutant
// ran every file of its group, and the stats and verdict groups took hours on 2 cores.
import { MUTATION_GROUPS } from './scripts/mutation-groups.mjs'

const name = process.env.MUTATE_GROUP ?? 'policy'
const group = MUTATION_GROUPS[name]
if (!group) throw new Error(`unknown MUTATE_GROUP ${name}: one of ${Object.keys(MUTATION_GROUPS).join(', ')}`)

export default {
  testRunner: 'tap',
  tap: { testFiles: group.tests.map((t) => `dist/test/${t}.test.js`), forceBail: true },
  // The build runs once in Stryker's sandbox, before the dry run; a mutant is switched on at run time.
  buildCommand: 'node scripts/build.mjs',
  mutate: group.mutate,
  coverageAnalysis: 'perTest',
  concurrency: 2,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  // Anchored: a bare 'results' would also leave src/results/ out of the sandbox.
  ignorePatterns: ['/dist', '/results', '/reports', '/.stryker-tmp'],
  cleanTempDir: 'always',
  // TypeScript 7 has no JavaScript API for Stryker's tsconfig rewrite (only needed for project references): point it at none.
  tsconfigFile: 'no-tsconfig-rewrite.json',
}
