/**
 * `hedgebench [URL...]`: flags -> RunOptions -> run() -> renderers. The
 * process concerns live here: the built-in target for --profile, the
 * progress bar, SIGINT/SIGTERM, stdout, saved files, exit codes.
 */
import type { Argv, CommandModule } from 'yargs'
import { rm } from 'node:fs/promises'
import { dirname } from 'node:path'
import { INCONCLUSIVE_EXIT_CODE, TargetUnreachableError, UsageError } from '../core/errors.js'
import { DEFAULT_EJECTION } from '../hedging/replica-health.js'
import { DEFAULT_SATURATION } from '../hedging/saturation-gate.js'
import { DEFAULT_BUDGET_BURST, DEFAULT_HEDGE_HEADER, MAX_ATTEMPTS_CAP } from '../hedging/policy.js'
import { DEFAULT_H2_LIMITS, octets } from '../engine/h2-limits.js'
import { DEFAULTS, resolveOptions } from '../run/resolve-options.js'
import { h2LimitWarnings } from '../run/h2-limit-warnings.js'
import type { RequestLog } from '../results/request-log.js'
import type { RunOptions } from '../run/run-options.js'
import { loadProfile, type Profile } from '../sim/profile.js'
import { profileRunOptions } from './profile-options.js'
import type { Target } from '../sim/target.js'
import { SIM_PROTO, SIM_WORK_CALL } from '../sim/grpc-sim-service.js'
import { grpcFlags, quietGrpcJs } from './grpc-flags.js'
import { DEFAULT_GRPC_NON_FATAL } from '../protocol/grpc-status.js'
import { grpcCodeName } from '../core/status.js'
import { tlsFlags } from './tls-flags.js'
import type { Mode, RunResult } from '../results/run-result.js'
import type { FailCondition } from '../report/fail-if.js'
import { assertNoRepeats, flagsToOptions, integer, type RunFlags } from './run-flags.js'
import { OUTPUT_FORMATS, renderOutput, stdoutColor, stdoutTaken, writeHtmlReport, writeStderrLine, type OutputFormat } from './output.js'
import { ALLOW_UNJUDGED_OPTION } from './gate-exit.js'
import { shardFlags, shardOptions, type ShardFlags } from './shard-flags.js'
import { planOf } from './progress-line.js'
import { valuesRequired } from './argv.js'
import type { WaitSpinner } from './spinner.js'

interface CliFlags extends RunFlags, ShardFlags {
  o: OutputFormat
  outDir: string
  save: boolean
  csvRequests?: string
  html?: string
  profile?: string
  replicas?: string
  failOnErrors?: string
  failIf?: string | string[]
  allowUnjudged?: boolean
  metricsPort?: string
}

export function runCommand(setExitCode: (code: number) => void): CommandModule<object, CliFlags> {
  return {
    // `hedgebench run URL` is the same command, named.
    command: ['$0 [urls..]', 'run'],
    describe: 'run a warm-up, a plain and a hedged phase against replica URLs',
    builder: (y) => valuesRequired(shardFlags(runFlags(y as Argv))) as unknown as Argv<CliFlags>,
    handler: async (argv) => setExitCode(await runFromCli(argv)),
  }
}

/** Help shows the defaults resolveOptions fills in, read from DEFAULTS so the two cannot drift. */
const dflt = (value: string | number): string => `[default: ${value}]`
/** A default duration as it would be typed: 20000 -> "20s", 0 -> "0". */
const ms = (value: number): string => (value === 0 ? '0' : value % 1000 === 0 ? `${value / 1000}s` : `${value}ms`)

