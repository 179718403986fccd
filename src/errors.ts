/**
 * Errors the CLI turns into exit codes. The library throws these; only
 * `bin/` decides what the process does with them.
 */

/** Bad input from the user: one line on stderr, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError' as const
  readonly exitCode = 2
}

/** The target could not be reached at all before the run started: exit code 1. */
export class TargetUnreachableError extends Error {
  override name = 'TargetUnreachableError' as const
  readonly exitCode = 1
}

/** Exit code an error maps to (1 for anything unexpected). */
export function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError || err instanceof TargetUnreachableError) return err.exitCode
  return 1
}
