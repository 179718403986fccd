/**
 * What an interrupted run must not hide, in words every renderer uses (text
 * and HTML): that it is partial, and the requests hedgebench aborted at the
 * stop, with how long the hung ones had been in flight; and the requests
 * that failed on the generator's own machine (EMFILE), which are no more
 * the target's doing than an aborted one.
 */
import { formatMs, formatThreshold } from '../core/duration.js'
import type { PhaseResult, RunResult } from '../results/run-result.js'

/** "PARTIAL: interrupted during plain; figures cover what finished before the stop", or null for a complete run. */
export function partialText(result: RunResult): string | null {
  return result.partial ? `PARTIAL: interrupted during ${result.stoppedIn ?? 'the run'}; figures cover what finished before the stop` : null
}

/** "10 requests aborted by hedgebench after the stop (...); 10 had been in flight over the 1 s slow threshold, the longest 7.09 s", or null. */
export function interruptedText(p: PhaseResult): string | null {
  if (!p.interrupted) return null
  return `${p.interrupted} requests aborted by hedgebench after the stop (not errors; outside every figure above and below)${inFlightText(p)}`
}

/** "; 4 had been in flight over the 1 s slow threshold, the longest 3.52 s": requests a stalled target held, which no latency figure shows. */
export function inFlightText(p: PhaseResult): string {
  if (!p.interruptedSlow || p.interruptedMaxMs === undefined) return ''
  return `; ${p.interruptedSlow} had been in flight over the ${formatThreshold(p.slow.thresholdMs)} slow threshold, the longest ${formatMs(p.interruptedMaxMs)}`
}

const LOCAL_FAILURE_WHY: Record<string, string> = {
  EMFILE: "the process's open-file limit: raise it with `ulimit -n` before the run",
  ENFILE: "the system's open-file limit",
  EADDRNOTAVAIL: 'no local port left to connect from',
}

/** "12 requests failed on this machine before reaching the target (EMFILE 12: ...)": the generator's failures, not the target's, or null. */
export function generatorFailuresText(p: PhaseResult): string | null {
  const entries = Object.entries(p.generatorFailures ?? {})
  if (entries.length === 0) return null
  const total = entries.reduce((n, [, count]) => n + count, 0)
  const kinds = entries.map(([code, count]) => `${code} ${count}${LOCAL_FAILURE_WHY[code] ? `: ${LOCAL_FAILURE_WHY[code]}` : ''}`).join('; ')
  return `${total} requests failed on this machine before reaching the target (${kinds}); not target errors, outside every figure above and below`
}