/** What every request carries and how it is sent (HTTP and gRPC alike): a run's and a sweep's. */
export function requestFlags(y: Argv): Argv {
  return y
    .option('m', {
      alias: 'method',
      type: 'string',
      describe: `HTTP method ${dflt(DEFAULTS.method)}; for a grpc:// target, metadata as JSON ('{"key":"value"}')`,
      group: 'Request:',
    })
    .option('H', {
      alias: 'header',
      type: 'string',
      describe: 'header "Name: value" (repeatable: one value per -H, before or after the URLs); for a grpc:// target, metadata',
      group: 'Request:',
    })
    .option('d', { alias: 'body', type: 'string', describe: 'request body; for a grpc:// target, the message as JSON', group: 'Request:' })
    .option('D', { alias: 'body-file', type: 'string', describe: 'request body from a file; for a grpc:// target, the message as JSON', group: 'Request:' })
    .option('targets', {
      type: 'string',
      describe:
        "a mix of requests from FILE: vegeta's HTTP format (METHOD path, headers, @body-file; '# weight: 3', '# hedge-delay: p90'; for grpc:// replicas CALL package.Service/Method, metadata, @message.json or a JSON line) or JSON lines ({method, path, headers, body|bodyFile, weight, hedgeDelay} or {call, data|dataFile, metadata, weight, hedgeDelay}); each drawn by its weight, each its own hedge delay and rows (docs/targets.md)",
      group: 'Request:',
    })
    .option('T', { alias: 'content-type', type: 'string', describe: 'Content-Type header (HTTP only: a gRPC call is application/grpc)', group: 'Request:' })
    .option('A', { alias: 'accept', type: 'string', describe: 'Accept header', group: 'Request:' })
    .option('http2', { type: 'boolean', describe: 'HTTP/2: h2c (prior knowledge) on http://, ALPN on https://', group: 'Request:' })
    .option('connections', {
      type: 'string',
      describe:
        "HTTP/2 and gRPC: connections per replica, the streams spread over them (ghz's --connections; at most -c; not for HTTP/1.1, where -c is the connection count) [default: one, and another only when its streams are all in use]",
      group: 'Request:',
    })
    .option('k', {
      alias: 'insecure',
      type: 'boolean',
      describe: 'accept any TLS certificate (self-signed, wrong host, expired), as curl -k',
      group: 'Request:',
    })
    .option('disable-keepalive', { type: 'boolean', describe: 'new connection for every request', group: 'Request:' })
    .option('h2-max-header-list', {
      type: 'string',
      describe: `HTTP/2: octets of one response header list, advertised as SETTINGS_MAX_HEADER_LIST_SIZE; a server over it has its connection closed (ENHANCE_YOUR_CALM) ${dflt(octets(DEFAULT_H2_LIMITS.maxHeaderList))}`,
      group: 'HTTP/2 limits:',
    })
    .option('h2-max-continuations', {
      type: 'string',
      describe: `HTTP/2: CONTINUATION frames after one HEADERS ${dflt(String(DEFAULT_H2_LIMITS.maxContinuations))}`,
      group: 'HTTP/2 limits:',
    })
    .option('h2-header-table', {
      type: 'string',
      describe: `HTTP/2: octets of the HPACK dynamic table the server may fill, advertised as SETTINGS_HEADER_TABLE_SIZE ${dflt(String(DEFAULT_H2_LIMITS.headerTable))}`,
      group: 'HTTP/2 limits:',
    })
    .option('h2-max-owed-frames', {
      type: 'string',
      describe: `HTTP/2: PING/SETTINGS ACKs and resets owed to a server that does not read them before its connection is closed as a flood ${dflt(String(DEFAULT_H2_LIMITS.maxOwedFrames))}`,
      group: 'HTTP/2 limits:',
    })
}

/** The target's stats URL, for the client/server cross-check, and the grace it judges a shortfall by. */
export function serverStatsFlag(y: Argv): Argv {
  return y
    .option('server-stats', { type: 'string', describe: 'stats URL of a compatible target, for the client/server cross-check', group: 'Target:' })
    .option('cross-check-grace', {
      type: 'string',
      describe: `attempts cancelled sooner than this after their send may never reach a server's handler: the cross-check counts the server's shortfall against them ${dflt(ms(DEFAULTS.crossCheckGraceMs))}`,
      group: 'Target:',
    })
}

/** What a schedule's flags say of it: --load-* schedule a rate, --concurrency-* the requests in flight. */
interface ScheduleWords {
  prefix: 'load' | 'concurrency'
  what: string
  loop: string
  /** The flag a const schedule is. */
  base: string
  stepDefault?: string
}

const LOAD_SCHEDULE: ScheduleWords = { prefix: 'load', what: 'requests/s', loop: 'open loop', base: '-q' }
const CONCURRENCY_SCHEDULE: ScheduleWords = { prefix: 'concurrency', what: 'requests in flight', loop: 'closed loop', base: '-c', stepDefault: '1' }

