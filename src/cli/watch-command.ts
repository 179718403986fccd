/**
 * `hedgebench watch URL… -q RATE [-z DURATION] [--mark-at 90s=NAME]…`: one
 * live run, its plain and hedged lanes side by side, until -z or Ctrl-C
 * (run/watch.ts). Here: the flags, the view (watch-view.ts), the marks from
 * the terminal's `m` key, SIGUSR2 and the metrics port's POST /mark, the
 * result saved atomically every second, and at the end every segment
 * against the one before it in the -o format (--html too), with --fail-if
 * on the last segment against the first.
 */
import { join } from 'node:path'
import type { Argv, CommandModule } from 'yargs'
import { parseDuration } from '../core/duration.js'
import { UsageError } from '../core/errors.js'
import { printable } from '../core/printable.js'
import { MAX_ATTEMPTS_CAP } from '../hedging/policy.js'
import type { FailCondition } from '../report/fail-if.js'
import type { FinishedWatch, WatchResult } from '../results/watch-result.js'
import type { Watch } from '../run/watch.js'
import { valuesRequired } from './argv.js'
import { grpcFlags, quietGrpcJs } from './grpc-flags.js'
import { ALLOW_UNJUDGED_OPTION, gateExitCode } from './gate-exit.js'
import { stdoutColumns, writeStderrLine } from './output.js'
import { onInterrupt, requestFlags, serverStatsFlag } from './run-command.js'
import { assertNoRepeats, flagsToOptions, type RunFlags } from './run-flags.js'
import { tlsFlags } from './tls-flags.js'
import { plainView, terminalView, type WatchView } from './watch-view.js'

const WATCH_FORMATS = ['text', 'json', 'csv'] as const

interface WatchFlags extends RunFlags {
  markAt?: string | string[]
  seedRule?: boolean
  metricsPort?: string
  o: (typeof WATCH_FORMATS)[number]
  html?: string
  outDir: string
  save: boolean
  failIf?: string | string[]
  allowUnjudged?: boolean
}

export function watchCommand(setExitCode: (code: number) => void): CommandModule<object, WatchFlags> {
  return {
    command: 'watch [urls..]',
    describe: 'one live open-loop run, plain and hedged side by side, until -z or Ctrl-C; marks split it into segments, each judged against the one before',
    builder: (y) =>
      valuesRequired(
        serverStatsFlag(requestFlags(tlsFlags(grpcFlags(y as Argv))))
          .positional('urls', { describe: 'replica URLs (same service)', type: 'string', array: true })
          .option('q', { alias: 'rate', type: 'string', describe: 'requests/s of both lanes together (open loop): required', group: 'Load:' })
          .option('z', { alias: 'duration', type: 'string', describe: 'how long to watch [default: until Ctrl-C]', group: 'Load:' })
          .option('c', { alias: 'concurrency', type: 'string', describe: 'requests in flight at most, both lanes together', group: 'Load:' })
          .option('t', { alias: 'timeout', type: 'string', describe: 'per-attempt timeout; bare number = seconds', group: 'Load:' })
          .option('warmup', { type: 'string', describe: 'warm-up requests before the watch starts (its p95 is the first hedge delay)', group: 'Load:' })
          .option('seed', { type: 'string', describe: "seed for the client's random choices (which lane each request goes to, too)", group: 'Load:' })
          .option('label', { type: 'string', describe: 'a name for the watch, in its file name and reports', group: 'Load:' })
          .option('workers', { type: 'string', hidden: true })
          .option('hedge-delay', {
            type: 'string',
            describe: 'the percentile of recent original attempts the hedge delay follows [default: p95]',
            group: 'Hedging:',
          })
          .option('adaptive-window', {
            type: 'string',
            describe: 'how recent: a duration (30s) or a count of original attempts [default: 30s]',
            group: 'Hedging:',
          })
          .option('delay-min', { type: 'string', describe: 'the least hedge delay', group: 'Hedging:' })
          .option('delay-max', { type: 'string', describe: 'the largest hedge delay', group: 'Hedging:' })
          .option('seed-rule', { type: 'boolean', describe: 'the seed rule: clamp(p95, 20ms, 80ms) (--delay-min 20ms --delay-max 80ms)', group: 'Hedging:' })
          .option('max-attempts', {
            type: 'string',
            describe: `attempts per request, the original included (2 to ${MAX_ATTEMPTS_CAP}) [default: 2]`,
            group: 'Hedging:',
          })
          .option('hedge-budget', { alias: 'budget', type: 'string', describe: 'hedges at most, % of requests, or off [default: 10%]', group: 'Hedging:' })
          .option('mark-at', {
            type: 'string',
            describe: 'start a segment at this time of the watch, optionally named (90s, 90s=flag-on; repeatable)',
            group: 'Marks:',
          })
          .option('metrics-port', {
            type: 'string',
            describe: 'serve Prometheus metrics at /metrics (and take POST /mark) on this port, or HOST:PORT [default host: 127.0.0.1]',
            group: 'Marks:',
          })
          .option('slow', { type: 'string', describe: 'threshold of a slow request', group: 'Output:' })
          .option('o', {
            alias: 'output',
            type: 'string',
            choices: WATCH_FORMATS,
            default: 'text',
            describe: 'the final report [default: text]',
            group: 'Output:',
          })
          .option('html', {
            type: 'string',
            describe: 'also write the HTML report (charts over time with the marks) to this file (- : to stdout, instead of -o)',
            group: 'Output:',
          })
          .option('out-dir', { type: 'string', default: 'results', describe: 'where the watch is saved, every second [default: results]', group: 'Output:' })
          .option('save', { type: 'boolean', default: true, describe: 'save the watch under --out-dir (--no-save: nowhere)', group: 'Output:' })
          .option('fail-if', {
            type: 'string',
            describe: 'exit 1 when the last segment against the first meets it (as compare: p99>+10%, hedged.p99>50ms; repeatable)',
            group: 'Output:',
          })
          .option('allow-unjudged', { ...ALLOW_UNJUDGED_OPTION, group: 'Output:' }),
      ) as unknown as Argv<WatchFlags>,
    handler: async (argv) => setExitCode(await watchFromCli(argv)),
  }
}

