/**
 * hedgebench as a library: what a program would call, and nothing else (the
 * engine's parts, protocols and helpers stay inside; test/public-api.test.ts
 * lists this surface exactly). The CLI in src/cli is a thin layer over these.
 */

// Running a measurement
export { run } from './run/run.js'
export { watch, Watch, type WatchOptions } from './run/watch.js'
export type { RunOptions, HedgeRunOptions, GrpcRunOptions, RequestRecord, RequestSink, Progress } from './run/run-options.js'
export type { ServiceConfig } from './protocol/grpc-service-config.js'
export { runDemo, type DemoOptions, type DemoResult } from './cli/demo.js'

// The result shape every renderer reads
export type * from './results/run-result.js'
export { RESULT_SCHEMA } from './results/run-result.js'
export type {
  FinishedWatch,
  WatchResult,
  WatchSecond,
  WatchSegment,
  SegmentLane,
  WatchMark,
  MarkSource,
  WatchChange,
  ChangePoint,
  ChangeMetric,
  LaneSecond,
  LaneCounts,
  WatchLane,
} from './results/watch-result.js'

// The hedging policy, usable in production code: an undici interceptor
export { createHedgeInterceptor, hedged } from './engine/hedge-interceptor.js'
export { grpcCodeName } from './protocol/grpc-status.js'
export { isIdempotentMethod, MAX_ATTEMPTS_CAP, DEFAULT_HEDGE_HEADER, type HedgePolicy } from './hedging/policy.js'
export type { HedgeObserver, AttemptOutcome, HedgeOutcome } from './hedging/observer.js'
export { HedgeCancelledError, DeadlineExceededError } from './hedging/errors.js'
export { fixedDelay, RollingPercentileDelay, type DelaySource } from './hedging/delay-source.js'

// Choosing a setting: the sweep, its frontier and recommendation, its outputs, the configs to deploy
export { sweep, type SweepOptions } from './run/sweep.js'
export type { SweepResult, SweepSetting, SweepConnections, LaneServerCount } from './results/sweep-result.js'
export {
  sweepFrontier,
  DEFAULT_MAX_EXTRA_PCT,
  type SweepFrontier,
  type FrontierRow,
  type LaneFigures,
  type Figure,
  type Recommendation,
} from './report/sweep-frontier.js'
export { renderSweepText } from './report/sweep-text.js'
export { renderSweepCsv } from './report/sweep-csv.js'
export { renderSweepHtml } from './report/sweep-html.js'
export { renderSweepJson, saveSweep, type SavedSweep } from './report/sweep-store.js'
export { deploySetting, deployFiles, type DeploySetting, type DeployFile } from './report/deploy-config.js'

// Renderers: pure functions over RunResult
export { renderText } from './report/text.js'
export { renderJson, parseResult } from './results/result-json.js'
export { renderCsvSummary } from './report/csv.js'
export { renderHtml } from './report/html.js'
export { renderDemo } from './report/demo-text.js'

// Saved runs and comparison
export { saveResult, loadResult } from './report/results-store.js'
export { compareRuns, compareWithin, type Comparison } from './report/compare.js'
export { parseFailIf, checkFailIf } from './report/fail-if.js'
export { renderCompareText } from './report/compare-text.js'
export { renderCompareCsv } from './report/compare-csv.js'
export { renderCompareJson } from './report/compare-json.js'
export { compareSegments, watchGates, type SegmentComparison, type WatchGates } from './report/watch-compare.js'
export { renderWatchText } from './report/watch-text.js'
export { renderWatchCsv } from './report/watch-csv.js'
export { renderWatchHtml } from './report/watch-html.js'

// Sharded runs: the split, the agreed start, the exact merge, framed results for logs
export { parseShard } from './run/shard.js'
export { shareOf, type Shard } from './results/shard-share.js'
export { parseStartAt } from './run/start-at.js'
export { mergeResults, type MergeInput, type MergeOptions } from './stats/result-merge.js'
export { encodeFrames } from './results/result-frames.js'

// The built-in simulated target
export { startTarget, spawnTarget, fetchServerStats, resetServerStats, type Target, type TargetOptions } from './sim/target.js'
export { loadProfile, listProfiles, parseProfile, type Profile } from './sim/profile.js'
export { fetchGrpcServerStats, resetGrpcServerStats } from './sim/grpc-stats-client.js'
export type { GrpcServerStats } from './sim/grpc-replica.js'

// Parsing helpers and errors
export { parseDuration, formatMs } from './core/duration.js'
export { redactHeaders, redactUrl } from './core/redact.js'
export { UsageError, TargetUnreachableError } from './core/errors.js'