/** ghz's --load-schedule or --concurrency-schedule and the five flags that shape it (run/load-schedule-options.ts checks them together). */
function scheduleFlags(y: Argv, w: ScheduleWords): Argv {
  const p = `--${w.prefix}`
  const group = 'Load schedule:'
  return y
    .option(`${w.prefix}-schedule`, {
      type: 'string',
      choices: ['const', 'step', 'line'],
      describe: `ghz's: each measured phase's ${w.what} over time (${w.loop}): const is ${w.base}; step starts at ${p}-start and adds ${p}-step every ${p}-step-duration; line adds it every second; both until ${p}-end or ${p}-max-duration, then held`,
      group,
    })
    .option(`${w.prefix}-start`, { type: 'string', describe: `step, line: ${w.what} at the start of each measured phase (also the warm-up's)`, group })
    .option(`${w.prefix}-step`, {
      type: 'string',
      describe: `step, line: ${w.what} added at each step; negative steps down (${p}-step=-10)${w.stepDefault ? ` ${dflt(w.stepDefault)}` : ''}`,
      group,
    })
    .option(`${w.prefix}-end`, { type: 'string', describe: `step, line: the ${w.what} the steps stop at, then held`, group })
    .option(`${w.prefix}-step-duration`, { type: 'string', describe: 'step: how long each step lasts (e.g. 5s)', group })
    .option(`${w.prefix}-max-duration`, { type: 'string', describe: `step, line: no step after this long; the ${w.what} reached are held`, group })
}

