/**
 * `hedgebench report FILE`: re-renders a saved run. `-o json` prints the
 * file exactly as saveResult wrote it (same renderer, same bytes), so a
 * report can be diffed against the original. A saved sweep is re-rendered
 * the same way, its frontier decided again under the --max-extra it was
 * saved with, and its --verify runs compared in words again. A saved watch
 * is rendered as the watch did at its end: its segments compared again, its
 * --fail-if gates applied again; a watch killed before its end has its
 * segments shown, not compared (what compares them, the whole window's run,
 * is written at the end).
 */
import type { CommandModule } from 'yargs'
import { UsageError } from '../core/errors.js'
import type { SavedSweepFile } from '../results/sweep-result.js'
import type { SavedWatchFile } from '../results/watch-file.js'
import { MAX_RESULT_SIZE_OPTION, maxResultMb } from './result-size-flag.js'
import { OUTPUT_OPTION, renderOutput, stdoutColor, stdoutTaken, writeHtmlReport, writeStderrLine, type OutputFormat } from './output.js'

interface ReportArgs {
  file: string
  output: OutputFormat
  html?: string
  maxResultSize?: number
}

export function reportCommand(setExitCode: (code: number) => void): CommandModule<object, ReportArgs> {
  return {
    command: 'report <file>',
    describe: 'print a saved run, sweep or watch again as text, JSON or CSV, or write it as HTML',
    builder: (yargs) =>
      yargs
        .positional('file', { type: 'string', demandOption: true, describe: 'a JSON file written by a run, a sweep or a watch (results/...json)' })
        .option('output', OUTPUT_OPTION)
        .option('html', { type: 'string', requiresArg: true, describe: 'also write a self-contained HTML report to this file (- : to stdout, instead of -o)' })
        .option('max-result-size', MAX_RESULT_SIZE_OPTION),
    handler: async (argv) => {
      const { loadSaved } = await import('../report/results-store.js')
      const saved = await loadSaved(argv.file, maxResultMb(argv.maxResultSize))
      if (saved.kind !== 'run') {
        await (saved.kind === 'sweep' ? reportSweep(saved.saved, argv) : reportWatch(saved.saved, argv))
        setExitCode(0)
        return
      }
      const result = saved.result
      if (argv.html !== undefined) await writeHtmlReport(argv.html, [result])
      if (!stdoutTaken(argv.html)) process.stdout.write(await renderOutput(result, argv.output, stdoutColor()))
      setExitCode(0)
    },
  }
}

/** A saved sweep in the format asked for, as the sweep itself printed it. */
async function reportSweep(saved: SavedSweepFile, argv: ReportArgs): Promise<void> {
  const [{ sweepFrontier, DEFAULT_MAX_EXTRA_PCT }, { renderSweep, writeSweepHtml, writeVerified }] = await Promise.all([
    import('../report/sweep-frontier.js'),
    import('./sweep-output.js'),
  ])
  const frontier = sweepFrontier(saved.sweep, saved.maxExtraPct ?? DEFAULT_MAX_EXTRA_PCT)
  if (argv.html !== undefined) await writeSweepHtml(argv.html, saved.sweep, frontier)
  if (!stdoutTaken(argv.html)) process.stdout.write(await renderSweep(argv.output, saved.sweep, frontier, saved.extra))
  await writeVerified(saved.verified, argv.output, argv.html)
}

/** A saved watch as the watch printed it at its end; `-o json` prints the file as it is. */
async function reportWatch(saved: SavedWatchFile, argv: ReportArgs): Promise<void> {
  const [{ compareSegments, watchGates }, { parseFailIf }, { writeWatchReport }] = await Promise.all([
    import('../report/watch-compare.js'),
    import('../report/fail-if.js'),
    import('./watch-output.js'),
  ])
  const { watch } = saved
  const out = { o: argv.output, html: argv.html, json: saved.text }
  if (!watch.run) {
    if (argv.html !== undefined)
      throw new UsageError(
        `${argv.file}: --html needs a watch that ended: this one did not (killed, or still running), and its charts are the whole window's run, saved at the end`,
      )
    writeStderrLine(
      `hedgebench: ${argv.file}: the watch did not end (killed, or still running): its segments as saved, not compared (the whole window's run, which compares them, is saved at the end)`,
    )
    await writeWatchReport(watch, [], { segments: null, checks: [], inconclusive: [] }, out)
    return
  }
  const finished = { ...watch, run: watch.run }
  await writeWatchReport(watch, compareSegments(finished), watchGates(saved.failIf.map(parseFailIf), finished), out)
}
