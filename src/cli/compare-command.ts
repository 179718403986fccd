/**
 * `hedgebench compare BEFORE.json AFTER.json [MORE.json...]`: every run
 * against the first, with a noise verdict per metric. One file compares its
 * own plain and hedged phases. `--fail-if` turns a regression into exit 1
 * for CI; the comparison goes to stdout, the failed conditions to stderr.
 */
import { basename } from 'node:path'
import type { CommandModule } from 'yargs'
import type { Comparison } from '../report/compare.js'
import { UsageError } from '../core/errors.js'
import { ALLOW_UNJUDGED_OPTION, gateExitCode } from './gate-exit.js'
import { MAX_RESULT_SIZE_OPTION, maxResultMb } from './result-size-flag.js'
import { fitStdout, OUTPUT_OPTION, stdoutColor, stdoutColumns, stdoutTaken, writeHtmlReport, writePage, type OutputFormat } from './output.js'
import type { RunResult } from '../results/run-result.js'
import type { SavedFile } from '../report/results-store.js'

const PHASES = ['plain', 'hedged', 'grpc-js'] as const

interface CompareArgs {
  files?: string[]
  baseline?: string[]
  phase?: (typeof PHASES)[number]
  output: OutputFormat
  'fail-if'?: string | string[]
  html?: string
  maxResultSize?: number
  allowUnjudged?: boolean
}

export function compareCommand(setExitCode: (code: number) => void): CommandModule<object, CompareArgs> {
  return {
    command: 'compare [files..]',
    describe: "compare saved runs with the first, or one run's two phases",
    builder: (yargs) =>
      yargs
        .positional('files', { type: 'string', array: true, describe: 'JSON files written by runs; the first is the baseline (unless --baseline is given)' })
        .option('baseline', {
          type: 'string',
          array: true,
          requiresArg: true,
          describe:
            'runs of the baseline, an A/A set (after the files: compare AFTER.json --baseline A1.json A2.json A3.json): every file is judged against ' +
            'their mean, and two or more make their spread a noise floor (docs/compare-and-ci.md)',
        })
        .option('phase', {
          requiresArg: true,
          choices: PHASES,
          describe: 'plain, hedged or grpc-js (the calls of --hedge-by grpc-js): the phase compared in every run [default: hedged if present]',
        })
        .option('output', OUTPUT_OPTION)
        .option('fail-if', {
          type: 'string',
          requiresArg: true,
          describe:
            'exit 1 when METRIC OP VALUE holds for a run after the first (repeatable). Metrics: p10..p99.99, min, max, mean, stddev, ' +
            'slow, error_rate, rps, extra_load; ops > < >= <=; +N%/-N% = change from the first run, else absolute (us, ms, s, m, %): ' +
            '"p99>+10%", "p50>25ms", "error_rate>1%", "rps<-5%"',
        })
        .option('allow-unjudged', ALLOW_UNJUDGED_OPTION)
        .option('html', { type: 'string', requiresArg: true, describe: 'also write a self-contained HTML report to this file (- : to stdout, instead of -o)' })
        .option('max-result-size', MAX_RESULT_SIZE_OPTION),
    handler: async (argv) => {
      // Loaded when comparing, not for --help (issue 14: start-up time).
      const { checkFailIf, inconclusiveWhy, parseFailIf } = await import('../report/fail-if.js')
      // Parse conditions first: a typo should fail before any file is read.
      const conditions = ([] as string[]).concat(argv['fail-if'] ?? []).map(parseFailIf)
      const phased = conditions.find((c) => c.phase)
      if (phased)
        throw new UsageError(`--fail-if ${JSON.stringify(phased.text)}: compare checks one phase per run, chosen with --phase; drop "${phased.phase}."`)
      const baselines = argv.baseline ?? []
      const candidates = argv.files ?? []
      if (candidates.length === 0)
        throw new UsageError(
          baselines.length > 0
            ? 'compare --baseline needs the runs to judge before it: compare AFTER.json --baseline A1.json A2.json'
            : 'compare needs files: compare BEFORE.json AFTER.json, or one run to compare its own phases',
        )
      const files = [...baselines, ...candidates]
      if (files.length === 1 && argv.phase !== undefined)
        throw new UsageError('--phase needs two or more files; one file compares its own plain and hedged phases')
      const { loadSaved } = await import('../report/results-store.js')
      const maxMb = maxResultMb(argv.maxResultSize)
      const saved = await Promise.all(files.map((f) => loadSaved(f, maxMb)))
      const watch = saved.findIndex((s) => s.kind === 'watch')
      if (watch >= 0)
        throw new UsageError(
          `${files[watch]}: a saved watch: its segments are compared within it, each against the one before; hedgebench report ${files[watch]} prints them`,
        )
      if (saved.some((s) => s.kind === 'sweep')) {
        await compareSweepFiles(files, saved, argv, conditions.length > 0)
        setExitCode(0)
        return
      }
      const results = saved.map((s) => (s as { result: RunResult }).result)
      const comparison = await compareLoaded(files, results, argv.phase, baselines.length)
      // The runs in the table: with a baseline set, its first run and the files judged.
      const shown = baselines.length > 1 ? [results[0]!, ...results.slice(baselines.length)] : results
      if (argv.html !== undefined) await writeHtml(argv.html, shown, comparison, files.length === 1)
      if (!stdoutTaken(argv.html)) process.stdout.write(await render(comparison, argv.output, shown))
      setExitCode(gateExitCode(checkFailIf(conditions, comparison), conditions.length > 0 ? inconclusiveWhy(comparison) : [], argv.allowUnjudged === true))
    },
  }
}