function runFlags(y: Argv): Argv {
  const load = scheduleFlags(scheduleFlags(tlsFlags(grpcFlags(y)), LOAD_SCHEDULE), CONCURRENCY_SCHEDULE)
    .positional('urls', { describe: 'replica URLs (same service); requests rotate over them, hedges go to another', type: 'string', array: true })
    .option('n', {
      alias: 'requests',
      type: 'string',
      describe: `requests per measured phase (plain, hedged); ignored with -z ${dflt(DEFAULTS.requests)}`,
      group: 'Load:',
    })
    .option('c', { alias: 'concurrency', type: 'string', describe: `concurrency: requests in flight ${dflt(DEFAULTS.concurrency)}`, group: 'Load:' })
    .option('z', {
      alias: 'duration',
      type: 'string',
      describe:
        'duration of each measured phase, instead of -n (wins over -n, as in hey; e.g. 30s, 2m); the warm-up stops at -z too, so --mode both takes up to 3 × -z',
      group: 'Load:',
    })
    .option('q', { alias: 'rate', type: 'string', describe: "requests/s across all workers (hey's -q is per worker); makes the run open-loop", group: 'Load:' })
    .option('skip-first', {
      type: 'string',
      describe: "ghz's --skipFirst: each measured phase sends this many requests first, on top of -n, and counts none of them",
      group: 'Load:',
    })
    .option('t', {
      alias: 'timeout',
      type: 'string',
      describe: `per-attempt timeout; bare number = seconds, as in hey ${dflt(ms(DEFAULTS.timeoutMs))}`,
      group: 'Load:',
    })
    .option('warmup', {
      type: 'string',
      describe: `warm-up requests, excluded from the statistics; with -z it also stops at -z ${dflt(`min(n, ${DEFAULTS.warmupCap}) (${DEFAULTS.warmupCap} with -z), lasting at least ${ms(DEFAULTS.warmupMinMs)} when n >= ${DEFAULTS.warmupCap} or with -z; with --targets at least 144 a target for a p95 delay (docs/targets.md)`)}`,
      group: 'Load:',
    })
    .option('mode', {
      type: 'string',
      choices: ['plain', 'hedged', 'both'],
      describe: `phases to run: plain, hedged or both ${dflt(DEFAULTS.mode)}`,
      group: 'Load:',
    })
    .option('schedule', {
      type: 'string',
      choices: ['sequential', 'interleaved'],
      describe: `sequential (one phase after the other) or interleaved (mixed at random in one window) ${dflt(DEFAULTS.schedule)}`,
      group: 'Load:',
    })
    .option('fanout', {
      type: 'string',
      describe: `calls per logical request, which completes when all have answered ${dflt(DEFAULTS.fanout)}`,
      group: 'Load:',
    })
    .option('workers', { type: 'string', describe: `worker threads ${dflt(DEFAULTS.workers)}`, group: 'Load:' })
    .option('seed', { type: 'string', describe: "seed for the client's random choices", group: 'Load:' })
  const flags = requestFlags(load)
    .option('hedge-delay', {
      type: 'string',
      describe: `auto (= warm-up p95), pNN (a warm-up percentile) or a duration ${dflt(DEFAULTS.hedgeDelay)}`,
      group: 'Hedging:',
    })
    .option('adaptive', { type: 'boolean', describe: 'delay tracks a rolling percentile of recent original attempts', group: 'Hedging:' })
    .option('adaptive-window', {
      type: 'string',
      describe: `rolling window: a count (1000) or a time (10s) ${dflt(DEFAULTS.adaptiveWindowRequests)}`,
      group: 'Hedging:',
    })
    .option('delay-min', { type: 'string', describe: `lower clamp of the adaptive delay ${dflt(ms(DEFAULTS.delayMinMs))}`, group: 'Hedging:' })
    .option('delay-max', { type: 'string', describe: `upper clamp of the adaptive delay ${dflt(ms(DEFAULTS.delayMaxMs))}`, group: 'Hedging:' })
    .option('max-attempts', {
      type: 'string',
      describe: `attempts per request including the original; above ${MAX_ATTEMPTS_CAP} counts as ${MAX_ATTEMPTS_CAP} ${dflt(DEFAULTS.maxAttempts)}`,
      group: 'Hedging:',
    })
    .option('hedge-budget', {
      type: 'string',
      describe: `max extra load from hedges, % of requests, or "off" ${dflt(DEFAULTS.budgetPct)}. A token bucket: each request earns budget/100 of a hedge, each hedge spends one, and it starts with a burst of ${DEFAULT_BUDGET_BURST} hedges, so runs under ~${100 * DEFAULT_BUDGET_BURST} requests can pass the budget`,
      group: 'Hedging:',
    })
    .option('non-fatal-status', {
      type: 'string',
      describe: `statuses that trigger the next hedge at once; gRPC code names for a grpc:// target ${dflt(`${DEFAULTS.nonFatalStatus.join(',')}; gRPC: ${DEFAULT_GRPC_NON_FATAL.map(grpcCodeName).join(',')}`)}`,
      group: 'Hedging:',
    })
    .option('deadline', { type: 'string', describe: 'absolute per-request deadline every attempt inherits', group: 'Hedging:' })
    .option('min-hedge-window', {
      type: 'string',
      describe: 'no hedge when less than this is left before the deadline [default: measured p50]',
      group: 'Hedging:',
    })
    .option('parallel', { type: 'boolean', describe: 'send every attempt at once (delay 0)', group: 'Hedging:' })
    .option('tied', {
      type: 'boolean',
      describe: 'tied requests: both copies at once with one tie id; a tie-aware server drops the copy whose twin started first (the built-in replicas are)',
      group: 'Hedging:',
    })
    .option('cancel', {
      type: 'string',
      choices: ['abort', 'ignore'],
      describe: `abort losers (gRPC) or ignore them: let them finish, discard (Envoy) ${dflt(DEFAULTS.cancel)}`,
      group: 'Hedging:',
    })
    .option('hedge-header', {
      type: 'string',
      describe: `header carrying the hedge number; --no-hedge-header drops it ${dflt(DEFAULT_HEDGE_HEADER)}`,
      group: 'Hedging:',
    })
    .option('idempotency-key', {
      type: 'boolean',
      describe: 'one Idempotency-Key per logical request on every copy (allows hedging POST/PATCH)',
      group: 'Hedging:',
    })
    .option('unsafe-hedge', { type: 'boolean', describe: 'hedge non-idempotent methods without keys (warned in the report)', group: 'Hedging:' })
    .option('suppress', {
      type: 'boolean',
      describe:
        'hold hedges back while the replicas show saturation (overload answers, error rate, --hedge-max-inflight); --no-suppress hedges regardless [default: on]',
      group: 'Hedging:',
    })
    .option('suppress-at-error-rate', {
      type: 'string',
      describe: `no hedges while more than this % of the last 100 attempts failed, or "off" ${dflt(`${DEFAULT_SATURATION.maxErrorRate! * 100}%`)}`,
      group: 'Hedging:',
    })
    .option('hedge-max-inflight', {
      type: 'string',
      describe: 'no hedge to a replica that already has this many of our attempts in flight [default: no limit]',
      group: 'Hedging:',
    })
    .option('eject', {
      type: 'boolean',
      describe: `eject a replica after --eject-after failures in a row; --no-eject measures without [default: on with 2+ replicas]`,
      group: 'Replicas:',
    })
    .option('eject-after', {
      type: 'string',
      describe: `connection errors or 5xx in a row that eject a replica ${dflt(DEFAULT_EJECTION.consecutiveFailures)}`,
      group: 'Replicas:',
    })
    .option('eject-for', {
      type: 'string',
      describe: `first ejection's length, doubling each time ${dflt(ms(DEFAULT_EJECTION.baseEjectionMs))}`,
      group: 'Replicas:',
    })
    .option('o', {
      alias: 'output',
      type: 'string',
      choices: OUTPUT_FORMATS,
      default: 'text',
      describe: `stdout format: ${OUTPUT_FORMATS.join(', ')} ${dflt('text')}`,
      group: 'Output:',
    })
    .option('out-dir', { type: 'string', default: 'results', describe: `where runs are saved ${dflt('results')}`, group: 'Output:' })
    .option('save', {
      type: 'boolean',
      default: true,
      describe: 'save the run as JSON + CSV under --out-dir (the default; --no-save: nowhere)',
      group: 'Output:',
    })
    .option('label', { type: 'string', describe: 'name of the run (in the file name)', group: 'Output:' })
    .option('slow', { type: 'string', describe: `count requests slower than this; bare number = ms ${dflt(ms(DEFAULTS.slowMs))}`, group: 'Output:' })
    .option('csv-requests', { type: 'string', describe: 'write one CSV row per request to this file', group: 'Output:' })
    .option('html', { type: 'string', describe: 'write a self-contained HTML report with charts (- : to stdout, instead of -o)', group: 'Output:' })
    .option('redact', { type: 'string', describe: 'a header name whose values are never written (repeatable)', group: 'Output:' })
    .option('show-secret', {
      type: 'string',
      requiresArg: true,
      describe: 'a header or query parameter name that looks like a credential, written as it is anyway (repeatable)',
      group: 'Output:',
    })
    .option('fail-on-errors', { type: 'string', describe: "exit 1 when a phase's error rate is above this %", group: 'Output:' })
    .option('metrics-port', {
      type: 'string',
      describe: 'serve Prometheus metrics of the plain and hedged phases at /metrics while the run goes, on this port or HOST:PORT (docs/watch.md)',
      group: 'Output:',
    })
    // Not `array: true`: that would take the URLs after it as more conditions.
    .option('fail-if', {
      type: 'string',
      requiresArg: true,
      describe:
        'exit 1 when [PHASE.]METRIC OP VALUE holds (repeatable): "hedged.p99>50ms", "extra_load>8%", "p99>+10%" (hedged vs plain); metrics as compare\'s',
      group: 'Output:',
    })
    .option('allow-unjudged', { ...ALLOW_UNJUDGED_OPTION, group: 'Output:' })
    .option('profile', { type: 'string', describe: 'scenario from profiles/ (or a file); with no URL, starts the built-in target', group: 'Target:' })
    .option('replicas', { type: 'string', describe: "replicas of the built-in target [default: the profile's]", group: 'Target:' })
  return serverStatsFlag(flags)
    .example('$0 -c 40 -n 4000 http://a:8080/x', 'plain vs hedged, one URL')
    .example('$0 --profile pi', 'built-in simulated replicas')
}

