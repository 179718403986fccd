/**
 * The CLI: a thin yargs layer over the library. Each command lives in its
 * own file and returns an exit code; this is the only place that touches
 * process.exitCode.
 */
import { readFileSync } from 'node:fs'
import yargs, { type Argv } from 'yargs'
import { hideBin } from 'yargs/helpers'
import { exitCodeOf } from '../core/errors.js'
import { VERSION } from '../core/version.js'
import { runCommand } from './run-command.js'
import { reportCommand } from './report-command.js'
import { compareCommand } from './compare-command.js'
import { serveCommand } from './serve-command.js'
import { demoCommand } from './demo-command.js'
import { assertSwitchValues, joinNegativeValues } from './argv.js'
import { assertNoRepeats } from './run-flags.js'
import { mergeCommand } from './merge-command.js'
import { type DeclaredOptions, flagName, nearestFlag } from './nearest-flag.js'
import { sweepCommand } from './sweep-command.js'
import { watchCommand } from './watch-command.js'
import { stdoutFailed, tolerateClosedStdout } from './output.js'

export async function main(argv: string[] = hideBin(process.argv)): Promise<number> {
  let code = 0
  tolerateClosedStdout()
  argv = joinNegativeValues(argv)
  const parser = (yargs(argv) as unknown as WithUsageConfig)
    .usageConfiguration({ 'hide-types': true })
    .scriptName('hedgebench')
    .command(runCommand((c) => (code = c)))
    .command(reportCommand((c) => (code = c)))
    .command(compareCommand((c) => (code = c)))
    .command(serveCommand((c) => (code = c)))
    .command(demoCommand((c) => (code = c)))
    .command(mergeCommand((c) => (code = c)))
    .command(sweepCommand((c) => (code = c)))
    .command(watchCommand((c) => (code = c)))
    .strict()
    // A switch given a value is refused, not read as off (argv.ts).
    // A flag given twice is refused in every command, not only in a run (report -o json -o csv printed text).
    .check((parsed, options) => {
      assertSwitchValues(argv, (options as { boolean?: string[] }).boolean ?? [])
      assertNoRepeats(parsed as Record<string, unknown>)
      return true
    }, true)
    // `hedgebench -- URL`: what follows `--` is never a flag; the run command reads it as URLs.
    .parserConfiguration({ 'populate--': true })
    .help()
    .alias('help', 'h')
    .version(VERSION)
    .alias('version', 'V')
    // 80 columns whatever the terminal, as hey and curl: the help reads the same
    // in a pipe, a log and a wide window. Types are left out (see above).
    .wrap(HELP_WIDTH)
    .fail((msg, err) => {
      // The command's own options (yargs resets the instance to them when it enters a command): what a misspelt flag is matched against.
      const options = (parser as unknown as { getOptions(): DeclaredOptions }).getOptions()
      // yargs' own parse errors (a flag without its value, a bad --config file) arrive as err, not msg: still usage errors.
      if (err?.name === 'YError') throw new CliUsage(usageMessage(err.message, argv, options))
      throw err ?? new CliUsage(usageMessage(msg, argv, options))
    })
  try {
    await parser.parseAsync()
  } catch (err) {
    process.stderr.write(`hedgebench: ${oneLine(err)}\n`)
    return err instanceof CliUsage ? 2 : exitCodeOf(err)
  }
  // The output the command was run for was lost (a full disk): not a success, even if the run was saved.
  // Its write error is reported after the writes before it have been tried: wait for them.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()))
  return code === 0 && stdoutFailed() ? 1 : code
}

/**
 * yargs 17.7+ and 18 have usageConfiguration, @types/yargs 17 does not yet.
 * 'hide-types' leaves out [string] and friends (every value is a string or a
 * switch); choices and defaults are written in the descriptions instead.
 */
type WithUsageConfig = Argv & { usageConfiguration(config: { 'hide-types': boolean }): Argv }

/** The width --help fits in. */
export const HELP_WIDTH = 80

class CliUsage extends Error {}

/**
 * yargs' own messages, reworded to name the flag as typed and what is valid:
 * `Invalid values: Argument: mode, Given: "fast", Choices: ...` and
 * `Unknown arguments: bogus-flag, bogusFlag` (it lists the camelCase twin too).
 */
