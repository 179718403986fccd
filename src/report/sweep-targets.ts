/**
 * A mix's sweep (--targets): a recommendation per target, each decided by
 * the one frontier (sweep-frontier.ts) over the target's own lanes, and the
 * Envoy route configuration with one route per target (its path and
 * method), each with its own recommended delay; a mix of gRPC methods also
 * the gRPC service config with one methodConfig per method.
 */
import { formatMs } from '../core/duration.js'
import { formatTable } from './table.js'
import { TARGET_HEADER, targetCells, targetRow, type TargetRow } from './target-rows.js'
import { targetSweepView, type SweepResult, type SweepSetting } from '../results/sweep-result.js'
import { deploySetting, envoyRoutes, grpcFiles, type DeployFile, type DeploySetting, type MethodSetting } from './deploy-config.js'
import { sweepFrontier, type SweepFrontier } from './sweep-frontier.js'

export interface TargetFrontier {
  name: string
  method: string
  path: string
  /** A write the sweep sent once (never hedged): its frontier compares lanes that did not hedge. */
  sentOnce?: boolean
  frontier: SweepFrontier
}

/** Each target's frontier and recommendation; empty for a sweep of one request. */
export function targetFrontiers(sweep: SweepResult, maxExtraPct?: number): TargetFrontier[] {
  return (sweep.targets ?? []).map((t, i) => ({
    name: t.name,
    method: t.method,
    path: t.path,
    ...(sweep.run.targets?.[i]?.sentOnce ? { sentOnce: true } : {}),
    frontier: sweepFrontier(targetSweepView(sweep, i), maxExtraPct),
  }))
}

/** A target's plain lane and its recommended setting's lane (none when it has no recommendation or was sent once), as rows of target-rows.ts: what the text and HTML show of each target. */
export function targetChoiceRows(sweep: SweepResult, list: readonly TargetFrontier[]): TargetRow[] {
  return list.flatMap(({ name, frontier, sentOnce }, i) => {
    const own = sweep.run.targets?.[i]
    const plain = own?.phases.plain
    const weight = own?.weight ?? 1
    const chosen = sentOnce ? undefined : sweep.targets?.[i]?.settings.find((s) => s.label === frontier.recommendation.label)
    return [...(plain ? [targetRow(name, weight, 'none', plain)] : []), ...(chosen ? [targetRow(name, weight, chosen.label, chosen.hedged)] : [])]
  })
}

/** The rows' header: the lane is `none` (no hedging) or the recommended setting. */
export const TARGET_CHOICE_HEADER = TARGET_HEADER.map((h) => (h === 'phase' ? 'setting' : h))

/** Each target's recommendation in words: the frontier's sentence, or why a write has none. */
export function targetSentences(list: readonly TargetFrontier[]): Array<{ name: string; sentence: string }> {
  return list.map(({ name, frontier, sentOnce }) => ({
    name,
    sentence: sentOnce ? 'sent once, never hedged (a write: --idempotency-key or --unsafe-hedge would let it be)' : frontier.recommendation.sentence,
  }))
}

/** The text report's block: each target without hedging and at its recommended setting, then each recommendation in words. */
export function targetsSweepText(sweep: SweepResult, list: readonly TargetFrontier[]): string[] {
  if (list.length === 0) return []
  const table = formatTable([TARGET_CHOICE_HEADER, ...targetChoiceRows(sweep, list).map(targetCells)], ['left', 'right', 'left'])
  return [
    '',
    'Per target (each its own frontier, each delay from its own warm-up; setting none: its plain lane):',
    ...table.map((l) => `  ${l}`),
    '',
    ...targetSentences(list).map(({ name, sentence }) => `  ${name}: ${sentence}`),
  ]
}

/** Each target with the setting it is deployed at: its recommendation, or its lane of `emitFor` (--emit-for); targets without one, writes the sweep sent once (never hedged) and targets whose delay was not measured (unmeasuredNotes) left out. */
function targetSettings(
  sweep: SweepResult,
  list: readonly TargetFrontier[],
  emitFor?: string,
): Array<TargetFrontier & { index: number; setting: DeploySetting }> {
  return list.flatMap((t, index) => {
    if (sweep.run.targets?.[index]?.sentOnce) return []
    const setting = ownSetting(sweep, t, index, emitFor)
    return setting && !unmeasured(sweep, index, setting) ? [{ ...t, index, setting: deploySetting(sweep, setting) }] : []
  })
}

function ownSetting(sweep: SweepResult, t: TargetFrontier, index: number, emitFor?: string): SweepSetting | undefined {
  const label = emitFor ?? t.frontier.recommendation.label
  return sweep.targets![index]!.settings.find((s) => s.label === label)
}

/** A delay taken from a warm-up percentile whose warm-up had no successful answer: the run's 1 s fallback, not a measurement to deploy. */
function unmeasured(sweep: SweepResult, index: number, setting: SweepSetting): boolean {
  const warmup = sweep.run.targets?.[index]?.phases.warmup
  return setting.percentile !== null && warmup !== undefined && warmup.ok === 0
}

