/**
 * Extra load, one definition everywhere (the hedging section, the plain vs
 * hedged table, the verdict, compare, CSV, HTML, the demo): the copies
 * hedging added, i.e. hedges that reached the wire, per logical call, in
 * percent. A call is a request, or one fan-out call with --fanout (each is
 * hedged on its own). Under -z the phases differ in size, so the change in
 * attempts between them is not the extra load; this ratio is.
 *
 * Not attempts / calls - 1: an original refused before it reached the wire
 * (a dead replica) is a call without an attempt, and that formula then went
 * negative although hedges were sent. A hedge is counted where an attempt
 * is (its headers about to be written), so this never is.
 */
import type { PhaseResult } from './run-result.js'

/** hedges sent / calls, in percent, rounded to 0.001; 0 without calls. */
export function extraLoadPctOf(hedgesSent: number, calls: number): number {
  return calls > 0 ? Math.round((hedgesSent / calls) * 100 * 1000) / 1000 : 0
}

/** Extra load of a phase, %; a phase without hedging adds no copies (0). */
export function extraLoadPct(phase: Pick<PhaseResult, 'requests' | 'calls'> & { hedging?: { hedgesSent: number } }): number {
  return extraLoadPctOf(phase.hedging?.hedgesSent ?? 0, phase.calls?.requests ?? phase.requests)
}
