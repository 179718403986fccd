/** `hedgebench sweep URL… --hedge-delay p75,p90,20ms [--max-attempts 2,3] [--hedge-budget 5%,10%]`: one warm-up, one window interleaving a plain lane and a lane per setting; the frontier and the setting to deploy. */
import type { Argv, CommandModule } from 'yargs'
import { UsageError } from '../core/errors.js'
import { MAX_ATTEMPTS_CAP } from '../hedging/policy.js'
import { valuesRequired } from './argv.js'
import { assertNoRepeats, flagsToOptions, type RunFlags } from './run-flags.js'
import { onInterrupt, requestFlags, serverStatsFlag, startRunMetrics } from './run-command.js'
import type { RunOptions } from '../run/run-options.js'
import { grpcFlags, quietGrpcJs } from './grpc-flags.js'
import { tlsFlags } from './tls-flags.js'
import type { ShownProgress } from './progress.js'
import { checkSweepOutput, SWEEP_FORMATS, writeSweepOutputs } from './sweep-output.js'

interface SweepFlags extends RunFlags {
  hedgeDelay?: string
  maxExtra?: string
  o: string
  outDir?: string
  save?: boolean
  emitFor?: string
  verify?: boolean
  html?: string
  metricsPort?: string
}

const DEFAULT_DELAYS = 'p75,p90,p95,p99'

export function sweepCommand(setExitCode: (code: number) => void): CommandModule<object, SweepFlags> {
  return {
    command: 'sweep [urls..]',
    describe: 'try several hedging settings side by side on the same replicas and recommend one: the cost/tail frontier',
    builder: (y) =>
      valuesRequired(
        serverStatsFlag(requestFlags(tlsFlags(grpcFlags(y as Argv))))
          .positional('urls', { describe: 'replica URLs (same service)', type: 'string', array: true })
          .option('hedge-delay', {
            type: 'string',
            describe: `delays to try, a comma list of warm-up percentiles and durations [default: ${DEFAULT_DELAYS}]`,
            group: 'Sweep:',
          })
          .option('max-attempts', {
            type: 'string',
            describe: `attempts per request to try, a comma list (2 to ${MAX_ATTEMPTS_CAP}) [default: 2]`,
            group: 'Sweep:',
          })
          .option('hedge-budget', {
            alias: 'budget',
            type: 'string',
            describe: 'hedge budgets to try, a comma list of % of requests or off [default: 10%]',
            group: 'Sweep:',
          })
          .option('max-extra', { type: 'string', describe: 'the extra load (hedges per request) a recommendation may cost [default: 5%]', group: 'Sweep:' })
          .option('n', { alias: 'requests', type: 'string', describe: "requests per lane (the plain lane and each setting's)", group: 'Load:' })
          .option('z', {
            alias: 'duration',
            type: 'string',
            describe: 'duration of the one window all the lanes share, instead of -n (wins over -n; equal shares, to one request); the warm-up stops at -z too',
            group: 'Load:',
          })
          .option('c', { alias: 'concurrency', type: 'string', describe: 'requests in flight, all lanes together', group: 'Load:' })
          // Read only to be refused with its reason (run/run.ts runSettings), rather than as an unknown argument.
          .option('workers', { type: 'string', hidden: true })
          .option('t', { alias: 'timeout', type: 'string', describe: 'per-attempt timeout; bare number = seconds', group: 'Load:' })
          .option('warmup', { type: 'string', describe: 'warm-up requests, once, before the window', group: 'Load:' })
          .option('seed', { type: 'string', describe: "seed for the client's random choices (which lane each request goes to, too)", group: 'Load:' })
          .option('slow', { type: 'string', describe: 'threshold of a slow request', group: 'Output:' })
          .option('o', {
            alias: 'output',
            type: 'string',
            choices: SWEEP_FORMATS,
            default: 'text',
            describe: 'output format [default: text]',
            group: 'Output:',
          })
          .option('html', {
            type: 'string',
            requiresArg: true,
            describe: 'also write the sweep as a self-contained HTML page to this file (- : to stdout, instead of -o)',
            group: 'Output:',
          })
          .option('label', { type: 'string', describe: 'name of the sweep (in the file name and the title)', group: 'Output:' })
          .option('out-dir', {
            type: 'string',
            default: 'results',
            describe: 'where the sweep (JSON + CSV) and the configs to deploy are saved [default: results]',
            group: 'Output:',
          })
          .option('save', { type: 'boolean', default: true, describe: 'save the sweep and the configs under --out-dir (--no-save: nowhere)', group: 'Output:' })
          .option('emit-for', {
            type: 'string',
            describe:
              'write the configs to deploy for this setting (as the table names it: p90, or "p90, 3 attempts" when the lists vary) instead of the recommended one',
            group: 'Output:',
          })
          .option('verify', {
            type: 'boolean',
            describe: 'gRPC: run the chosen setting through grpc-js with the emitted service config, and say how far it is from hedgebench',
            group: 'Output:',
          })
          .option('metrics-port', {
            type: 'string',
            describe:
              'serve Prometheus metrics of the plain lane and of each setting\'s (labelled setting="p90") at /metrics while the sweep goes, on this port or HOST:PORT (docs/watch.md)',
            group: 'Output:',
          }),
      ) as unknown as Argv<SweepFlags>,
    handler: async (argv) => setExitCode(await sweepFromCli(argv)),
  }
}

