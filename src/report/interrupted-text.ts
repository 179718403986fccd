/**
 * What an interrupted run must not hide, in words every renderer uses (text
 * and HTML): that it is partial, and the requests hedgebench aborted at the
 * stop, with how long the hung ones had been in flight.
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
