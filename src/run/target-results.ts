/** A mix's targets as the result records them (results/run-result.ts TargetResult): what each sent, its own phases, the server's count of its path. */
import type { PhaseName, PhaseResult, TargetResult, TargetServerCount } from '../results/run-result.js'
import type { ResolvedTarget } from './target-spec.js'

export function targetResults(
  targets: readonly ResolvedTarget[],
  measured: ReadonlyArray<{ phases: Partial<Record<PhaseName, PhaseResult>>; server: TargetServerCount[] }>,
): TargetResult[] {
  return targets.map((t, i) => {
    const own = measured[i]
    return {
      name: t.name,
      method: t.method,
      path: t.path,
      weight: t.weight,
      ...(t.repeatable ? {} : { sentOnce: true }),
      phases: own?.phases ?? {},
      ...(own && own.server.length > 0 ? { server: own.server } : {}),
    }
  })
}
