/**
 * `--max-result-size MB`, for the commands that read saved results
 * (report, compare, merge): a result file over the limit is refused by its
 * size before it is read (results/result-size.ts), and this raises it.
 */
import { UsageError } from '../core/errors.js'
import { DEFAULT_MAX_RESULT_MB } from '../results/result-size.js'

export const MAX_RESULT_SIZE_OPTION = {
  type: 'number',
  requiresArg: true,
  describe: `refuse a result file larger than this many MB (1 MB = 1,048,576 bytes) [default: ${DEFAULT_MAX_RESULT_MB}]`,
} as const

/** The limit in MB: the default, or the flag's positive number. */
export function maxResultMb(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_RESULT_MB
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`--max-result-size needs a number of MB above 0 (the default is ${DEFAULT_MAX_RESULT_MB})`)
  return value
}
