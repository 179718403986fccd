/**
 * What `npm run mutate` mutates, by group, and the tests that must catch each group's mutants: the fast,
 * deterministic tests of those files (a mutant run is the group's tests once, so end-to-end files with
 * servers and seconds of traffic would make a group take hours).
 */
export const MUTATION_GROUPS = {
  policy: {
    mutate: [
      'src/hedging/token-bucket.ts',
      'src/hedging/replica-health.ts',
      'src/hedging/replica-picker.ts',
      'src/hedging/delay-source.ts',
      'src/hedging/saturation-gate.ts',
    ],
    tests: ['hedging-policy-units', 'saturation-gate'],
  },
  stats: {
    mutate: ['src/stats/noise.ts', 'src/stats/phase-algebra.ts', 'src/stats/result-merge.ts', 'src/stats/timeline.ts'],
    tests: ['phase-merge', 'result-merge', 'compare-noise', 'compare-small-n'],
  },
  verdict: {
    mutate: ['src/report/verdict.ts', 'src/report/fail-if.ts', 'src/report/run-fail-if.ts', 'src/results/extra-load.ts'],
    tests: ['verdict', 'fail-if', 'run-fail-if', 'extra-load', 'render-text', 'render-csv'],
  },
}
