/**
 * The CLI: a thin yargs layer over the library. Each command lives in its
 * own file and returns an exit code; this is the only place that touches
 * process.exitCode.
 */
import yargs from 'yargs'
import { hideBin } from 'yargs/helpers'
import { exitCodeOf } from '../errors.js'
import { runCommand } from './run-command.js'
import { reportCommand } from './report-command.js'
import { compareCommand } from './compare-command.js'
import { serveCommand } from './serve-command.js'
import { demoCommand } from './demo-command.js'

export async function main(argv: string[] = hideBin(process.argv)): Promise<number> {
  let code = 0
  const parser = yargs(argv)
    .scriptName('hedgebench')
    .command(runCommand((c) => (code = c)))
    .command(reportCommand((c) => (code = c)))
    .command(compareCommand((c) => (code = c)))
    .command(serveCommand((c) => (code = c)))
    .command(demoCommand((c) => (code = c)))
    .strict()
    .help()
    .alias('help', 'h')
    .version(false)
    .wrap(Math.min(110, process.stdout.columns || 100))
    .fail((msg, err) => {
      throw err ?? new CliUsage(msg)
    })
  try {
    await parser.parseAsync()
  } catch (err) {
    process.stderr.write(`hedgebench: ${oneLine(err)}\n`)
    return err instanceof CliUsage ? 2 : exitCodeOf(err)
  }
  return code
}

class CliUsage extends Error {}

function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err)
  // yargs puts the bad value and the choices on separate lines: keep them, on one line.
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' ')
}
