/** `hedgebench sweep URL… --hedge-delay p75,p90,20ms`: one warm-up, then a plain and a hedged phase per delay; the frontier and the delay to deploy. */
import type { CommandModule } from 'yargs'
import { UsageError } from '../core/errors.js'
import { valuesRequired } from './argv.js'
import { assertNoRepeats, flagsToOptions, type RunFlags } from './run-flags.js'
import { onInterrupt } from './run-command.js'
import { checkSweepOutput, SWEEP_FORMATS, writeSweepOutputs } from './sweep-output.js'

interface SweepFlags {
  urls?: string[]
  hedgeDelay?: string
  maxExtra?: string
  n?: string
  c?: string
  t?: string
  warmup?: string
  seed?: string
  slow?: string
  maxAttempts?: string
  hedgeBudget?: string
  http2?: boolean
  o: string
  outDir?: string
  save?: boolean
  emitFor?: string
  verify?: boolean
}

export function sweepCommand(setExitCode: (code: number) => void): CommandModule<object, SweepFlags> {
  return {
    command: 'sweep [urls..]',
    describe: 'try several hedge delays on the same replicas and recommend one: the cost/tail frontier',
    builder: (y) =>
      valuesRequired(y
        .positional('urls', { describe: 'replica URLs (same service)', type: 'string', array: true })
        .option('hedge-delay', { type: 'string', describe: 'delays to try, a comma list of warm-up percentiles and durations [default: p75,p90,p95,p99]' })
        .option('max-extra', { type: 'string', describe: 'the extra load (hedges per request) a recommendation may cost [default: 5%]' })
        .option('n', { alias: 'requests', type: 'string', describe: 'requests per phase (each setting runs a plain and a hedged phase)' })
        .option('c', { alias: 'concurrency', type: 'string', describe: 'requests in flight' })
        .option('t', { alias: 'timeout', type: 'string', describe: 'per-attempt timeout; bare number = seconds' })
        .option('warmup', { type: 'string', describe: 'warm-up requests, once, before the first setting' })
        .option('seed', { type: 'string', describe: 'seed for the client\'s random choices' })
        .option('slow', { type: 'string', describe: 'threshold of a slow request' })
        .option('max-attempts', { type: 'string', describe: 'attempts per request, the original included' })
        .option('hedge-budget', { type: 'string', describe: 'hedges allowed, % of requests, or off' })
        .option('http2', { type: 'boolean', describe: 'HTTP/2 (h2c on http://)' })
        .option('o', { alias: 'output', type: 'string', choices: SWEEP_FORMATS, default: 'text', describe: 'output format [default: text]' })
        .option('out-dir', { type: 'string', default: 'results', describe: 'where the sweep (JSON + CSV) and the configs to deploy are saved [default: results]' })
        .option('save', { type: 'boolean', default: true, describe: 'save the sweep and the configs under --out-dir (--no-save: nowhere)' })
        .option('emit-for', { type: 'string', describe: 'write the configs to deploy for this setting (a --hedge-delay item) instead of the recommended one' })
        .option('verify', { type: 'boolean', describe: 'gRPC: run the chosen setting through grpc-js with the emitted service config, and say how far it is from hedgebench' })),
    handler: async (argv) => setExitCode(await sweepFromCli(argv)),
  }
}

async function sweepFromCli(argv: SweepFlags): Promise<number> {
  assertNoRepeats(argv as unknown as Record<string, unknown>)
  const { parseDelayList } = await import('../run/sweep.js')
  const delays = parseDelayList(argv.hedgeDelay ?? 'p75,p90,p95,p99')
  const maxExtraPct = parsePct(argv.maxExtra ?? '5%')
  const { hedgeDelay: _list, maxExtra: _max, o: _o, outDir: _dir, save: _save, emitFor: _emit, verify: _verify, ...runFlags } = argv
  const options = await flagsToOptions(runFlags as RunFlags)
  if (options.urls.length === 0) throw new UsageError('sweep needs one or more replica URLs: hedgebench sweep URL… --hedge-delay p90,p99')
  const out = { o: argv.o, outDir: argv.outDir ?? 'results', save: argv.save !== false, ...(argv.emitFor !== undefined ? { emitFor: argv.emitFor } : {}), verify: argv.verify === true }
  await checkSweepOutput(out, options.urls, delays.map((d) => d.label))
  const [{ sweep }, { sweepFrontier }] = await Promise.all([import('../run/sweep.js'), import('../report/sweep-frontier.js')])
  const interrupt = onInterrupt(undefined)
  try {
    const sweepOptions = { ...options, delays: delays.map((d) => ('fixedMs' in d ? d.fixedMs : (`p${d.percentile}` as const))), signal: interrupt.signal, stopNow: interrupt.stopNow }
    const result = await sweep(sweepOptions)
    await writeSweepOutputs(out, sweepOptions, result, sweepFrontier(result, maxExtraPct))
    return result.partial ? 130 : 0
  } finally {
    interrupt.dispose()
  }
}

function parsePct(text: string): number {
  const n = Number(text.trim().replace(/%$/, ''))
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new UsageError(`invalid --max-extra "${text}" (a percentage such as 5%)`)
  return n
}
