/**
 * Node starts a timer from its loop's clock, whole milliseconds read at the
 * start of the loop's turn, so a timer fires up to a millisecond before its
 * delay (a quarter to two thirds of firings: docs/benchmarks.md, hedge timers). What
 * must not happen early (a hedge, an open-loop send) waits out the rest,
 * a few times at most, so that a caller's own clock cannot keep it waiting.
 */
const MAX_REARMS = 5

/** Milliseconds still to wait for `dueAt`; 0 when it is due, or was waited for often enough. */
export function stillEarly(now: number, dueAt: number, rearms: number): number {
  return now < dueAt && rearms < MAX_REARMS ? dueAt - now : 0
}
