/**
 * What `sweep()` (run/sweep.ts) returns: one run whose measured window held
 * the plain lane and one hedged lane per setting, interleaved; the frontier
 * (report/sweep-frontier.ts) and every renderer read it.
 */
import type { PhaseResult, RunResult, ServerCrossCheck } from './run-result.js'

export interface SweepSetting {
  /** Names the setting in tables and sentences: the delay as given (p90, 20ms), with the attempts and budget when the sweep varied them. */
  label: string
  /** The --hedge-delay item it came from: p90, 20ms. */
  delayLabel: string
  /** The percentile of the warm-up the delay came from; null for a fixed delay. */
  percentile: number | null
  delayMs: number
  /** Attempts per request, the original included. */
  maxAttempts: number
  /** Hedges allowed, % of requests; null: no budget. */
  budgetPct: number | null
  /** Its hedged lane of the sweep's window. */
  hedged: PhaseResult
  /** The servers' own count of this lane's attempts (absent unless --server-stats was read and the target counts per lane). */
  server?: LaneServerCount
}

/**
 * What the servers counted for one lane of the window, told apart by the
 * lane header every attempt of it carried (wire/stats.ts LANE_HEADER),
 * beside the client's attempts of that lane.
 */
export interface LaneServerCount {
  received: number
  completed: number
  cancelled: number
  /** Requests that began executing: the work done; absent when the target does not report it per lane. */
  started?: number
  /** Time the servers' workers spent on the lane's requests, ms; absent when not reported. */
  busyMs?: number
  clientAttempts: number
  /** received == clientAttempts. */
  match: boolean
}

/** The window's connections: shared by the lanes, so counted for the window, not split among the settings. */
export interface SweepConnections {
  connectionsOpened: number
  connectionsClosedByCancel: number
  streamsResetByCancel: number
  streamsResentAfterGoaway: number
}

export interface SweepResult {
  kind: 'sweep'
  /** The run: config, the warm-up and the plain lane (`phases.plain`); no `phases.hedged` (each setting has its own). */
  run: RunResult
  /** In the order given: every delay, then every --max-attempts, then every budget (their product). */
  settings: SweepSetting[]
  connections: SweepConnections
  /** The servers' count over the window, against all the lanes' attempts (absent without --server-stats). */
  server?: ServerCrossCheck
  /** The servers' count of the plain lane, when they count per lane (each setting's is on the setting). */
  plainServer?: LaneServerCount
  /** Interrupted: every setting holds what its lane measured until then (the lanes ran side by side, so they still compare). */
  partial: boolean
  warnings: string[]
  /** A mix (--targets): each target's own sweep, its warm-up and plain lane in run.targets, its lane of each setting here. */
  targets?: TargetSweep[]
}

/** One target of a mix's sweep: its lane of each setting, in the settings' order (each setting's delay from the target's own warm-up). */
export interface TargetSweep {
  /** `GET /a`, as run.targets names it. */
  name: string
  method: string
  path: string
  settings: SweepSetting[]
}

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
