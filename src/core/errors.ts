/**
 * Errors the CLI turns into exit codes. The library throws these; only
 * `bin/` decides what the process does with them.
 */

/**
 * Bad input from the user: one line on stderr, exit code 2. The message is
 * one line by construction: a bad value quoted in it may hold line breaks
 * (\n, \r, U+2028 ...) or other control characters, which are shown escaped.
 */
export class UsageError extends Error {
  override name = 'UsageError' as const
  readonly exitCode = 2

  constructor(message: string, options?: ErrorOptions) {
    super(oneLineMessage(message), options)
  }
}

const ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\0': '\\0' }

/** Control characters (but tab) and Unicode line/paragraph separators, escaped. */
function oneLineMessage(text: string): string {
  return String(text).replace(/[\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]/g, (ch) => ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** The target could not be reached at all before the run started: exit code 1. */
export class TargetUnreachableError extends Error {
  override name = 'TargetUnreachableError' as const
  readonly exitCode = 1
}

/**
 * Exit code of gates (--fail-if, --fail-on-errors) that could not be
 * answered either way: a generator that was saturated measured itself, and
 * runs that are not comparable measured different experiments. Distinct from
 * 1 (a gate failed) so that CI can tell "worse" from "unknown"; the same in
 * `compare` and in a run's own gates.
 */
export const INCONCLUSIVE_EXIT_CODE = 3

/** Exit code an error maps to (1 for anything unexpected). */
export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError || err instanceof TargetUnreachableError) return err.exitCode
  return 1
}