async function runFromCli(argv: CliFlags): Promise<number> {
  assertNoRepeats(argv as unknown as Record<string, unknown>)
  const options = { ...(await flagsToOptions(argv)), ...shardOptions(argv) }
  // --replicas sizes the built-in target; beside URLs it would be silently ignored.
  if (!argv.profile && argv.replicas !== undefined)
    throw new UsageError('--replicas sizes the built-in target (--profile with no URL); with URLs, each URL is a replica')
  if (!argv.profile) return measure(argv, options)
  // --profile with no URL: the built-in target, in its own process, for this run.
  if (options.urls.length > 0) throw new UsageError('give either URLs or --profile (the built-in target), not both')
  const profile = loadProfile(argv.profile)
  const replicas = argv.replicas === undefined ? undefined : integer(argv.replicas, '--replicas')
  // Loaded when a command needs it, not for --help (issue 14: start-up time).
  const { spawnTarget } = await import('../sim/target.js')
  const grpc = argv.grpc === true
  const target = await spawnTarget({ profile: argv.profile, grpc, ...(replicas === undefined ? {} : { replicas }) })
  try {
    return await measure(argv, withBuiltInCall(withProfile(profile, options, target), grpc))
  } finally {
    await target.close()
  }
}

/** Profile defaults first, flags the user gave win. */
function withProfile(profile: Profile, options: RunOptions, target: Target): RunOptions {
  const defaults = profileRunOptions(profile)
  // -n or -z given: the phase size is the user's, not half the profile's and half theirs.
  if (options.requests !== undefined || options.durationMs !== undefined) {
    delete defaults.requests
    delete defaults.durationMs
  }
  return {
    ...defaults,
    ...options,
    hedge: { ...defaults.hedge, ...options.hedge },
    urls: target.urls,
    serverStatsUrl: options.serverStatsUrl ?? target.statsUrl,
    profile: target.profile,
    label: options.label ?? target.profile,
  }
}

