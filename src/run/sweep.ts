/**
 * `sweep(options)`: which hedging setting to deploy. One warm-up, then ONE
 * measured window in which the plain lane and one hedged lane per setting
 * take turns at random (run.ts runSettings), so every setting sees the same
 * replicas under the same conditions, on the same connections, in one
 * process. The settings are the product of the delays, the --max-attempts
 * and the budgets given. Never prints; interruption keeps what every lane
 * measured until then (`partial: true`).
 */
import { UsageError } from '../core/errors.js'
import { parseHedgeDelayFlag, resolveHedgeDelay } from '../core/delay-spec.js'
import { DEFAULT_BUDGET_PCT, DEFAULT_MAX_ATTEMPTS, MAX_ATTEMPTS_CAP } from '../hedging/policy.js'
import type { SweepResult, SweepSetting } from '../results/sweep-result.js'
import type { RunOptions } from './run-options.js'
import { runSettings, type SettingHedge } from './run.js'

/** One item of the list: a percentile of the warm-up, or a fixed delay. */
export type SweepDelay = { label: string; percentile: number } | { label: string; fixedMs: number }

/** More lanes than this would share one window too thinly (each lane gets -n requests; the window holds them all). */
export const MAX_SWEEP_SETTINGS = 40

export interface SweepOptions extends Omit<RunOptions, 'mode' | 'schedule' | 'onWarmup' | 'loadSchedule' | 'concurrencySchedule' | 'skipFirst'> {
  /** The delays to try, as --hedge-delay takes each ('p90', or ms). */
  delays: Array<`p${number}` | number>
  /** Attempts per request to try (each 2 to MAX_ATTEMPTS_CAP); default: the run's --max-attempts. */
  maxAttempts?: number[]
  /** Budgets to try, % of requests (null: none); default: the run's --hedge-budget. */
  budgets?: Array<number | null>
}

/** The delays of a --hedge-delay list ("p75,p90,20ms"), each read as the flag reads one; a bad item is a UsageError naming it. */
export function parseDelayList(text: string): SweepDelay[] {
  const delays = listItems(text, '--hedge-delay', 'p75,p90,p99,20ms').map((item) => {
    if (item === 'auto') throw new UsageError(`invalid --hedge-delay item "auto" in a sweep (name the percentile: p95)`)
    return toSweepDelay(parseHedgeDelayFlag(item), item)
  })
  noRepeats(
    delays.map((d) => ('percentile' in d ? `p${d.percentile}` : `${d.fixedMs}ms`)),
    delays.map((d) => d.label),
    '--hedge-delay',
  )
  return delays
}

/** A --max-attempts list ("2,3"): whole numbers from 2 (one hedge) to the cap. */
export function parseAttemptsList(text: string): number[] {
  const values = listItems(text, '--max-attempts', '2,3').map((item) => {
    const n = Number(item)
    if (!/^\d+$/.test(item) || n < 2 || n > MAX_ATTEMPTS_CAP)
      throw new UsageError(`invalid --max-attempts item "${item}" in a sweep (a whole number from 2 to ${MAX_ATTEMPTS_CAP}: the original and its hedges)`)
    return n
  })
  noRepeats(values.map(String), values.map(String), '--max-attempts')
  return values
}

/** A budget list ("5%,10%,off"): percentages of requests from 0 to 100, or off (no budget). */
export function parseBudgetList(text: string): Array<number | null> {
  const items = listItems(text, '--hedge-budget', '5%,10%,25%')
  const values = items.map((item) => {
    if (item === 'off') return null
    const n = Number(item.replace(/%$/, ''))
    if (item.replace(/%$/, '') === '' || !(n >= 0 && n <= 100))
      throw new UsageError(`invalid --hedge-budget item "${item}" in a sweep (a percentage from 0 to 100, or off)`)
    return n
  })
  noRepeats(values.map(String), items, '--hedge-budget')
  return values
}

function listItems(text: string, flag: string, example: string): string[] {
  const items = text.split(',').map((s) => s.trim())
  if (items.some((s) => s === '')) throw new UsageError(`invalid ${flag} "${text}" (a comma list such as ${example})`)
  return items
}

