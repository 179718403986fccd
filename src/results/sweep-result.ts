/**
 * What `sweep()` (run/sweep.ts) returns: one run whose measured window held
 * the plain lane and one hedged lane per setting, interleaved; the frontier
 * (report/sweep-frontier.ts) and every renderer read it. Declared once as a
 * schema, as a run is (run-result.ts): a saved sweep is this object as JSON
 * with its schema and version first, read back by parseSweep in one path
 * (its run through result-json.ts's, each setting's lane by the run's phase
 * schema), so `report` and `compare` take a saved sweep as they take a run.
 */
import { UsageError } from '../core/errors.js'
import { printableDeep } from '../core/printable.js'
import { bool, count, type Infer, list, loose, num, problemWith, str, v } from '../core/schema.js'
import { type Json, jsonObject, resultFromValue } from './result-json.js'
import { PhaseResultSchema, type RunResult, RunResultSchema, ServerCrossCheckSchema } from './run-result.js'

/** The saved form's name and version: a file without it is not a sweep this version reads. */
export const SWEEP_SCHEMA = 'hedgebench/sweep@1'

const c = count()
const opt = v.optional

/**
 * What the servers counted for one lane of the window, told apart by the
 * lane header every attempt of it carried (wire/stats.ts LANE_HEADER),
 * beside the client's attempts of that lane.
 */
const LaneServerCountSchema = loose({
  received: c,
  completed: c,
  cancelled: c,
  /** Requests that began executing: the work done; absent when the target does not report it per lane. */
  started: opt(c),
  /** Time the servers' workers spent on the lane's requests, ms; absent when not reported. */
  busyMs: opt(num()),
  clientAttempts: c,
  /** received == clientAttempts. */
  match: bool(),
})
export type LaneServerCount = Infer<typeof LaneServerCountSchema>

const SweepSettingSchema = loose({
  /** Names the setting in tables and sentences: the delay as given (p90, 20ms), with the attempts and budget when the sweep varied them. */
  label: str(),
  /** The --hedge-delay item it came from: p90, 20ms. */
  delayLabel: str(),
  /** The percentile of the warm-up the delay came from; null for a fixed delay. */
  percentile: v.nullable(num(0, 100, 'must be a number between 0 and 100 or null')),
  delayMs: num(0),
  /** Attempts per request, the original included. */
  maxAttempts: c,
  /** Hedges allowed, % of requests; null: no budget. */
  budgetPct: v.nullable(num(0, Infinity, 'must be a number >= 0 or null')),
  /** Its hedged lane of the sweep's window. */
  hedged: PhaseResultSchema,
  /** The servers' own count of this lane's attempts (absent unless --server-stats was read and the target counts per lane). */
  server: opt(LaneServerCountSchema),
})
export type SweepSetting = Infer<typeof SweepSettingSchema>

/** The window's connections: shared by the lanes, so counted for the window, not split among the settings. */
const SweepConnectionsSchema = loose({
  connectionsOpened: c,
  connectionsClosedByCancel: c,
  streamsResetByCancel: c,
  streamsResentAfterGoaway: c,
})
export type SweepConnections = Infer<typeof SweepConnectionsSchema>

/** One target of a mix's sweep: its lane of each setting, in the settings' order (each setting's delay from the target's own warm-up). */
const TargetSweepSchema = loose({
  /** `GET /a`, as run.targets names it. */
  name: str(),
  method: str(),
  path: str(),
  settings: list(SweepSettingSchema),
})
export type TargetSweep = Infer<typeof TargetSweepSchema>

const SweepResultSchema = loose({
  kind: v.literal('sweep', 'must be "sweep"'),
  /** The run: config, the warm-up and the plain lane (`phases.plain`); no `phases.hedged` (each setting has its own). */
  run: RunResultSchema,
  /** In the order given: every delay, then every --max-attempts, then every budget (their product). */
  settings: list(SweepSettingSchema),
  connections: SweepConnectionsSchema,
  /** The servers' count over the window, against all the lanes' attempts (absent without --server-stats). */
  server: opt(ServerCrossCheckSchema),
  /** The servers' count of the plain lane, when they count per lane (each setting's is on the setting). */
  plainServer: opt(LaneServerCountSchema),
  /** Interrupted: every setting holds what its lane measured until then (the lanes ran side by side, so they still compare). */
  partial: bool(),
  warnings: list(str('must be an array of strings'), 'must be an array of strings'),
  /** A mix (--targets): each target's own sweep, its warm-up and plain lane in run.targets, its lane of each setting here. */
  targets: opt(list(TargetSweepSchema)),
})
export type SweepResult = Infer<typeof SweepResultSchema>

/** A target's sweep as a sweep of its own (its warm-up and plain lane, its settings' lanes): what the frontier and the deploy configs read. */
export function targetSweepView(sweep: SweepResult, index: number): SweepResult {
  const target = sweep.targets![index]!
  const phases = sweep.run.targets?.[index]?.phases ?? {}
  const { targets: _targets, server: _server, plainServer: _plain, ...rest } = sweep
  return { ...rest, run: { ...sweep.run, phases }, settings: target.settings }
}