/** Why a target with a setting to deploy gets no route or methodConfig: its warm-up had no successful answer to take the delay from. */
export function unmeasuredNotes(sweep: SweepResult, list: readonly TargetFrontier[], emitFor?: string): string[] {
  return list.flatMap((t, index) => {
    if (sweep.run.targets?.[index]?.sentOnce) return []
    const setting = ownSetting(sweep, t, index, emitFor)
    return setting && unmeasured(sweep, index, setting)
      ? [`${t.name}: nothing emitted for it: its warm-up had no successful answer to take the ${setting.label} delay from (it ran with a 1 s fallback)`]
      : []
  })
}

/**
 * The Envoy route configuration of a mix: a route per distinct match (the
 * path without its query, and the method) of the targets with a
 * recommended setting (or the `emitFor` setting, --emit-for: each target's
 * lane of it), in the file's order; null when no target has one. Targets
 * that share a match share its route, at the first one's setting (Envoy
 * takes the first route that matches: a second would never be used). A
 * gRPC method's route matches its path alone (every call is a POST).
 * `notes`: lines said at the top (unmeasuredNotes).
 */
export function targetsEnvoyFile(sweep: SweepResult, list: readonly TargetFrontier[], emitFor?: string, notes: readonly string[] = []): DeployFile | null {
  const routes = [...routeGroups(sweep, list, emitFor).values()].map(({ match, served }) => {
    const first = served[0]!
    const shared =
      served.length > 1
        ? ` (also serves ${served
            .slice(1)
            .map((t) => `${t.name} at ${t.setting.label}`)
            .join(', ')}: one route per path and method, the first target's setting)`
        : ''
    return { match, setting: first.setting, comment: `${first.name}: setting ${first.setting.label}, hedge delay ${formatMs(first.setting.delayMs)}${shared}` }
  })
  if (routes.length === 0) return null
  const header = `hedgebench sweep of ${list.length} targets: a route per target with a recommended setting, each its own hedge delay`
  return { name: 'envoy-route.yaml', text: envoyRoutes(header, routes, notes) }
}

/** The targets with a setting, grouped by the route that matches them (its match lines as the key), in the file's order. */
function routeGroups(
  sweep: SweepResult,
  list: readonly TargetFrontier[],
  emitFor?: string,
): Map<string, { match: string[]; served: Array<{ name: string; setting: DeploySetting }> }> {
  const grpc = sweep.run.config.grpc !== undefined
  // The path as the replicas receive it: after the sweep's URL's own path (a gRPC replica has none).
  const base = !grpc && URL.canParse(sweep.run.config.urls[0]!) ? new URL(sweep.run.config.urls[0]!).pathname.replace(/\/$/, '') : ''
  const groups = new Map<string, { match: string[]; served: Array<{ name: string; setting: DeploySetting }> }>()
  for (const { name, method, path, setting } of targetSettings(sweep, list, emitFor)) {
    const exact = `path: ${JSON.stringify(base + path.split('?')[0])}`
    const match = grpc ? [exact] : [exact, 'headers:', `- name: ":method"`, `  string_match: { exact: ${JSON.stringify(method)} }`]
    const key = match.join('\n')
    const group = groups.get(key) ?? { match, served: [] }
    group.served.push({ name, setting })
    groups.set(key, group)
  }
  return groups
}

/** A warning per Envoy route that serves more than one target: the targets after the first are deployed at the first's setting. */
export function sharedRouteWarnings(sweep: SweepResult, list: readonly TargetFrontier[], emitFor?: string): string[] {
  return [...routeGroups(sweep, list, emitFor).values()]
    .filter((g) => g.served.length > 1)
    .map(({ served }) => {
      const [first, ...rest] = served
      return `${served.map((t) => t.name).join(', ')}: one Envoy route (same path without the query, same method), at ${first!.name}'s setting ${first!.setting.label}; ${rest.map((t) => `${t.name}'s ${t.setting.label}`).join(', ')} not deployed`
    })
}

/**
 * A mix of gRPC methods: each method with its setting, from the first
 * target (in the file's order) that calls it and has one; `target` is that
 * target's index (what --verify sends).
 */
export function targetMethods(sweep: SweepResult, list: readonly TargetFrontier[], emitFor?: string): Array<MethodSetting & { target: number }> {
  const byCall = new Map<string, MethodSetting & { target: number }>()
  for (const { path, index, setting } of targetSettings(sweep, list, emitFor))
    if (!byCall.has(path)) byCall.set(path, { call: path.slice(1), setting, target: index })
  return [...byCall.values()]
}

/** The gRPC service config of a mix of methods (one methodConfig per method, each its own delay) and its notes; none when no method has a setting. */
export function targetsGrpcFiles(methods: readonly MethodSetting[], targets: number, notes: readonly string[] = []): DeployFile[] {
  if (methods.length === 0) return []
  return grpcFiles(`hedgebench sweep of ${targets} targets: a methodConfig per method with a recommended setting, each its own hedge delay`, methods, notes)
}
