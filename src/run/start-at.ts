/**
 * --start-at: every generator of a sharded run waits for one agreed
 * wall-clock time before its first phase, so their windows overlap. The
 * wait is bounded and interruptible; how late the start really was is
 * recorded, not assumed.
 */
import { readDuration } from '../core/duration.js'
import { UsageError } from '../core/errors.js'
import type { WallClock } from '../core/wall-clock.js'

/** A start further ahead than this is almost surely a typo (a wrong date), not a plan. */
export const MAX_START_WAIT_MS = 24 * 3_600_000

/**
 * An RFC 3339 time (2026-12-01T07:00:00Z), or "+30s" relative to now. A
 * relative start is rounded up to the next whole second, so processes
 * launched together with the same "+30s" agree on one instant (and on the
 * run id derived from it).
 */
export function parseStartAt(text: string, now: number): number {
  const raw = text.trim()
  if (raw.startsWith('+')) {
    const d = readDuration(raw.slice(1), 's')
    if (!d) throw new UsageError(`invalid --start-at "${text}" (an RFC 3339 time like 2026-12-01T07:00:00Z, or +30s)`)
    return checkAhead(Math.ceil((now + d.ms) / 1000) * 1000, now, text)
  }
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/i.test(raw)) {
    throw new UsageError(`invalid --start-at "${text}" (an RFC 3339 time with a zone, like 2026-12-01T07:00:00Z, or +30s)`)
  }
  const at = Date.parse(raw)
  if (!Number.isFinite(at)) throw new UsageError(`invalid --start-at "${text}" (not a valid date)`)
  return checkAhead(at, now, text)
}

function checkAhead(at: number, now: number, text: string): number {
  if (at - now > MAX_START_WAIT_MS) throw new UsageError(`--start-at ${text} is more than 24 h ahead (check the date)`)
  // A time long past is a stale config (a run.json not edited for this run), not a late start: refused as a date too far ahead is.
  if (now - at > MAX_START_WAIT_MS) throw new UsageError(`--start-at ${text} is more than 24 h in the past (check the date: was run.json edited for this run?)`)
  return at
}

/** Longest single timer: setTimeout overflows above 2^31 - 1 ms, and a short step re-reads the clock (it may be stepped by NTP). */
const STEP_MS = 1000

/**
 * Resolves at `at` on `clock` (or at once when it has passed), or when
 * `signal` aborts (Ctrl-C during the wait). Returns false when interrupted.
 */
export async function waitUntil(at: number, clock: WallClock, signal?: AbortSignal): Promise<boolean> {
  for (let i = 0; i < MAX_START_WAIT_MS / STEP_MS + 2; i++) {
    if (signal?.aborted) return false
    const left = at - clock()
    if (left <= 0) return true
    await sleep(Math.min(left, STEP_MS), signal)
  }
  return !signal?.aborted
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}