/** Built-in gRPC replicas: their bundled service's Work call, unless the user named a call. */
function withBuiltInCall(options: RunOptions, grpc: boolean): RunOptions {
  if (!grpc || options.grpc?.call !== undefined) return options
  // A mix names its own calls (of the bundled service): the proto is all it needs.
  const call = options.targets === undefined ? { call: SIM_WORK_CALL } : {}
  return { ...options, grpc: { ...options.grpc, ...call, proto: SIM_PROTO, protoset: undefined } }
}

async function measure(argv: CliFlags, given: RunOptions): Promise<number> {
  if (given.grpc) await quietGrpcJs()
  // The schema first, when the server's reflection gives it: every check below needs it.
  const options = given.grpc ? await (await import('../run/grpc-reflection.js')).withReflectedSchema(given) : given
  // Every check that can fail comes before the first file is touched, so bad
  // input leaves nothing behind (no empty out-dir, no truncated request log).
  const resolved = resolveOptions(options, 0)
  if (argv.frames && argv.o !== 'text')
    throw new UsageError(
      `--frames adds lines to stdout, which -o ${argv.o} must keep to itself: use --frames with -o text (the default) and --out-dir for the ${argv.o}`,
    )
  const plan = planOf(resolved)
  const failLimit = parseFailOnErrors(argv.failOnErrors)
  const conditions = await failConditions(argv.failIf, resolved.mode)
  // Said before the run as well as in the report: the fix (ulimit -n) is the shell's, and must come before the next try.
  const { fdLimitWarning } = await import('../run/fd-limit.js')
  const fds = fdLimitWarning(resolved)
  if (fds !== null) writeStderrLine(`hedgebench: warning: ${fds}`)
  if (argv.metricsPort !== undefined && resolved.workers > 1)
    throw new UsageError('--metrics-port reads the lanes on this thread: it does not take --workers (hedgebench watch does neither)')
  const metrics = argv.metricsPort === undefined ? null : await startRunMetrics(argv.metricsPort)
  const created: string[] = []
  let log: RequestLog | null = null
  try {
    if (argv.html && !stdoutTaken(argv.html)) {
      const dir = await assertCanCreate(argv.html, '--html')
      if (dir) created.push(dir)
    }
    if (argv.save) {
      const { assertWritableDir } = await import('../report/results-store.js')
      const dir = await assertWritableDir(argv.outDir)
      if (dir) created.push(dir)
    }
    if (argv.csvRequests) {
      const { createRequestLog } = await import('../results/request-log.js')
      log = await createRequestLog(argv.csvRequests, { targets: resolved.targets !== null })
    }
  } catch (err) {
    await takeBack(created)
    await metrics?.close()
    throw err
  }
  const interrupt = onInterrupt(options.startAt)
  // The handlers stay until what was measured is written: a Ctrl-C while it is (a second one, or a first
  // one after the run ended) must not fall to Node's default and kill the process with nothing saved.
  try {
    const [{ run }, { startProgress }, { startWaitSpinner }] = await Promise.all([import('../run/run.js'), import('./progress.js'), import('./spinner.js')])
    const progress = startProgress(plan)
    const spinner = await startWaitSpinner()
    let result: RunResult
    try {
      result = await run({
        ...options,
        signal: interrupt.signal,
        stopNow: interrupt.stopNow,
        onProgress: progress.update,
        onWait: spinner.show,
        // Said as soon as it is known, clear of the spinner, which goes on with the check.
        onWarning: (warning) => {
          spinner.show(null)
          process.stderr.write(`hedgebench: warning: ${warning}\n`)
          spinner.show('check')
        },
        ...(log ? { requestSink: log } : {}),
        ...(metrics ? { onWindow: metrics.feed.onWindow } : {}),
      })
    } catch (err) {
      if (err instanceof UsageError || err instanceof TargetUnreachableError) {
        // Nothing was measured (the target refused before the run): take back what we created.
        await log?.discard()
        await takeBack(created)
      } else {
        await closeLog(log)
      }
      throw err
    } finally {
      spinner.show(null)
      progress.stop()
      metrics?.feed.stop()
    }
    if (interruptedBeforeStart(result, options)) {
      // An empty shard file would pollute `merge results/*`: save nothing, as if never started.
      await log?.discard()
      await takeBack(created)
      writeStderrLine('hedgebench: interrupted before the agreed start: nothing measured')
      return 130
    }
    // A log that could not be written (a full disk) costs the log, never the measurement: the result is still printed and saved.
    const logFailure = await closeLog(log)
    for (const line of h2LimitWarnings(Object.values(result.phases))) writeStderrLine(`hedgebench: ${line}`)
    await writeOutputs(argv, result, logFailure === null ? log : null, spinner)
    if (logFailure !== null) writeStderrLine(`hedgebench: ${logFailure}; the result above is complete`)
    if (interrupt.twice()) return 130
    const gates = await checkGates(conditions, failLimit, result, argv.allowUnjudged === true)
    return gates !== 0 ? gates : logFailure !== null ? 1 : 0
  } finally {
    interrupt.dispose()
    await metrics?.close()
  }
}

