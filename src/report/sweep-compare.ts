/**
 * Two saved sweeps of the same settings, lane by lane: the plain lane of one
 * against the other's, and each setting's against the same setting's, with
 * compare.ts's noise verdict per metric (the sweeps are two runs of each
 * lane). Pure: the renderers (sweep-compare-render.ts) print what moved.
 */
import { UsageError } from '../core/errors.js'
import { settingRun, type SweepResult } from '../results/sweep-result.js'
import { compareRuns, type Comparison } from './compare.js'

export interface SweepLaneComparison {
  /** "no hedging" for the plain lane, else the setting's label. */
  lane: string
  comparison: Comparison
}

export interface SweepComparison {
  kind: 'sweeps'
  /** The two sweeps' names: their labels when they tell them apart, else the file names. */
  names: [string, string]
  lanes: SweepLaneComparison[]
}

export const PLAIN_LANE = 'no hedging'

export function compareSweeps(a: { name: string; sweep: SweepResult }, b: { name: string; sweep: SweepResult }): SweepComparison {
  const labels = (s: SweepResult): string[] => s.settings.map((x) => x.label)
  const [la, lb] = [labels(a.sweep), labels(b.sweep)]
  if (la.length !== lb.length || la.some((l) => !lb.includes(l)))
    throw new UsageError(
      `the sweeps tried different settings (${a.name}: ${la.join(', ') || 'none'}; ${b.name}: ${lb.join(', ') || 'none'}): compare needs the same ones`,
    )
  const names = sweepNames(a, b)
  const lane = (name: string, sa: SweepResult['run'], sb: SweepResult['run'], phase: 'plain' | 'hedged'): SweepLaneComparison => ({
    lane: name,
    comparison: compareRuns(
      [
        { name: names[0], result: sa },
        { name: names[1], result: sb },
      ],
      { phase },
    ),
  })
  const lanes = [
    ...(a.sweep.run.phases.plain && b.sweep.run.phases.plain ? [lane(PLAIN_LANE, a.sweep.run, b.sweep.run, 'plain')] : []),
    ...a.sweep.settings.map((s) => lane(s.label, settingRun(a.sweep, s), settingRun(b.sweep, b.sweep.settings.find((x) => x.label === s.label)!), 'hedged')),
  ]
  return { kind: 'sweeps', names, lanes }
}

/** Labels when both sweeps have one of their own and they differ; else the file names as given. */
function sweepNames(a: { name: string; sweep: SweepResult }, b: { name: string; sweep: SweepResult }): [string, string] {
  const own = (s: SweepResult): string | null => (s.run.label === '' || s.run.label === 'run' ? null : s.run.label)
  const [x, y] = [own(a.sweep), own(b.sweep)]
  return x !== null && y !== null && x !== y ? [x, y] : [a.name, b.name]
}
