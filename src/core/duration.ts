import { UsageError } from './errors.js'

const UNIT_MS: Record<string, number> = { us: 0.001, µs: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 }
const DURATION_RE = /^(\d+(?:\.\d+)?|\.\d+)(us|µs|ms|s|m|h)?$/

/**
 * "250ms", "1.5s", "2m" in milliseconds, and the unit as written (null for a
 * bare number, which then counts as `bareUnit`). Null when `text` is not a
 * non-negative number with an optional time unit.
 */
export function readDuration(text: string, bareUnit: 'ms' | 's' = 'ms'): { ms: number; unit: string | null } | null {
  const match = DURATION_RE.exec(text)
  if (!match) return null
  return { ms: Number(match[1]) * UNIT_MS[match[2] ?? bareUnit]!, unit: match[2] ?? null }
}

/**
 * Parses "250ms", "1.5s", "2m" into milliseconds. A bare number means
 * `bareUnit` (seconds for -z and -t, milliseconds for --slow, as the help says).
 * Throws UsageError naming the flag and the bad value.
 */
export function parseDuration(text: string | number, flag: string, bareUnit: 'ms' | 's' = 'ms'): number {
  const raw = String(text).trim()
  const duration = readDuration(raw, bareUnit)
  if (!duration) {
    throw new UsageError(`invalid duration for ${flag}: "${raw}" (use a number with us, ms, s, m or h, e.g. 250ms, 1.5s, 2m)`)
  }
  const value = duration.ms
  if (!Number.isFinite(value)) throw new UsageError(`invalid duration for ${flag}: "${raw}" (too large)`)
  return checkTimerMs(value, flag, raw)
}

/** The longest delay Node's timers take (2^31 - 1 ms, 596 h 31 min); a longer one fires after 1 ms, with a TimeoutOverflowWarning. */
export const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * Every duration may end up in a timer (a timeout, a deadline, a hedge
 * delay, a phase's length), so none may be longer than a timer can wait:
 * refused in one line rather than firing at once.
 */
export function checkTimerMs(ms: number, flag: string, shown: string = `${ms} ms`): number {
  if (ms > MAX_TIMER_MS) throw new UsageError(`${flag} ${shown} is too long: at most 596h (${MAX_TIMER_MS} ms, the longest a Node timer waits)`)
  return ms
}

/** Formats milliseconds for reports: "850 µs", "14.8 ms", "1.02 s". */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-'
  if (ms < 1) return `${(ms * 1000).toFixed(0)} µs`
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`
}

/** "1 s", "250 ms": a threshold (--slow) as the user would have typed it. */
export function formatThreshold(ms: number): string {
  if (ms >= 1000 && ms % 1000 === 0) return `${ms / 1000} s`
  return Number.isInteger(ms) ? `${ms} ms` : formatMs(ms)
}
