/**
 * How gates end a command that judges a comparison (`compare`, `watch`):
 * one stderr line per gate and run, which way it went and why, then the
 * exit code. A run's own gates (run-command.ts) say the same in their words.
 */
import { INCONCLUSIVE_EXIT_CODE } from '../core/errors.js'
import type { FailCheck } from '../report/fail-if.js'
import { writeStderrLine } from './output.js'

/**
 * INCONCLUSIVE_EXIT_CODE when the runs cannot answer (one line each why),
 * else 1 when a gate holds or one could not be judged (fails closed unless
 * --allow-unjudged), else 0.
 */
export function gateExitCode(checks: FailCheck[], inconclusive: string[], allowUnjudged: boolean): number {
  const say = (line: string): void => writeStderrLine(`hedgebench: ${line}`)
  for (const check of checks) for (const line of check.lines) say(`--fail-if ${JSON.stringify(check.condition.text)} ${line}`)
  const unjudged = checks.some((c) => c.unchecked.length > 0)
  if (inconclusive.length > 0) {
    for (const why of inconclusive) say(`gates inconclusive (exit ${INCONCLUSIVE_EXIT_CODE}): ${why}`)
    return INCONCLUSIVE_EXIT_CODE
  }
  if (unjudged && !allowUnjudged) say('a gate could not be judged: failing closed (--allow-unjudged lets it pass)')
  return checks.some((c) => c.holds) || (unjudged && !allowUnjudged) ? 1 : 0
}

/** The --allow-unjudged flag, as every command with gates declares it. */
export const ALLOW_UNJUDGED_OPTION = {
  type: 'boolean',
  describe: 'let a --fail-if change that cannot be judged (too few requests for its percentile) pass; by default it fails closed (exit 1)',
} as const