/** --metrics-port on a run or a sweep (metrics-server.ts; a sweep's settings named as its table names them): listening before anything is created, so that a port in use leaves nothing behind. */
export async function startRunMetrics(
  text: string,
  settings: readonly string[] = [],
): Promise<Awaited<ReturnType<typeof import('./metrics-server.js').startMetrics>> & { feed: ReturnType<typeof import('./metrics-server.js').runMetrics> }> {
  const { parseMetricsPort, runMetrics, startMetrics } = await import('./metrics-server.js')
  const metrics = await startMetrics(parseMetricsPort(text), text)
  process.stderr.write(`hedgebench: metrics at http://${metrics.host}:${metrics.port}/metrics\n`)
  return Object.assign(metrics, { feed: runMetrics(metrics, settings) })
}

/** --fail-if conditions, checked against the run's phases before it starts (loaded only when given: start-up time). */
async function failConditions(raw: string | string[] | undefined, mode: Mode): Promise<FailCondition[]> {
  const texts = ([] as string[]).concat(raw ?? [])
  if (texts.length === 0) return []
  const [{ parseFailIf }, { assertCheckable }] = await Promise.all([import('../report/fail-if.js'), import('../report/run-fail-if.js')])
  const conditions = texts.map(parseFailIf)
  assertCheckable(conditions, mode)
  return conditions
}

function parseFailOnErrors(raw: string | undefined): number | null {
  if (raw === undefined) return null
  const limit = Number(String(raw).trim().replace(/%$/, ''))
  if (String(raw).trim() === '' || !(limit >= 0 && limit <= 100))
    throw new UsageError(`invalid --fail-on-errors "${raw}" (a percentage from 0 to 100, e.g. 1 or 0.5%)`)
  return limit
}

/**
 * The file's directory must take a new file: the same check as --out-dir's
 * (created when missing, then a probe file, removed at once). Returns the
 * first directory it created, for takeBack.
 */
async function assertCanCreate(path: string, flag: string): Promise<string | undefined> {
  try {
    const { assertWritableDir } = await import('../report/results-store.js')
    return await assertWritableDir(dirname(path))
  } catch (err) {
    throw err instanceof UsageError ? new UsageError(`${flag} "${path}": ${err.message}`) : err
  }
}

/** Removes files and directories this run created (newest first), when it fails before measuring anything. */
async function takeBack(created: string[]): Promise<void> {
  for (const path of [...created].reverse()) await rm(path, { recursive: true, force: true }).catch(() => undefined)
}

/** Closes the per-request log; returns why its rows could not be written, or null. */
async function closeLog(log: RequestLog | null): Promise<string | null> {
  try {
    await log?.close()
    return null
  } catch (err) {
    return (err as Error).message
  }
}

async function writeOutputs(argv: CliFlags, result: RunResult, log: RequestLog | null, spinner: WaitSpinner): Promise<void> {
  if (!stdoutTaken(argv.html)) process.stdout.write(await renderOutput(result, argv.o, stdoutColor()))
  if (argv.frames) {
    // Loaded only when asked for (zlib), like the HTML renderer: start-up stays small.
    const { encodeFrames } = await import('../results/result-frames.js')
    process.stdout.write(
      encodeFrames(result)
        .map((line) => `${line}\n`)
        .join(''),
    )
  }
  if (argv.save) {
    spinner.show('save')
    const { saveResult } = await import('../report/results-store.js')
    const saved = await saveResult(result, argv.outDir).finally(() => spinner.show(null))
    writeStderrLine(`saved ${saved.json} and ${saved.csv}`)
  }
  if (argv.html) {
    spinner.show('render')
    await writeHtmlReport(argv.html, [result]).finally(() => spinner.show(null))
  }
  if (log && argv.csvRequests) writeStderrLine(`per-request rows in ${argv.csvRequests}`)
}

/**
 * Ctrl-C while waiting for --start-at: the run ended with no phase begun and
 * the agreed time still ahead (its lateness negative). Interrupted in the
 * warm-up after the start, it is an ordinary partial run.
 */
function interruptedBeforeStart(result: RunResult, options: RunOptions): boolean {
  return options.startAt !== undefined && result.partial && (result.start?.lateMs ?? 0) < 0 && Object.keys(result.phases).length === 0
}

