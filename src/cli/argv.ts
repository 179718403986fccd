import type { Argv } from 'yargs'
import { UsageError } from '../core/errors.js'
/**
 * Fixes to the raw argument list before yargs reads it. A flag's value that
 * starts with "-" and a digit (`--hedge-delay -5ms`, `-t -1`) is a value,
 * as curl and hey read it, not a bundle of short flags (yargs would report
 * `unknown arguments "5", "s"`): it is joined to its flag (`--hedge-delay=-5ms`)
 * so the flag's own check names the bad value.
 */
const FLAG = /^-{1,2}[A-Za-z][\w-]*$/
const NEGATIVE = /^-\d/

export function joinNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = []
  const end = argv.indexOf('--')
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const prev = out[out.length - 1]
    if ((end === -1 || i < end) && NEGATIVE.test(arg) && prev !== undefined && FLAG.test(prev)) out[out.length - 1] = `${prev}=${arg}`
    else out.push(arg)
  }
  return out
}

/**
 * Every string flag of a command must have a value: `--html` or `-d` last on
 * the line would otherwise read as an empty string and be ignored without a
 * word. yargs then fails with "Not enough arguments following: html", which
 * main reports as "--html needs a value". Positionals (URLs, files) are not
 * flags. Call it after the command's options are declared.
 */
export function valuesRequired<T>(y: Argv<T>): Argv<T> {
  const options = (y as unknown as { getOptions(): unknown }).getOptions() as { string: string[]; array: string[]; config?: Record<string, unknown> }
  const positional = new Set(options.array)
  const keys = [...options.string.filter((k) => !positional.has(k)), ...Object.keys(options.config ?? {})]
  return keys.length === 0 ? y : y.requiresArg(keys)
}

/**
 * `--parallel=yes`: yargs reads any value but "true" as false, so a switch
 * given a value would be silently off (a run believed to hedge in parallel
 * that did not). A switch takes `=true`, `=false` or nothing.
 */
export function assertSwitchValues(argv: readonly string[], switches: readonly string[]): void {
  const known = new Set(switches)
  for (const token of argv) {
    if (token === '--') return
    const m = /^--(?:no-)?([\w-]+)=([\s\S]*)$/.exec(token)
    if (!m || !known.has(m[1]!) || m[2] === 'true' || m[2] === 'false') continue
    throw new UsageError(`--${m[1]} is a switch and takes no value (got "${m[2]}"): give --${m[1]} or --no-${m[1]}`)
  }
}
