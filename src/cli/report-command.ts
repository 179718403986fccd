/**
 * `hedgebench report FILE`: re-renders a saved run. `-o json` prints the
 * file exactly as saveResult wrote it (same renderer, same bytes), so a
 * report can be diffed against the original. A saved sweep is re-rendered
 * the same way, its frontier decided again under the --max-extra it was
 * saved with, and its --verify runs compared in words again.
 */
import type { CommandModule } from 'yargs'
import type { SavedSweepFile } from '../results/sweep-result.js'
import { MAX_RESULT_SIZE_OPTION, maxResultMb } from './result-size-flag.js'
import { OUTPUT_OPTION, renderOutput, stdoutColor, stdoutTaken, writeHtmlReport, type OutputFormat } from './output.js'

interface ReportArgs {
  file: string
  output: OutputFormat
  html?: string
  maxResultSize?: number
}

export function reportCommand(setExitCode: (code: number) => void): CommandModule<object, ReportArgs> {
  return {
    command: 'report <file>',
    describe: 'print a saved run or sweep again as text, JSON or CSV, or write it as HTML',
    builder: (yargs) =>
      yargs
        .positional('file', { type: 'string', demandOption: true, describe: 'a JSON file written by a run or a sweep (results/...json)' })
        .option('output', OUTPUT_OPTION)
        .option('html', { type: 'string', requiresArg: true, describe: 'also write a self-contained HTML report to this file (- : to stdout, instead of -o)' })
        .option('max-result-size', MAX_RESULT_SIZE_OPTION),
    handler: async (argv) => {
      const { loadSaved } = await import('../report/results-store.js')
      const saved = await loadSaved(argv.file, maxResultMb(argv.maxResultSize))
      if (saved.kind === 'sweep') {
        await reportSweep(saved.saved, argv)
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
