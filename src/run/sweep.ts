/**
 * `sweep(options)`: which hedge delay to deploy. One warm-up, then per
 * setting of the --hedge-delay list one plain and one hedged phase,
 * interleaved as `run()` interleaves them (--schedule interleaved), in one
 * process on the same replicas. Each setting is a `run()`: the first does the
 * warm-up and reports its percentiles (RunOptions.onWarmup), so every pNN
 * setting is a fixed delay read from that one warm-up. Never prints;
 * interruption keeps the settings already finished (`partial: true`).
 */
import { UsageError } from '../core/errors.js'
import { parseHedgeDelayFlag, resolveHedgeDelay } from '../core/delay-spec.js'
import type { SweepResult, SweepSetting } from '../results/sweep-result.js'
import type { RunOptions } from './run-options.js'
import { run } from './run.js'

/** One item of the list: a percentile of the warm-up, or a fixed delay. */
export type SweepDelay = { label: string; percentile: number } | { label: string; fixedMs: number }

export interface SweepOptions extends Omit<RunOptions, 'mode' | 'schedule' | 'onWarmup'> {
  /** The delays to try, as --hedge-delay takes each ('p90', or ms). */
  delays: Array<`p${number}` | number>
  /** Setting `index` (from 0) of `planned` is about to start: for progress, and a caller's stop between settings. */
  onSetting?: (index: number, planned: number) => void
}

/** The delays of a --hedge-delay list ("p75,p90,20ms"), each read as the flag reads one; a bad item is a UsageError naming it. */
export function parseDelayList(text: string): SweepDelay[] {
  const items = text.split(',').map((s) => s.trim())
  if (items.length === 0 || items.some((s) => s === '')) throw new UsageError(`invalid --hedge-delay "${text}" (a comma list such as p75,p90,p99,20ms)`)
  const delays = items.map((item) => {
    if (item === 'auto') throw new UsageError(`invalid --hedge-delay item "auto" in a sweep (name the percentile: p95)`)
    const spec = parseHedgeDelayFlag(item)
    return toSweepDelay(spec, item)
  })
  const labels = new Set<string>()
  for (const d of delays) {
    const key = 'percentile' in d ? `p${d.percentile}` : `${d.fixedMs}ms`
    if (labels.has(key)) throw new UsageError(`--hedge-delay lists ${d.label} twice`)
    labels.add(key)
  }
  return delays
}

function toSweepDelay(spec: `p${number}` | number | 'auto', label: string): SweepDelay {
  const resolved = resolveHedgeDelay(spec)
  if (resolved === 'auto') return { label, percentile: 95 }
  return 'percentile' in resolved ? { label, percentile: resolved.percentile } : { label, fixedMs: resolved.fixedMs }
}

/**
 * The run options of setting `index`: the first warms up (and reports the
 * warm-up's percentiles), the later ones start measuring at once with the
 * delay that warm-up gave.
 */
export function settingOptions(base: SweepOptions, delay: SweepDelay, index: number, warmupMs: ((p: number) => number | null) | null): RunOptions {
  const { delays: _delays, onSetting: _onSetting, ...rest } = base
  const first = index === 0
  const fixed = 'fixedMs' in delay ? delay.fixedMs : first ? null : (warmupMs?.(delay.percentile) ?? null)
  // A run without a warm-up would leave no hedge later than the p50 it never measured (min-hedge-window): the warm-up's, as the first setting's.
  const p50 = first ? null : (warmupMs?.(50) ?? null)
  const hedge = { ...base.hedge, delay: fixed ?? (`p${(delay as { percentile: number }).percentile}` as const) }
  if (p50 !== null && hedge.minHedgeWindowMs === undefined) hedge.minHedgeWindowMs = p50
  return { ...rest, mode: 'both', schedule: 'interleaved', ...(first ? {} : { warmup: 0 }), hedge }
}

export async function sweep(options: SweepOptions): Promise<SweepResult> {
  const delays = options.delays.map((d) => toSweepDelay(d, typeof d === 'number' ? `${d}ms` : d))
  if (delays.length === 0) throw new UsageError('a sweep needs at least one --hedge-delay')
  const settings: SweepSetting[] = []
  const warnings: string[] = []
  const warmup: { at: ((p: number) => number | null) | null } = { at: null }
  let partial = false
  for (const [i, delay] of delays.entries()) {
    options.onSetting?.(i, delays.length)
    if (options.signal?.aborted) {
      partial = true
      break
    }
    const opts = settingOptions(options, delay, i, warmup.at)
    const result = await run(i === 0 ? { ...opts, onWarmup: (at) => (warmup.at = at) } : opts)
    if (i > 0 && 'percentile' in delay && warmup.at?.(delay.percentile) == null) {
      warnings.push(`${delay.label}: the warm-up answered nothing to read it from; it ran with the fallback delay`)
    }
    if (result.partial) {
      // A setting stopped part-way is left out: its phases are not comparable with the finished ones.
      partial = true
      break
    }
    settings.push({ label: delay.label, percentile: 'percentile' in delay ? delay.percentile : null, delayMs: result.phases.hedged?.hedging?.delayMs ?? 0, result })
    for (const w of result.warnings) if (!warnings.includes(w)) warnings.push(w)
  }
  return { kind: 'sweep', settings, planned: delays.length, partial, warnings }
}