/** The first `baselines` files are the A/A set: its first run heads the table, the others only lend their spread. */
async function compareLoaded(files: string[], results: RunResult[], phase: CompareArgs['phase'], baselines: number): Promise<Comparison> {
  const { compareRuns, compareWithin } = await import('../report/compare.js')
  if (results.length === 1) return compareWithin(results[0]!)
  const names = runNames(files)
  const runs = results.map((result, i) => ({ name: names[i]!, result }))
  const set = runs.slice(0, baselines)
  return compareRuns(baselines > 1 ? [runs[0]!, ...runs.slice(baselines)] : runs, { ...(phase ? { phase } : {}), ...(baselines > 1 ? { baselines: set } : {}) })
}

/** File names, or the paths as given when two files share a name; repeats get "#2". */
function runNames(files: string[]): string[] {
  const bases = files.map((f) => basename(f))
  const names = new Set(bases).size === bases.length ? bases : files
  const seen = new Map<string, number>()
  return names.map((n) => {
    const count = (seen.get(n) ?? 0) + 1
    seen.set(n, count)
    return count > 1 ? `${n} #${count}` : n
  })
}

async function render(c: Comparison, format: OutputFormat, results: RunResult[]): Promise<string> {
  if (format === 'json') return (await import('../report/compare-json.js')).renderCompareJson(c)
  if (format === 'csv') return (await import('../report/compare-csv.js')).renderCompareCsv(c)
  const { hedgeVerdict } = await import('../report/verdict.js')
  // Each run with both phases gets the verdict its own report prints.
  const verdicts = results.flatMap((result, i) => {
    const { plain, hedged } = result.phases
    return plain && hedged ? [{ run: c.kind === 'runs' ? c.runs[i]!.tag : result.label, verdict: hedgeVerdict(plain, hedged, result) }] : []
  })
  return fitStdout((await import('../report/compare-text.js')).renderCompareText(c, { color: stdoutColor(), verdicts, width: stdoutColumns() }))
}

async function writeHtml(out: string, results: RunResult[], comparison: Comparison, within: boolean): Promise<void> {
  const title = within ? `hedgebench: plain vs hedged, ${results[0]?.label ?? ''}` : `hedgebench: ${comparison.runs.map((r) => r.name).join(' vs ')}`
  await writeHtmlReport(out, within ? results.slice(0, 1) : results, { title, comparison })
}

/** Two saved sweeps of the same settings, lane by lane. */
async function compareSweepFiles(files: string[], saved: SavedFile[], argv: CompareArgs, failIf: boolean): Promise<void> {
  const sweeps = saved.flatMap((s) => (s.kind === 'sweep' ? [s.saved.sweep] : []))
  if (sweeps.length !== 2 || saved.length !== 2)
    throw new UsageError('compare takes two saved sweeps (of the same settings), or saved runs: not a mix, nor more sweeps')
  if (failIf || argv.phase !== undefined) throw new UsageError('--fail-if and --phase compare runs; two sweeps are compared lane by lane')
  const [{ compareSweeps }, render] = await Promise.all([import('../report/sweep-compare.js'), import('../report/sweep-compare-render.js')])
  const names = runNames(files)
  const c = compareSweeps({ name: names[0]!, sweep: sweeps[0]! }, { name: names[1]!, sweep: sweeps[1]! })
  if (argv.html !== undefined) await writePage(argv.html, render.renderSweepCompareHtml(c))
  if (stdoutTaken(argv.html)) return
  const format = { json: render.renderSweepCompareJson, csv: render.renderSweepCompareCsv, text: render.renderSweepCompareText }[argv.output]
  process.stdout.write(format(c))
}