/** "90s" or "90s=flag on": the time (a duration, bare seconds) and an optional name. */
export function parseMarkAt(text: string): { atS: number; name?: string } {
  const at = text.indexOf('=')
  const time = (at < 0 ? text : text.slice(0, at)).trim()
  const name = at < 0 ? undefined : markName(text.slice(at + 1))
  const ms = parseDuration(time, '--mark-at', 's')
  if (!(ms >= 1000) || ms % 1000 !== 0) throw new UsageError(`invalid --mark-at "${text}" (whole seconds from 1s into the watch: 90s, 2m, 90s=flag-on)`)
  return { atS: ms / 1000, ...(name ? { name } : {}) }
}

/** A mark's name as given: printable, trimmed, at most 100 characters. */
function markName(text: string): string | undefined {
  const name = printable(text).trim().slice(0, 100)
  return name === '' ? undefined : name
}

async function watchFromCli(argv: WatchFlags): Promise<number> {
  assertNoRepeats(argv as unknown as Record<string, unknown>)
  if (argv.q === undefined) throw new UsageError('watch needs an open-loop rate: -q N (requests/s, both lanes together)')
  if (argv.n !== undefined) throw new UsageError('watch runs until -z or Ctrl-C: it takes no -n')
  const marksAt = list(argv.markAt).map(parseMarkAt)
  const conditions = await failConditions(list(argv.failIf))
  const { markAt: _m, seedRule, metricsPort, o, html, outDir, save, failIf: _f, allowUnjudged, ...runFlags } = argv
  if (seedRule && (argv.delayMin !== undefined || argv.delayMax !== undefined))
    throw new UsageError('--seed-rule is --delay-min 20ms --delay-max 80ms: give one or the other')
  const options = await flagsToOptions({ ...runFlags, ...(seedRule ? { delayMin: '20ms', delayMax: '80ms' } : {}) } as RunFlags)
  if (options.urls.length === 0) throw new UsageError('watch needs one or more replica URLs: hedgebench watch URL… -q 200')
  if (options.grpc) await quietGrpcJs()
  const [{ Watch, checkMarksAt }, { startMetrics, parseMetricsPort, watchSource }, store] = await Promise.all([
    import('../run/watch.js'),
    import('./metrics-server.js'),
    import('../report/results-store.js'),
  ])
  checkMarksAt(marksAt, options.durationMs)
  const metrics = metricsPort === undefined ? null : await startMetrics(parseMetricsPort(metricsPort), metricsPort)
  const view = liveView(o)
  let watch: Watch | null = null
  // A mark ignored is a fleeting note: it would stay on the terminal's block to the end.
  const mark = (source: 'signal' | 'key'): void => {
    const m = watch ? watch.mark(undefined, source) : { taken: false, line: 'mark ignored: no traffic yet (the watch has not started)' }
    view.note(m.line, !m.taken)
  }
  const interrupt = onInterrupt(undefined, () => mark('signal'))
  const saved = save ? new Saver(join(outDir, `watch-${stamp()}-${store.sanitizeLabel(options.label ?? 'watch')}.json`), store.writeFileAtomic) : null
  const stopKeys = listenKeys(() => mark('key'))
  try {
    if (saved) await saved.prepare()
    watch = new Watch({
      ...options,
      rate: options.rate!,
      marksAt,
      signal: interrupt.signal,
      stopNow: interrupt.stopNow,
      onSecond: (second, state) => {
        view.second(second, state)
        if (metrics && watch?.samplers) for (const lane of ['plain', 'hedged'] as const) metrics.observe({ lane }, watch.samplers[lane].second)
        saved?.save(() => watch!.snapshot())
      },
      onNote: (line) => view.note(line),
    })
    metrics?.attach(watchSource(watch), (line, ignored) => view.note(line, ignored))
    if (metrics) process.stderr.write(`hedgebench: metrics at http://${metrics.host}:${metrics.port}/metrics (POST /mark to mark)\n`)
    if (saved) process.stderr.write(`hedgebench: saving to ${saved.path} every second\n`)
    const result = await watch.run()
    stopKeys()
    view.close()
    return await report(result, { o, html, conditions, allowUnjudged: allowUnjudged === true, saved }, interrupt.twice())
  } finally {
    stopKeys()
    view.close()
    interrupt.dispose()
    await metrics?.close()
  }
}

