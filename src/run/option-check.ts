/**
 * The library's `run(options)` checks its caller's value before anything
 * else: what the CLI's flags cannot get wrong (a string for a number, a
 * misspelt option, a header object instead of pairs) is refused here with
 * the option's own name, rather than as a TypeError from deep inside or a
 * message about a CLI flag the caller never used. The options' shape is
 * RunOptionsSchema (run-options.ts), which also declares their types.
 * Values are then checked by resolve-options.ts, as the CLI's are.
 */
import { UsageError } from '../core/errors.js'
import { problemWith } from '../core/schema.js'
import { type RunOptions, RunOptionsSchema } from './run-options.js'

export function checkRunOptions(options: unknown): asserts options is RunOptions {
  const problem = problemWith(RunOptionsSchema, options)
  if (problem !== null) throw new UsageError(`run(options): ${problem}`)
}
