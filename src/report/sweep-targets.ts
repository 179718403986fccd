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
import { targetSweepView, type SweepResult } from '../results/sweep-result.js'
import { deploySetting, envoyRoutes, grpcFiles, type DeployFile, type DeploySetting, type EnvoyRouteOf, type MethodSetting } from './deploy-config.js'
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

/** Each target with the setting it is deployed at: its recommendation, or its lane of `emitFor` (--emit-for); targets without one, and writes the sweep sent once (never hedged), left out. */
function targetSettings(
  sweep: SweepResult,
  list: readonly TargetFrontier[],
  emitFor?: string,
): Array<TargetFrontier & { index: number; setting: DeploySetting }> {
  return list.flatMap((t, index) => {
    if (sweep.run.targets?.[index]?.sentOnce) return []
    const label = emitFor ?? t.frontier.recommendation.label
    const setting = sweep.targets![index]!.settings.find((s) => s.label === label)
    return setting ? [{ ...t, index, setting: deploySetting(sweep, setting) }] : []
  })
}

/**
 * The Envoy route configuration of a mix: a route per target with a
 * recommended setting (or the `emitFor` setting, --emit-for: each target's
 * lane of it), matching its exact path (without its query) and method, in
 * the file's order; null when no target has one. A gRPC method's route
 * matches its path alone (every call is a POST).
 */
export function targetsEnvoyFile(sweep: SweepResult, list: readonly TargetFrontier[], emitFor?: string): DeployFile | null {
  const grpc = sweep.run.config.grpc !== undefined
  // The path as the replicas receive it: after the sweep's URL's own path (a gRPC replica has none).
  const base = !grpc && URL.canParse(sweep.run.config.urls[0]!) ? new URL(sweep.run.config.urls[0]!).pathname.replace(/\/$/, '') : ''
  const routes: EnvoyRouteOf[] = targetSettings(sweep, list, emitFor).map(({ name, method, path, setting }) => {
    const exact = `path: ${JSON.stringify(base + path.split('?')[0])}`
    const match = grpc ? [exact] : [exact, 'headers:', `- name: ":method"`, `  string_match: { exact: ${JSON.stringify(method)} }`]
    return { match, setting, comment: `${name}: setting ${setting.label}, hedge delay ${formatMs(setting.delayMs)}` }
  })
  if (routes.length === 0) return null
  const header = `hedgebench sweep of ${list.length} targets: a route per target with a recommended setting, each its own hedge delay`
  return { name: 'envoy-route.yaml', text: envoyRoutes(header, routes) }
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
export function targetsGrpcFiles(methods: readonly MethodSetting[], targets: number): DeployFile[] {
  if (methods.length === 0) return []
  return grpcFiles(`hedgebench sweep of ${targets} targets: a methodConfig per method with a recommended setting, each its own hedge delay`, methods)
}
