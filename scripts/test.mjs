#!/usr/bin/env node
/**
 * The test tiers, after the build (package.json):
 *
 *   npm test            node scripts/test.mjs        every file but E2E
 *   npm run test:e2e    node scripts/test.mjs e2e    the E2E files only
 *   npm run test:all    node scripts/test.mjs all    both (what .ci/run runs)
 *
 * E2E files are the long end-to-end runs (sweeps, worker threads, Chromium,
 * the demo, shards, the stall statistics, the Kubernetes sequence run as
 * documented, the docs' snippets type-checked and run): about a quarter of the suite's
 * CPU time, most of its waiting on stalls and browsers, and the files that
 * must run alone. A file in no list is in `npm test`.
 *
 * Within a tier, two steps:
 * 1. Everything except ALONE and LIGHT, the files that take longest started
 *    first (FIRST), so that the step does not end on one long file with a
 *    core idle. Three files at a time in the fast tier (Node's default on 2
 *    cores is one): most of them wait on sockets, timers and child processes
 *    more than they compute, so a third keeps both cores busy
 *    (docs/development.md has the times). Two at a time once E2E files are
 *    in the step: their sweeps, browsers and worker threads each keep a
 *    core busy for seconds.
 * 2. The ALONE files one after another, and beside them the LIGHT files one
 *    after another (their output is printed once the step ends).
 *
 * Why ALONE: their statistical bounds allow for freezes of the test process
 * itself (test/helpers/freeze-watch.ts), but not for the target's own
 * process being starved of CPU by another test file with its own servers,
 * which two such files at a time on 2 cores can do for 100 ms and more
 * (seen: two grpc-js calls over --slow with no client freeze). A LIGHT file
 * is a unit test: no server, no child process, about one core at most for
 * a second or two, as the CPU hog the suite is checked beside (README,
 * Development), so it can keep the second core busy while an ALONE file runs.
 */
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'test')

const ALONE = ['hedging-stalls', 'grpc-js-hedging', 'h2c', 'grpc-hedging']

const E2E = new Set([
  ...ALONE,
  'sweep',
  'workers',
  'html-e2e',
  'html-chromium',
  'pictures-chromium',
  'demo',
  'demo-terminal',
  'shards-e2e',
  'hedging-telemetry',
  'verdict-sim',
  'deploy-kubernetes',
  'docs-snippets',
  'sweep-width',
  'docs-commands',
  'targets',
  'targets-grpc',
  'watch',
  'watch-metrics',
  'watch-memory',
])

/** Longest first (their time on a 2-core machine, idle, 2026-12-02; E2E files by the same rule). */
const FIRST = [
  'hostile-results',
  'sweep',
  'watch',
  'watch-metrics',
  'watch-memory',
  'hedging-telemetry',
  'docs-snippets',
  'docs-commands',
  'deploy-kubernetes',
  'workers',
  'html-e2e',
  'html-chromium',
  'verdict-sim',
  'demo',
  'shards-e2e',
  'hedging-options',
  'h2-hostile',
  'grpc-message-limits',
  'replica-ejection',
  'hedging-saturation',
  'cross-check',
  'cli-stdout-and-paths',
  'cli-help',
  'progress-tty',
  'run-fail-if',
  'sweep-deploy',
  'launcher',
  'compare-small-n',
  'spinner',
  'result-edited',
  'interrupt',
  'misbehaving-target',
  'details',
  'accuracy',
  'warmup-duration',
  'verdict',
]

const LIGHT = [
  'targets-file',
  'architecture',
  'attempt-lifecycle',
  'byte-size',
  'change-points',
  'compare-noise',
  'compare-render',
  'compare',
  'demo-text',
  'docs-flags',
  'engine-histogram',
  'event-clock',
  'figures-accumulator',
  'fail-if',
  'fuzz-parsers',
  'grpc-client-text',
  'grpc-schema',
  'h2-limits',
  'hedged-request',
  'hedging-policy-units',
  'hpack',
  'html',
  'output-color',
  'phase-algebra',
  'phase-merge',
  'progress-line',
  'redact',
  'render-csv',
  'render-demo-http2',
  'render-json',
  'render-text',
  'request-log',
  'result-frames',
  'result-merge',
  'run-options-check',
  'run-plan',
  'run-warnings',
  'saturation-gate',
  'settle-heap',
  'sim-model',
  'stream-table',
  'timeline',
  'watch-view',
]

const TIERS = {
  fast: (name) => !E2E.has(name),
  e2e: (name) => E2E.has(name),
  all: () => true,
}
const tier = process.argv[2] ?? 'fast'
if (!(tier in TIERS)) {
  process.stderr.write(`scripts/test.mjs: unknown tier "${tier}" (fast, e2e or all)\n`)
  process.exit(2)
}

const files = readdirSync(dir)
  .filter((f) => f.endsWith('.test.js'))
  .sort()
  .map((f) => f.slice(0, -'.test.js'.length))
  .filter(TIERS[tier])
const present = (names) => names.filter((n) => files.includes(n))
const listed = new Set([...ALONE, ...FIRST, ...LIGHT])
const paired = [...present(FIRST), ...files.filter((f) => !listed.has(f))]
const path = (name) => join(dir, `${name}.test.js`)

/**
 * Time limits, so that a test that hangs fails, named, instead of hanging the run: each test at most TEST_LIMIT_MS
 * (test/helpers/test-watchdog.ts; above the longest `{ timeout }` a test sets itself, 120 s), each file at most
 * FILE_LIMIT_MS (Node's --test-timeout, which in Node 20 bounds a file, not a test). E2E tests run sweeps and browsers.
 */
const TEST_LIMIT_MS = tier === 'fast' ? 150_000 : 300_000
const FILE_LIMIT_MS = 900_000
const WATCHDOG = join(dir, 'helpers', 'test-watchdog.js')

/** Runs `node --test` on the files; resolves with its exit code (and, when piped, what it printed). */
function nodeTest(concurrency, names, stdio) {
  if (names.length === 0) return Promise.resolve({ code: 0, output: '' })
  const args = [
    '--import',
    WATCHDOG,
    '--test',
    `--test-concurrency=${concurrency}`,
    `--test-timeout=${FILE_LIMIT_MS}`,
    '--test-force-exit',
    '--test-reporter=spec',
  ]
  const child = spawn(process.execPath, [...args, ...names.map(path)], { stdio, env: { ...process.env, HEDGEBENCH_TEST_LIMIT_MS: String(TEST_LIMIT_MS) } })
  let output = ''
  child.stdout?.setEncoding('utf8').on('data', (s) => (output += s))
  child.stderr?.setEncoding('utf8').on('data', (s) => (output += s))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? 1, output })))
}

const alone = present(ALONE)
// Without an ALONE file in the tier, the LIGHT files run in step 1 like any other.
const light = alone.length > 0 ? present(LIGHT) : []
const first = await nodeTest(tier === 'fast' ? 3 : 2, [...paired, ...(alone.length > 0 ? [] : present(LIGHT))], 'inherit')
const [second, beside] = await Promise.all([nodeTest(1, alone, 'inherit'), nodeTest(1, light, ['ignore', 'pipe', 'pipe'])])
process.stdout.write(beside.output)
process.exitCode = [first, second, beside].find((r) => r.code !== 0)?.code ?? 0