async function sweepFromCli(argv: SweepFlags): Promise<number> {
  assertNoRepeats(argv as unknown as Record<string, unknown>)
  const { parseDelayList, parseAttemptsList, parseBudgetList, planSettings } = await import('../run/sweep.js')
  const delays = parseDelayList(argv.hedgeDelay ?? DEFAULT_DELAYS)
  const maxAttempts = argv.maxAttempts === undefined ? undefined : parseAttemptsList(argv.maxAttempts)
  const budgets = argv.hedgeBudget === undefined ? undefined : parseBudgetList(argv.hedgeBudget)
  const labels = planSettings(delays, maxAttempts ?? [2], budgets ?? [null]).map((s) => s.label)
  const maxExtraPct = parsePct(argv.maxExtra ?? '5%')
  if (argv.hedgeBy !== undefined || argv.serviceConfig !== undefined)
    throw new UsageError(
      "--hedge-by and --service-config are a run's (hedgebench run … --hedge-by grpc-js): a sweep measures hedgebench's own hedging (--verify runs grpc-js)",
    )
  const {
    hedgeDelay: _list,
    maxExtra: _max,
    maxAttempts: _attempts,
    hedgeBudget: _budget,
    o: _o,
    outDir: _dir,
    save: _save,
    emitFor: _emit,
    verify: _verify,
    html: _html,
    metricsPort,
    ...runFlags
  } = argv
  const options = await flagsToOptions(runFlags as RunFlags)
  if (options.urls.length === 0) throw new UsageError('sweep needs one or more replica URLs: hedgebench sweep URL… --hedge-delay p90,p99')
  const out = {
    o: argv.o,
    outDir: argv.outDir ?? 'results',
    save: argv.save !== false,
    ...(argv.emitFor !== undefined ? { emitFor: argv.emitFor } : {}),
    verify: argv.verify === true,
    ...(argv.html !== undefined ? { html: argv.html } : {}),
  }
  // Listening before anything is created, so that a port in use leaves nothing behind.
  const metrics = metricsPort === undefined ? null : await startRunMetrics(metricsPort, labels)
  try {
    await checkSweepOutput(out, options.urls, labels)
    return await measure(options, { delays, maxAttempts, budgets, labels, maxExtraPct, out }, metrics?.feed)
  } finally {
    metrics?.feed.stop()
    await metrics?.close()
  }
}

/** The sweep itself, its progress bar and its outputs, once every check passed. */
async function measure(
  options: Awaited<ReturnType<typeof flagsToOptions>>,
  given: {
    delays: ReturnType<typeof import('../run/sweep.js').parseDelayList>
    maxAttempts: number[] | undefined
    budgets: Array<number | null> | undefined
    labels: string[]
    maxExtraPct: number
    out: Parameters<typeof writeSweepOutputs>[0]
  },
  feed: { onWindow: NonNullable<RunOptions['onWindow']> } | undefined,
): Promise<number> {
  const { delays, maxAttempts, budgets, labels, maxExtraPct, out } = given
  if (options.grpc) await quietGrpcJs()
  const [{ sweep }, { sweepFrontier }, { startProgress }, { resolveOptions }, { sweepPlanOf, sweepWindowName }] = await Promise.all([
    import('../run/sweep.js'),
    import('../report/sweep-frontier.js'),
    import('./progress.js'),
    import('../run/resolve-options.js'),
    import('./progress-line.js'),
  ])
  // The bar: the warm-up, then the one window of every lane, named by its settings; its ETA is the whole sweep's.
  const name = sweepWindowName(labels.length)
  const plan = sweepPlanOf(resolveOptions(options, 0), labels.length)
  const interrupt = onInterrupt(undefined)
  // As a run: the handlers stay until what was measured is written.
  try {
    const progress = startProgress(plan)
    const sweepOptions = {
      ...options,
      delays: delays.map((d) => ('fixedMs' in d ? d.fixedMs : (`p${d.percentile}` as const))),
      ...(maxAttempts ? { maxAttempts } : {}),
      ...(budgets ? { budgets } : {}),
      signal: interrupt.signal,
      stopNow: interrupt.stopNow,
    }
    const result = await sweep({
      ...(feed ? { onWindow: feed.onWindow } : {}),
      ...sweepOptions,
      onProgress: (p) => progress.update({ ...p, phase: p.phase === 'warmup' ? 'warmup' : name } satisfies ShownProgress),
    }).finally(() => progress.stop())
    await writeSweepOutputs(out, sweepOptions, result, sweepFrontier(result, maxExtraPct))
    // As an interrupted run: what was measured is reported and saved, exit 0; a second Ctrl-C exits 130.
    return interrupt.twice() ? 130 : 0
  } finally {
    interrupt.dispose()
  }
}

function parsePct(text: string): number {
  const n = Number(text.trim().replace(/%$/, ''))
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`invalid --max-extra "${text}" (a percentage such as 5%)`)
  return n
}