function usageMessage(msg: string, argv: string[], options: DeclaredOptions): string {
  const text = msg.replace(/\s*\n\s*/g, ' ').trim()
  const invalid = /^Invalid values: Argument: ([\w-]+), Given: (".*?"|\S+), Choices: (.*)$/.exec(text)
  if (invalid) {
    const choices = invalid[3]!.split(/,\s*/).map((c) => c.replace(/^"|"$/g, ''))
    return `invalid ${flagName(invalid[1]!)} ${invalid[2]} (choose one of: ${choices.join(', ')})`
  }
  const unknown = /^Unknown arguments?: (.*)$/.exec(text)
  if (unknown) {
    const names = unknown[1]!.split(/,\s*/)
    const typed = names.filter((n) => !names.some((o) => o !== n && o.includes('-') && camel(o) === n))
    return unknownMessage(
      typed.map((n) => asTyped(n, argv)),
      options,
    )
  }
  // `serve --profil pi`: the required flag is missing because it was misspelt; the misspelling is what to fix.
  const misspelt = /^Missing required arguments?:/.test(text) ? undeclaredFlags(argv, options).filter((f) => nearestFlag(f, options)) : []
  if (misspelt.length > 0) return unknownMessage(misspelt, options)
  const noValue = /^Not enough arguments following: ([\w-]+)$/.exec(text)
  if (noValue) return `${flagName(noValue[1]!)} needs a value`
  const config = /^Invalid JSON config file: (.*)$/.exec(text)
  if (config) return configMessage(config[1]!)
  if (/^Not enough non-option arguments/.test(text)) {
    if (argv.includes('compare'))
      return 'compare needs one or more saved runs: hedgebench compare BEFORE.json [AFTER.json ...] (one file compares its own plain and hedged phases)'
    if (argv.includes('report')) return 'report needs a saved run: hedgebench report results/FILE.json'
  }
  return text
}

/** yargs says "Invalid JSON config file" for a missing or unreadable file too (and "true" for a bare --config): say which. */
function configMessage(path: string): string {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    return `cannot read --config "${path}": ${e.code === 'ENOENT' ? 'no such file (ENOENT)' : (e.code ?? e.message)}`
  }
  try {
    JSON.parse(text)
    return `invalid --config "${path}"`
  } catch (err) {
    return `--config "${path}" is not valid JSON: ${(err as Error).message}`
  }
}

/**
 * One line for flags the command does not take, each with the nearest valid
 * one when one is close: `unknown option --hedge-dealy; did you mean --hedge-delay?`.
 */
function unknownMessage(shown: string[], options: DeclaredOptions): string {
  const hints = shown.map((s) => (s.startsWith('-') ? nearestFlag(s, options) : undefined))
  if (shown.length === 1 && hints[0] !== undefined) return `unknown option ${shown[0]}; did you mean ${hints[0]}?`
  const listed = shown.map((s, i) => (hints[i] === undefined ? s : `${s} (did you mean ${hints[i]}?)`))
  return `unknown ${shown.length > 1 ? 'arguments' : 'argument'} ${listed.join(', ')} (see hedgebench --help for the valid options)`
}

/** A name yargs calls unknown, as it was typed: `--name`, `-n`, `--no-name` (yargs reports `name`), or quoted when not a flag. */
function asTyped(name: string, argv: string[]): string {
  const typed = [flagName(name), `--no-${name}`].find((f) => argv.some((a) => a === f || a.startsWith(`${f}=`)))
  return typed ?? `"${name}"`
}

/** The long flags on the line (before `--`) that the command does not declare, as typed. */
function undeclaredFlags(argv: string[], options: DeclaredOptions): string[] {
  const known = new Set(Object.keys(options.key).flatMap((k) => [k, camel(k)]))
  for (const b of options.boolean) known.add(`no-${b}`)
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).flatMap((a) => {
    const m = /^--([A-Za-z][\w-]*)(?:=|$)/.exec(a)
    return m && !known.has(m[1]!) ? [`--${m[1]}`] : []
  })
}

const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())

function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err)
  // yargs puts the bad value and the choices on separate lines: keep them, on one line.
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' ')
}
