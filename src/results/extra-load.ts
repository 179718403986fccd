/**
 * Extra load, one definition everywhere (the hedging section, the plain vs
 * hedged table, the verdict, compare, CSV, HTML, the demo): attempts put on
 * the wire per logical call, minus one, in percent. A call is a request, or
 * one fan-out call with --fanout (each is hedged on its own). Under -z the
 * phases differ in size, so the change in attempts between them is not the
 * extra load; this ratio is.
 */
import type { PhaseResult } from './run-result.js'

/** attempts / calls - 1, in percent, rounded to 0.001; 0 without calls. */
export function extraLoadPctOf(attempts: number, calls: number): number {
  return calls > 0 ? Math.round((attempts / calls - 1) * 100 * 1000) / 1000 : 0
}

/** Extra load of a phase, %; a phase without hedging still has one (normally 0). */
export function extraLoadPct(phase: PhaseResult): number {
  return extraLoadPctOf(phase.attempts, phase.calls?.requests ?? phase.requests)
}