function noRepeats(keys: string[], labels: string[], flag: string): void {
  const seen = new Set<string>()
  for (const [i, key] of keys.entries()) {
    if (seen.has(key)) throw new UsageError(`${flag} lists ${labels[i]} twice`)
    seen.add(key)
  }
}

function toSweepDelay(spec: `p${number}` | number | 'auto', label: string): SweepDelay {
  const resolved = resolveHedgeDelay(spec)
  if (resolved === 'auto') return { label, percentile: 95 }
  return 'percentile' in resolved ? { label, percentile: resolved.percentile } : { label, fixedMs: resolved.fixedMs }
}

/** A setting before it is measured. */
type PlannedSetting = Omit<SweepSetting, 'delayMs' | 'hedged'> & { hedge: SettingHedge }

/** Every delay, then every attempt count, then every budget: their product, bounded by MAX_SWEEP_SETTINGS (a UsageError beyond). */
export function planSettings(delays: readonly SweepDelay[], attempts: readonly number[], budgets: ReadonlyArray<number | null>): PlannedSetting[] {
  const count = delays.length * attempts.length * budgets.length
  if (count === 0) throw new UsageError('a sweep needs at least one --hedge-delay, --max-attempts and --hedge-budget')
  if (count > MAX_SWEEP_SETTINGS) {
    throw new UsageError(
      `${count} settings (${delays.length} delays × ${attempts.length} --max-attempts × ${budgets.length} budgets): a sweep takes at most ${MAX_SWEEP_SETTINGS}; shorten a list`,
    )
  }
  return delays.flatMap((delay) =>
    attempts.flatMap((maxAttempts) =>
      budgets.map((budgetPct) => {
        const parts = [
          delay.label,
          ...(attempts.length > 1 ? [`${maxAttempts} attempts`] : []),
          ...(budgets.length > 1 ? [`budget ${budgetText(budgetPct)}`] : []),
        ]
        const percentile = 'percentile' in delay ? delay.percentile : null
        const hedgeDelay = 'percentile' in delay ? { percentile: delay.percentile } : { fixedMs: delay.fixedMs }
        return { label: parts.join(', '), delayLabel: delay.label, percentile, maxAttempts, budgetPct, hedge: { delay: hedgeDelay, maxAttempts, budgetPct } }
      }),
    ),
  )
}

function budgetText(pct: number | null): string {
  return pct === null ? 'off' : `${pct}%`
}

export async function sweep(options: SweepOptions): Promise<SweepResult> {
  const { delays: given, maxAttempts, budgets, ...runOptions } = options
  const delays = given.map((d) => toSweepDelay(d, typeof d === 'number' ? `${d}ms` : d))
  const planned = planSettings(
    delays,
    maxAttempts ?? [options.hedge?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS],
    budgets ?? [options.hedge?.budgetPct === undefined ? DEFAULT_BUDGET_PCT : options.hedge.budgetPct],
  )
  const measured = await runSettings(
    runOptions,
    planned.map((s) => s.hedge),
  )
  // The servers' count of each lane, when they count lanes apart: the plain lane's first, then each setting's.
  const [plainServer, ...settingServers] = measured.laneServers ?? []
  const settings = measured.hedged.map((hedged, i): SweepSetting => {
    const { hedge: _hedge, ...setting } = planned[i]!
    const server = settingServers[i]
    return { ...setting, delayMs: hedged.hedging?.delayMs ?? 0, hedged, ...(server ? { server } : {}) }
  })
  const run = measured.run
  const targets = measured.targetSettings?.map((lanes, t) => {
    const own = run.targets![t]!
    return {
      name: own.name,
      method: own.method,
      path: own.path,
      settings: lanes.map((hedged, i): SweepSetting => {
        const { hedge: _hedge, ...setting } = planned[i]!
        return { ...setting, delayMs: hedged.hedging?.delayMs ?? 0, hedged }
      }),
    }
  })
  return {
    kind: 'sweep',
    run,
    settings,
    connections: measured.connections,
    ...(measured.server ? { server: measured.server } : {}),
    ...(plainServer ? { plainServer } : {}),
    partial: run.partial,
    // Each lane derives its delay alone: a warning they share is said once.
    warnings: [...new Set(run.warnings)],
    ...(targets ? { targets } : {}),
  }
}
