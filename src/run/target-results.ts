/** A mix's targets as the result records them (results/run-result.ts TargetResult): what each sent, and its own phases. */
import type { PhaseName, PhaseResult, TargetResult } from '../results/run-result.js'
import type { ResolvedTarget } from './target-spec.js'

export function targetResults(targets: readonly ResolvedTarget[], phases: ReadonlyArray<Partial<Record<PhaseName, PhaseResult>>>): TargetResult[] {
  return targets.map((t, i) => ({ name: t.name, method: t.method, path: t.path, weight: t.weight, phases: phases[i] ?? {} }))
}
