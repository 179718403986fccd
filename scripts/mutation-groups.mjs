/**
 * What `npm run mutate` mutates, by group, and the test files that may catch each group's mutants, fastest
 * first: a mutant runs only the files that execute it (stryker.config.mjs), in this order, until one fails.
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
    tests: [
      'timeline',
      'phase-algebra',
      'compare-noise',
      'compare',
      'compare-render',
      'render-json',
      'phase-merge',
      'render-text',
      'clock-offset',
      'result-algebra',
      'result-merge',
      'compare-small-n',
    ],
  },
  // The hot path's clock and counts (issue 43's CPU per request): one clock read per callback, the wall clock only
  // when the Date estimator may want a sample, the status counts.
  clock: {
    mutate: ['src/core/event-clock.ts', 'src/stats/clock-offset.ts', 'src/stats/figures.ts'],
    tests: ['event-clock', 'figures-accumulator', 'clock-offset', 'render-json', 'render-text', 'phase-merge'],
  },
  verdict: {
    mutate: ['src/report/verdict.ts', 'src/report/fail-if.ts', 'src/report/run-fail-if.ts', 'src/results/extra-load.ts'],
    tests: ['fail-if', 'render-csv', 'extra-load', 'render-text', 'verdict', 'run-fail-if'],
  },
  engine: {
    mutate: ['src/engine/hedged-request.ts', 'src/engine/attempt.ts'],
    tests: [
      'attempt-lifecycle',
      'hedged-request',
      'hedge-interceptor',
      'engine-counting',
      'delay-from-answers',
      'h2-cancel',
      'engine-reports',
      'engine-connections',
      'engine-window-runner',
      'open-loop',
      'attempt-timeout',
      'misbehaving-target',
      'hedging-options',
    ],
  },
  // The frame-by-frame tests alone, in process, each file a second or two: the end-to-end h2 files (node:http2
  // servers, the CLI) made a survivor cost half a minute, and a run hours.
  h2: {
    mutate: ['src/engine/h2-client.ts', 'src/engine/h2-frames.ts', 'src/engine/hpack.ts', 'src/engine/h2-limits.ts'],
    tests: [
      'h2-limits',
      'hpack',
      'h2-peer-rules',
      'h2-peer-connection',
      'h2-peer-frames',
      'h2-peer-limits',
      'h2-peer-streams',
      'h2-peer-flow',
      'h2-header-cache',
      'h2-alpn',
    ],
  },
}