/**
 * --fail-if and --fail-on-errors on the result: the exit code they give
 * (0, 1, or INCONCLUSIVE_EXIT_CODE when a phase's generator was saturated).
 * Every gate is named with which way it went, not only the first kind: a CI
 * log must show each reason. A gate whose phase was never measured (an
 * interrupted run), or that cannot be judged (too few requests, unless
 * --allow-unjudged), fails closed.
 */
async function checkGates(conditions: FailCondition[], failLimit: number | null, result: RunResult, allowUnjudged: boolean): Promise<number> {
  if (conditions.length === 0 && failLimit === null) return 0
  const { checkErrorLimit, checkRunFailIf, saturatedWhy } = await import('../report/run-fail-if.js')
  const say = (line: string): void => writeStderrLine(`hedgebench: ${line}`)
  const checks = checkRunFailIf(conditions, result)
  for (const check of checks) {
    const gate = `--fail-if ${JSON.stringify(check.condition.text)}`
    if (check.unmeasured) say(`${gate} not checked: ${check.unmeasured}; failing closed`)
    else if (check.unchecked)
      say(`${gate} not judged: ${check.unchecked}${allowUnjudged ? '; passing (--allow-unjudged)' : '; failing closed (--allow-unjudged lets it pass)'}`)
    else say(`${gate} ${check.holds ? 'holds' : 'does not hold'}: ${check.observed}`)
  }
  const errors = failLimit === null ? { breaches: [], unmeasured: [] } : checkErrorLimit(failLimit, result)
  for (const line of errors.unmeasured) say(`${line}; failing closed`)
  for (const line of errors.breaches) say(line)
  const saturated = saturatedWhy(result)
  for (const why of saturated) say(`gates inconclusive (exit ${INCONCLUSIVE_EXIT_CODE}): ${why}`)
  if (saturated.length > 0) return INCONCLUSIVE_EXIT_CODE
  const unjudged = !allowUnjudged && checks.some((c) => c.unchecked)
  return checks.some((c) => c.holds || c.unmeasured) || unjudged || errors.breaches.length > 0 || errors.unmeasured.length > 0 ? 1 : 0
}

/** A closed terminal or a dropped SSH session (SIGHUP) stops a run as SIGTERM does: what was measured is saved. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/**
 * First SIGINT/SIGTERM/SIGHUP: stop sending, let in-flight requests finish (the
 * engine aborts them after a short grace), then report and save what was
 * measured. A second SIGINT exits at once. SIGUSR2 marks a `watch` (`onMark`);
 * in a run or a sweep it is one line saying so, never the end of the process
 * (Node's default for it).
 */
export function onInterrupt(
  startAt: number | undefined,
  onMark?: () => void,
): { signal: AbortSignal; stopNow: AbortSignal; twice: () => boolean; dispose(): void } {
  const first = new AbortController()
  const second = new AbortController()
  const handler = (sig: NodeJS.Signals): void => {
    if (first.signal.aborted) {
      writeStderrLine(`hedgebench: second ${sig}: aborting in-flight requests and exiting`)
      second.abort()
      // Still write what was measured if that takes a moment; never hang.
      setTimeout(() => process.exit(130), 1500).unref()
      return
    }
    // Before --start-at nothing is in flight: the one line comes when the run returns.
    if (startAt === undefined || Date.now() >= startAt) writeStderrLine(`hedgebench: ${sig}: stopping, finishing in-flight requests (again to quit now)`)
    first.abort()
  }
  for (const sig of STOP_SIGNALS) process.on(sig, handler)
  const mark = onMark ?? ((): void => void process.stderr.write('hedgebench: SIGUSR2: marks only apply to `hedgebench watch`; ignored\n'))
  process.on('SIGUSR2', mark)
  // Node found nothing left to wait for while the run still waits (a connection whose end never comes): stop it
  // as a second Ctrl-C would, so what was measured is still written, instead of Node's silent exit 13.
  const stalled = (): void => {
    if (second.signal.aborted) return
    writeStderrLine('hedgebench: the run was left waiting on nothing (a connection that never ended): stopping and writing what was measured')
    first.abort()
    second.abort()
  }
  process.on('beforeExit', stalled)
  return {
    signal: first.signal,
    stopNow: second.signal,
    twice: () => second.signal.aborted,
    dispose: () => {
      for (const sig of STOP_SIGNALS) process.off(sig, handler)
      process.off('SIGUSR2', mark)
      process.off('beforeExit', stalled)
    },
  }
}