/** The end: the segments compared, the gates, the report; the file saved with all of it. */
async function report(
  result: FinishedWatch,
  out: { o: WatchFlags['o']; html: string | undefined; conditions: FailCondition[]; allowUnjudged: boolean; saved: Saver | null },
  twice: boolean,
): Promise<number> {
  const [{ compareSegments, watchGates }, { writeWatchReport }] = await Promise.all([import('../report/watch-compare.js'), import('./watch-output.js')])
  const comparisons = compareSegments(result)
  const gates = watchGates(out.conditions, result)
  const full = { ...result, comparisons, ...(gates.segments ? { failIf: gates } : {}) }
  const json = `${JSON.stringify(full, null, 2)}\n`
  await out.saved?.final(json)
  await writeWatchReport(result, comparisons, gates, { o: out.o, html: out.html, json })
  const nothing = result.segments.length === 0
  if (twice) return 130
  if (out.conditions.length > 0 && !gates.segments) {
    // Nothing to judge the gates by: they fail closed, as a gate on too few requests does.
    writeStderrLine(
      `hedgebench: --fail-if not judged: ${nothing ? 'nothing measured' : 'one segment only (no mark)'}${out.allowUnjudged ? '; passing (--allow-unjudged)' : '; failing closed (--allow-unjudged lets it pass)'}`,
    )
    return out.allowUnjudged ? 0 : 1
  }
  return gateExitCode(gates.checks, gates.inconclusive, out.allowUnjudged)
}

async function failConditions(texts: string[]): Promise<FailCondition[]> {
  if (texts.length === 0) return []
  const { parseFailIf } = await import('../report/fail-if.js')
  return texts.map(parseFailIf)
}

/** The live lines go to stdout with the text report; with -o json or csv, stdout is the report's alone and they go to stderr. */
function liveView(o: WatchFlags['o']): WatchView {
  const out = o === 'text' ? process.stdout : process.stderr
  if (out.isTTY)
    return terminalView(
      (t) => void out.write(t),
      () => stdoutColumns(),
    )
  return plainView(
    (line) => void out.write(`${line}\n`),
    (line) => void process.stderr.write(`hedgebench: ${line}\n`),
  )
}

/** In a terminal: `m` marks, `q` stops as Ctrl-C does (raw mode takes Ctrl-C from the terminal, so it is passed on as SIGINT). */
function listenKeys(mark: () => void): () => void {
  const stdin = process.stdin
  if (!stdin.isTTY) return () => {}
  stdin.setRawMode(true)
  const onData = (data: Buffer): void => {
    for (const key of data.toString('utf8')) {
      if (key === 'm' || key === 'M') mark()
      else if (key === 'q' || key === '\u0003') process.kill(process.pid, 'SIGINT')
    }
  }
  stdin.on('data', onData)
  stdin.resume()
  let stopped = false
  return () => {
    if (stopped) return
    stopped = true
    stdin.off('data', onData)
    stdin.setRawMode(false)
    stdin.pause()
  }
}

/** The watch written atomically every second: one write at a time, the latest state when a write was still going. */
class Saver {
  #writing: Promise<void> = Promise.resolve()
  #queued: (() => WatchResult) | null = null
  #failed = false

  constructor(
    readonly path: string,
    readonly write: (path: string, data: string, opts: { overwrite: boolean }) => Promise<void>,
  ) {}

  async prepare(): Promise<void> {
    const { makeDirs } = await import('../core/make-dirs.js')
    await makeDirs(join(this.path, '..'))
  }

  save(state: () => WatchResult): void {
    const idle = this.#queued === null
    this.#queued = state
    if (idle) this.#writing = this.#writing.then(() => this.#flush())
  }

  async final(json: string): Promise<void> {
    this.#queued = null
    await this.#writing
    await this.write(this.path, json, { overwrite: true })
  }

  async #flush(): Promise<void> {
    const state = this.#queued
    this.#queued = null
    if (!state) return
    try {
      // Compact while it runs (an hour of seconds is about 1.3 MB, rewritten every second); indented at the end.
      await this.write(this.path, `${JSON.stringify(state())}\n`, { overwrite: true })
    } catch (err) {
      if (!this.#failed) process.stderr.write(`hedgebench: cannot save ${this.path}: ${(err as Error).message}\n`)
      this.#failed = true
    }
  }
}

/** 20261204-185900: the watch's start in its file name. */
function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
}

const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)])
