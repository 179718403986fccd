// Mutation testing (`npm run mutate [group]`, scripts/mutate.mjs): which tests would not notice a
// broken behaviour. Not in CI: slow. One group at a time, each the files it mutates and the test files
// that must catch them, run by Stryker's command runner (each mutant: those tests, on a build made once
// in Stryker's sandbox; a mutant is switched on by __STRYKER_ACTIVE_MUTANT__ at run time).
import { MUTATION_GROUPS } from './scripts/mutation-groups.mjs'

const group = MUTATION_GROUPS[process.env.MUTATE_GROUP ?? 'policy']
if (!group) throw new Error(`unknown MUTATE_GROUP ${process.env.MUTATE_GROUP}: one of ${Object.keys(MUTATION_GROUPS).join(', ')}`)

export default {
  testRunner: 'command',
  // The build runs once, before the dry run: built inside each test command, two runners could start at once
  // and one could read dist/ while the other's clean compile had removed it (ERR_MODULE_NOT_FOUND).
  buildCommand: 'node scripts/build.mjs',
  commandRunner: { command: `node scripts/test-inline.mjs ${group.tests.map((t) => `dist/test/${t}.test.js`).join(' ')}` },
  mutate: group.mutate,
  coverageAnalysis: 'off',
  concurrency: 2,
  timeoutMS: 30_000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${process.env.MUTATE_GROUP ?? 'policy'}.json` },
  // Anchored: a bare 'results' would also leave src/results/ out of the sandbox.
  ignorePatterns: ['/dist', '/results', '/reports', '/.stryker-tmp'],
  cleanTempDir: 'always',
  // TypeScript 7 has no JavaScript API for Stryker's tsconfig rewrite (only needed for project references): point it at none.
  tsconfigFile: 'no-tsconfig-rewrite.json',
}
