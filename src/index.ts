/**
 * hedgebench as a library: what a program would call. The CLI in src/cli is
 * a thin layer over exactly these.
 */

// Running a measurement
export { run } from './run.js'
export type { RunOptions, HedgeRunOptions, RequestRecord, RequestSink, Progress } from './run-options.js'
export { runDemo, type DemoOptions, type DemoResult } from './demo.js'

// The result shape every renderer reads
export * from './types.js'

// The hedging policy, usable in production code: an undici interceptor
export { createHedgeInterceptor, hedged } from './hedge-interceptor.js'
export { normalizePolicy, isIdempotentMethod, MAX_ATTEMPTS_CAP, DEFAULT_HEDGE_HEADER, type HedgePolicy, type ResolvedPolicy } from './hedge-policy.js'
export type { HedgeObserver, AttemptOutcome, HedgeOutcome } from './hedge-observer.js'
export { HedgeCancelledError, DeadlineExceededError } from './hedge-errors.js'
export { TokenBucket } from './token-bucket.js'
export { fixedDelay, RollingPercentileDelay, type DelaySource } from './hedge-delay.js'
export { pickHedgeTarget, RoundRobin } from './replica-picker.js'

// Renderers: pure functions over RunResult
export { renderText } from './render/text.js'
export { renderJson, parseResult } from './render/json.js'
export { renderCsvSummary } from './render/csv.js'
export { renderHtml } from './render/html.js'
export { renderDemo } from './render/demo-text.js'

// Saved runs and comparison
export { saveResult, loadResult, writeFileAtomic } from './results-store.js'
export { createRequestLog, type RequestLog } from './request-log.js'
export { compareRuns, compareWithin, type Comparison } from './compare.js'
export { parseFailIf, checkFailIf } from './fail-if.js'
export { renderCompareText } from './render/compare-text.js'
export { renderCompareCsv } from './render/compare-csv.js'
export { renderCompareJson } from './render/compare-json.js'

// The built-in simulated target
export { startTarget, spawnTarget, fetchServerStats, resetServerStats, type Target, type TargetOptions } from './sim/target.js'
export { loadProfile, listProfiles, parseProfile, type Profile } from './sim/profile.js'

// Parsing helpers and errors
export { parseDuration, formatMs } from './duration.js'
export { parseHeader } from './header-parse.js'
export { redactHeaders, redactUrl } from './redact.js'
export { UsageError, TargetUnreachableError } from './errors.js'
