/**
 * The progress bar's one line, as a pure function of what the run has done
 * so far: phase, requests done of the total (or time elapsed of -z), the
 * current requests/s and an ETA for the whole run (warm-up + phases), as
 * autocannon's bar and oha's live view show. Kept apart from the terminal
 * writer (progress.ts) so it is tested without a terminal.
 */
import type { ResolvedRun } from '../run/resolve-options.js'

/** One measured window of the run, in order: a count of requests or a duration. */
export interface PlannedWindow {
  phase: string
  requests: number | null
  durationMs: number | null
  /** The warm-up goes on past its requests until it has lasted this long (resolve-options.ts warmupMinMs); 0: no minimum. */
  minDurationMs?: number
}

/** The windows run.ts will run for these options (see Run#phasesInOrder). */
export function planOf(
  cfg: Pick<ResolvedRun, 'warmup' | 'mode' | 'schedule' | 'requests' | 'durationMs'> & Partial<Pick<ResolvedRun, 'warmupMinMs'>>,
): PlannedWindow[] {
  const plan: PlannedWindow[] = []
  if (cfg.warmup > 0) plan.push({ phase: 'warmup', requests: cfg.warmup, durationMs: null, minDurationMs: cfg.warmupMinMs ?? 0 })
  const measured = { requests: cfg.requests, durationMs: cfg.durationMs }
  if (cfg.schedule === 'interleaved') {
    // One window for both lanes, reported under the last lane's name.
    plan.push({ phase: 'hedged', requests: cfg.requests === null ? null : cfg.requests * 2, durationMs: cfg.durationMs })
    return plan
  }
  if (cfg.mode !== 'hedged') plan.push({ phase: 'plain', ...measured })
  if (cfg.mode !== 'plain') plan.push({ phase: 'hedged', ...measured })
  return plan
}

/** A sweep's windows (run.ts runSettings): the warm-up, then ONE window of the plain lane and every setting's lane, named by its settings. */
export function sweepPlanOf(cfg: Parameters<typeof planOf>[0], settings: number): PlannedWindow[] {
  const warmup = planOf(cfg).filter((w) => w.phase === 'warmup')
  return [...warmup, { phase: sweepWindowName(settings), requests: cfg.requests === null ? null : cfg.requests * (settings + 1), durationMs: cfg.durationMs }]
}

/** The bar's name for a sweep's window. */
export function sweepWindowName(settings: number): string {
  return `${settings} setting${settings === 1 ? '' : 's'}`
}

export interface ProgressView {
  phase: string
  done: number
  /** Requests planned for this window, or null when it is timed. */
  total: number | null
  elapsedMs: number
  /** Current requests/s, or null before there is a rate to tell. */
  rate: number | null
  /** The windows still to run after this one. */
  later: PlannedWindow[]
  /** This window's duration when timed (-z). */
  durationMs: number | null
  /** The least this window lasts whatever its count (the warm-up's minimum), ms. */
  minDurationMs?: number
}

/** Its requests are done but the window runs on to its minimum duration: ms still to go, else 0. */
function minimumLeftMs(v: ProgressView): number {
  return Math.max(0, (v.minDurationMs ?? 0) - v.elapsedMs)
}

/** Seconds left in the whole run, or null when it cannot be told (no rate yet for counted windows). */
export function etaSeconds(v: ProgressView): number | null {
  let ms = 0
  if (v.durationMs !== null) ms += Math.max(0, v.durationMs - v.elapsedMs)
  else if (v.total !== null && v.done < v.total) {
    if (!v.rate) return null
    ms += Math.max((Math.max(0, v.total - v.done) / v.rate) * 1000, minimumLeftMs(v))
  } else ms += minimumLeftMs(v)
  for (const w of v.later) {
    if (w.durationMs !== null) ms += w.durationMs
    else if (w.requests !== null) {
      if (!v.rate) return null
      ms += (w.requests / v.rate) * 1000
    }
  }
  return ms / 1000
}

const BAR_MAX = 24
const BAR_MIN = 6

/** The line, never wider than `width - 1` (the last column would wrap on some terminals). */
export function progressLine(v: ProgressView, width: number): string {
  // Past its count but short of its minimum duration (a fast target's warm-up): the clock, not the count, is what it waits for.
  const onMinimum = v.durationMs === null && v.total !== null && v.done >= v.total && minimumLeftMs(v) > 0
  const fraction = onMinimum ? v.elapsedMs / v.minDurationMs! : v.durationMs !== null ? v.elapsedMs / v.durationMs : v.total ? v.done / v.total : null
  const count = onMinimum
    ? `${v.done} done, runs its ${seconds(v.minDurationMs! / 1000)} minimum`
    : v.durationMs !== null
      ? `${seconds(v.elapsedMs / 1000)} of ${seconds(v.durationMs / 1000)}`
      : v.total !== null
        ? `${v.done}/${v.total}`
        : `${v.done}`
  const rate = v.rate === null ? '- req/s' : `${Math.round(v.rate)} req/s`
  const eta = etaSeconds(v)
  const tail = ` ${count}  ${rate}  ETA ${eta === null ? '-' : seconds(eta)}`
  const head = `${v.phase.padEnd(6)} `
  const room = width - 1 - head.length - tail.length - 2
  const line =
    fraction === null || room < BAR_MIN ? head + tail.trimStart() : `${head}[${bar(Math.min(1, Math.max(0, fraction)), Math.min(BAR_MAX, room))}]${tail}`
  return line.slice(0, Math.max(0, width - 1))
}

function bar(fraction: number, cells: number): string {
  const full = Math.round(fraction * cells)
  return '#'.repeat(full) + '.'.repeat(cells - full)
}

/** 0.4 -> "0.4s", 12.3 -> "12s", 75 -> "1m15s". */
function seconds(s: number): string {
  if (s < 10) return `${s.toFixed(1)}s`
  if (s < 60) return `${Math.round(s)}s`
  const m = Math.floor(s / 60)
  return `${m}m${String(Math.round(s - m * 60)).padStart(2, '0')}s`
}
