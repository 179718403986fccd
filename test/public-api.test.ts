/**
 * The package's public surface (src/index.ts, what `import … from
 * 'hedgebench'` gives): exactly the names the library documentation
 * describes. A new export is a decision, made here and in the docs, not a
 * side effect of `export *`.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import * as api from '../src/index.js'

const PUBLIC = [
  // Running a measurement, and the demo
  'run',
  'runDemo',
  // A live watch of a flag flip, its segments judged and rendered
  'watch',
  'Watch',
  'compareSegments',
  'watchGates',
  'renderWatchText',
  'renderWatchCsv',
  'renderWatchHtml',
  // The result: its schema id (the types are exported as types)
  'RESULT_SCHEMA',
  // The hedging policy in production code
  'createHedgeInterceptor',
  'hedged',
  'fixedDelay',
  'RollingPercentileDelay',
  'isIdempotentMethod',
  'MAX_ATTEMPTS_CAP',
  'DEFAULT_HEDGE_HEADER',
  'HedgeCancelledError',
  'DeadlineExceededError',
  'grpcCodeName',
  // Choosing a setting: the sweep, its frontier, its outputs, the configs to deploy
  'sweep',
  'sweepFrontier',
  'DEFAULT_MAX_EXTRA_PCT',
  'renderSweepText',
  'renderSweepJson',
  'renderSweepCsv',
  'renderSweepHtml',
  'saveSweep',
  'deploySetting',
  'deployFiles',
  // Renderers and saved runs
  'renderText',
  'renderJson',
  'parseResult',
  'renderCsvSummary',
  'renderHtml',
  'renderDemo',
  'saveResult',
  'loadResult',
  // Comparing runs and gating on them
  'compareRuns',
  'compareWithin',
  'parseFailIf',
  'checkFailIf',
  'renderCompareText',
  'renderCompareCsv',
  'renderCompareJson',
  // Sharded runs
  'parseShard',
  'shareOf',
  'parseStartAt',
  'mergeResults',
  'encodeFrames',
  // The built-in simulated target
  'startTarget',
  'spawnTarget',
  'fetchServerStats',
  'resetServerStats',
  'loadProfile',
  'listProfiles',
  'parseProfile',
  'fetchGrpcServerStats',
  'resetGrpcServerStats',
  // Parsing helpers and errors
  'parseDuration',
  'formatMs',
  'redactHeaders',
  'redactUrl',
  'UsageError',
  'TargetUnreachableError',
]

test('the package exports exactly its documented surface', () => {
  assert.deepEqual(Object.keys(api).sort(), [...PUBLIC].sort())
})

test('every public function is one (no undefined re-export)', () => {
  for (const name of PUBLIC) assert.notEqual((api as Record<string, unknown>)[name], undefined, name)
})
