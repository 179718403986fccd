/**
 * `hedgebench report FILE`: re-renders a saved run. `-o json` prints the
 * file exactly as saveResult wrote it (same renderer, same bytes), so a
 * report can be diffed against the original.
 */
import type { CommandModule } from 'yargs'
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
    describe: 'print a saved run again as text, JSON or CSV, or write it as HTML',
    builder: (yargs) =>
      yargs
        .positional('file', { type: 'string', demandOption: true, describe: 'a JSON file written by a run (results/...json)' })
        .option('output', OUTPUT_OPTION)
        .option('html', { type: 'string', requiresArg: true, describe: 'also write a self-contained HTML report to this file (- : to stdout, instead of -o)' })
        .option('max-result-size', MAX_RESULT_SIZE_OPTION),
    handler: async (argv) => {
      const { loadResult } = await import('../report/results-store.js')
      const result = await loadResult(argv.file, maxResultMb(argv.maxResultSize))
      if (argv.html !== undefined) await writeHtmlReport(argv.html, [result])
      if (!stdoutTaken(argv.html)) process.stdout.write(await renderOutput(result, argv.output, stdoutColor()))
      setExitCode(0)
    },
  }
}
