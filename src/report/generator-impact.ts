/**
 * Could the load generator's own delay have changed the answer? Its event
 * loop running late delays every hedge timer and every answer it reads by
 * up to that much, in both phases. That matters only when the delay is a
 * meaningful share both of the hedge delay (hedges fired noticeably later
 * than set) and of the tail difference the run measured (the difference
 * could be off by that share). A generator late by 0.9 ms beside a 14.8 ms
 * delay and a 960 ms difference changed nothing, and says nothing.
 */
import { formatMs } from '../core/duration.js'
import { LOOP_DELAY_SHARE } from '../stats/generator-monitor.js'
import type { PhaseResult } from '../results/run-result.js'

/** The phase compared against and the later (usually hedged) one; null when the generator's delay cannot have mattered. */
/** What the check reads of a phase (a grpc-js phase has a generator only in results saved since it was measured). */
export type ImpactPhase = Pick<PhaseResult, 'latencyMs'> & { hedging?: { delayMs: number }; generator?: Pick<PhaseResult['generator'], 'eventLoopDelayMs'> }

export function generatorImpact(before: ImpactPhase, after: ImpactPhase): string | null {
  return loopImpact([before, after], before, after)
}

/**
 * The same check with only `owners`' event loops as the lateness: a compare
 * of several runs says it of the run whose generator ran late, never of the
 * run it was compared with.
 */
export function loopImpact(owners: ImpactPhase[], before: ImpactPhase, after: ImpactPhase): string | null {
  const hedging = after.hedging ?? before.hedging
  const loops = owners.flatMap((p) => (p.generator ? [p.generator.eventLoopDelayMs] : [])).filter((l) => l.samples !== 0)
  if (!hedging || hedging.delayMs <= 0 || loops.length === 0) return null
  const late = Math.max(...loops.map((l) => l.p99))
  const difference = Math.abs(after.latencyMs.p99 - before.latencyMs.p99)
  const ofDelay = late / hedging.delayMs
  const ofDifference = difference > 0 ? late / difference : Infinity
  if (ofDelay < LOOP_DELAY_SHARE || ofDifference < LOOP_DELAY_SHARE) return null
  const share = (x: number): string => (Number.isFinite(x) ? `${Math.round(100 * x)} %` : 'all')
  return (
    `the generator's own event loop ran late (p99 ${formatMs(late)}): ${share(ofDelay)} of the ${formatMs(hedging.delayMs)} hedge delay ` +
    `and ${share(ofDifference)} of the ${formatMs(difference)} p99 difference, so hedges fired up to ${formatMs(late)} late and the difference may be off by as much`
  )
}
