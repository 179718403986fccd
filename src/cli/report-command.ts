/**
 * `hedgebench report FILE`: re-renders a saved run. `-o json` prints the
 * file exactly as saveResult wrote it (same renderer, same bytes), so a
 * report can be diffed against the original.
 */
import type { CommandModule } from 'yargs'
import { renderOutput } from './output.js'
import { loadResult, writeFileAtomic } from '../results-store.js'
import type { RunResult } from '../types.js'

const FORMATS = ['text', 'json', 'csv'] as const
type Format = (typeof FORMATS)[number]

interface ReportArgs {
  file: string
  output: Format
  html?: string
}

export function reportCommand(setExitCode: (code: number) => void): CommandModule<object, ReportArgs> {
  return {
    command: 'report <file>',
    describe: 'print a saved run (results/*.json) again as text, JSON or CSV, or write it as HTML',
    builder: (yargs) =>
      yargs
        .positional('file', { type: 'string', demandOption: true, describe: 'a JSON file written by a run (results/...json)' })
        .option('output', { alias: 'o', choices: FORMATS, default: 'text' as Format, describe: 'format printed to stdout' })
        .option('html', { type: 'string', requiresArg: true, describe: 'also write a self-contained HTML report to this file' }),
    handler: async (argv) => {
      const result = await loadResult(argv.file)
      if (argv.html !== undefined) await writeHtml(result, argv.html)
      process.stdout.write(renderOutput(result, argv.output, process.stdout.isTTY === true && process.env.NO_COLOR === undefined))
      setExitCode(0)
    },
  }
}


async function writeHtml(result: RunResult, out: string): Promise<void> {
  // Loaded on demand: only --html needs the HTML renderer.
  const { renderHtml } = await import('../render/html.js')
  await writeFileAtomic(out, renderHtml([result]), { overwrite: true })
}
