/**
 * A mix's sweep (--targets): a recommendation per target, each decided by
 * the one frontier (sweep-frontier.ts) over the target's own lanes, and the
 * Envoy route configuration with one route per target (its path and
 * method), each with its own recommended delay.
 */
import { formatMs } from '../core/duration.js'
import { targetSweepView, type SweepResult } from '../results/sweep-result.js'
import { deploySetting, envoyRoutes, type DeployFile, type EnvoyRouteOf } from './deploy-config.js'
import { sweepFrontier, type SweepFrontier } from './sweep-frontier.js'

export interface TargetFrontier {
  name: string
  method: string
  path: string
  frontier: SweepFrontier
}

/** Each target's frontier and recommendation; empty for a sweep of one request. */
export function targetFrontiers(sweep: SweepResult, maxExtraPct?: number): TargetFrontier[] {
  return (sweep.targets ?? []).map((t, i) => ({
    name: t.name,
    method: t.method,
    path: t.path,
    frontier: sweepFrontier(targetSweepView(sweep, i), maxExtraPct),
  }))
}

/** The text report's block: each target's recommended setting, or none, with its sentence. */
export function targetsSweepText(list: readonly TargetFrontier[]): string[] {
  if (list.length === 0) return []
  return [
    '',
    'Per target (each its own frontier, each delay from its own warm-up):',
    ...list.flatMap(({ name, frontier }) => {
      const row = frontier.rows.find((r) => r.label === frontier.recommendation.label)
      const chosen = row
        ? `${row.label} (${formatMs(row.delayMs)}): p99 ${formatMs(frontier.plain.p99.value)} -> ${formatMs(row.p99.value)}, extra load +${row.extraLoadPct.value.toFixed(1)}%`
        : 'no hedging'
      return [`  ${name}: ${chosen}`, `    ${frontier.recommendation.sentence}`]
    }),
  ]
}

/**
 * The Envoy route configuration of a mix: a route per target with a
 * recommended setting (or the `emitFor` setting, --emit-for: each target's
 * lane of it), matching its exact path (without its query) and method, in
 * the file's order; null when no target has one.
 */
export function targetsEnvoyFile(sweep: SweepResult, list: readonly TargetFrontier[], emitFor?: string): DeployFile | null {
  const routes: EnvoyRouteOf[] = list.flatMap(({ name, method, path, frontier }, i) => {
    const label = emitFor ?? frontier.recommendation.label
    const setting = sweep.targets![i]!.settings.find((s) => s.label === label)
    if (!setting) return []
    // The path as the replicas receive it: after the sweep's URL's own path.
    const base = URL.canParse(sweep.run.config.urls[0]!) ? new URL(sweep.run.config.urls[0]!).pathname.replace(/\/$/, '') : ''
    const match = [
      `path: ${JSON.stringify(base + path.split('?')[0])}`,
      'headers:',
      `- name: ":method"`,
      `  string_match: { exact: ${JSON.stringify(method)} }`,
    ]
    return [{ match, setting: deploySetting(sweep, setting), comment: `${name}: setting ${setting.label}, hedge delay ${formatMs(setting.delayMs)}` }]
  })
  if (routes.length === 0) return null
  const header = `hedgebench sweep of ${list.length} targets: a route per target with a recommended setting, each its own hedge delay`
  return { name: 'envoy-route.yaml', text: envoyRoutes(header, routes) }
}