/** One setting as a run of its own: the sweep's run with the setting's lane as its hedged phase (what a verdict or a deploy config reads). */
export function settingRun(sweep: SweepResult, setting: SweepSetting): RunResult {
  return { ...sweep.run, phases: { ...sweep.run.phases, hedged: setting.hedged } }
}

/** A saved sweep as read: the sweep, the --max-extra its frontier was drawn under, and what else the file held (--verify's runs, a mix's frontiers), kept as saved. */
export interface SavedSweepFile {
  sweep: SweepResult
  maxExtraPct: number | null
  extra: Json
  /** --verify's runs, each named as the sweep's text named it (`30ms`; a mix of methods: `shop.Inventory/Get p90`), read back as runs. */
  verified: SweepVerification[]
}

export interface SweepVerification {
  label: string
  result: RunResult
}

/** What --verify adds to the saved sweep: the run of the chosen setting, or of each method of a mix (its call and setting). */
const SavedVerifySchema = loose({
  verification: opt(loose({ label: str(), result: v.unknown() })),
  verifications: opt(list(loose({ call: str(), label: str(), result: v.unknown() }))),
})

/** The verifications as the sweep's text names them: `label`, a method of a mix `call label`. */
export function verifiedRuns(extra: {
  verification?: { label: string; result: RunResult }
  verifications?: ReadonlyArray<{ call: string; label: string; result: RunResult }>
}): SweepVerification[] {
  return [
    ...(extra.verification ? [{ label: extra.verification.label, result: extra.verification.result }] : []),
    ...(extra.verifications ?? []).map((v) => ({ label: `${v.call} ${v.label}`, result: v.result })),
  ]
}

/** What the saved file adds around the sweep: its frontier is re-decided from the sweep when read, under the same --max-extra. */
const SavedFrontierSchema = loose({ frontier: opt(loose({ maxExtraPct: num(0) })) })

/** Whether a saved JSON object is a sweep (a file from before the sweep had a schema is one too: its `kind` says so). */
export function isSweepValue(value: Json): boolean {
  return value.schema === SWEEP_SCHEMA || (value.schema === undefined && value.kind === 'sweep')
}

/** Reads a saved sweep; `source` (the path) names it in the one-line error. */
export function parseSweep(text: string, source: string): SavedSweepFile {
  return sweepFromValue(jsonObject(text, source), source)
}

export function sweepFromValue(value: Json, source: string): SavedSweepFile {
  if (!isSweepValue(value))
    throw new UsageError(`${source}: not a hedgebench sweep (schema ${JSON.stringify(value.schema ?? null)}, expected "${SWEEP_SCHEMA}")`)
  const { schema: _schema, version: _version, frontier, verification, verifications, targetFrontiers, ...rest } = value
  if (typeof rest.run !== 'object' || rest.run === null || Array.isArray(rest.run)) throw new UsageError(`${source}: invalid sweep: run must be an object`)
  const run = resultFromValue(rest.run as Json, `${source} (its run)`)
  const problem =
    problemWith(SweepResultSchema, rest, { quoteTop: true }) ??
    problemWith(SavedFrontierSchema, { frontier }, { quoteTop: true }) ??
    problemWith(SavedVerifySchema, { verification, verifications }, { quoteTop: true })
  if (problem !== null) throw new UsageError(`${source}: invalid sweep: ${problem}`)
  const sweep = { ...(printableDeep(rest) as SweepResult), run }
  const maxExtraPct = (frontier as { maxExtraPct?: number } | undefined)?.maxExtraPct ?? null
  // Kept as saved (in the saved order), so -o json prints the file again; the runs in them read as any saved run is.
  const extra: Json = Object.fromEntries(Object.entries({ verification, verifications, targetFrontiers }).filter(([, x]) => x !== undefined))
  const asRun = <T extends { result: unknown }>(x: T, at: string) => ({ ...x, result: resultFromValue(x.result as Json, `${source} (${at})`) })
  type Saved = { verification?: { label: string; result: unknown }; verifications?: Array<{ call: string; label: string; result: unknown }> }
  const given = { verification, verifications } as Saved
  const verified = verifiedRuns({
    ...(given.verification ? { verification: asRun(given.verification, 'verification.result') } : {}),
    ...(given.verifications ? { verifications: given.verifications.map((x, i) => asRun(x, `verifications[${i}].result`)) } : {}),
  })
  return { sweep, maxExtraPct, extra, verified }
}

/** The saved form: schema and version first, then the sweep, its frontier and what else the command adds. */
export function savedSweepValue(sweep: SweepResult, version: string, rest: Json): Json {
  const { schema: _s, version: _v, ...bare } = sweep as SweepResult & Json
  return { schema: SWEEP_SCHEMA, version, ...bare, ...rest }
}
