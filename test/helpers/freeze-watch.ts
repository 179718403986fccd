/**
 * Notices when this process's event loop was frozen (a tick of a 5 ms
 * interval arriving much later than due): on a shared, loaded machine the
 * client itself can stop for 100 ms+, and every request in flight then looks
 * slow whatever the engine did. Statistical tests use the windows to tell
 * "the client was frozen" apart from "the target was slow".
 */
export interface FreezeWatch {
  /** Frozen windows, performance.now() ms. */
  readonly windows: Array<{ from: number; to: number }>
  /** True when [from, to] overlaps a frozen window (padded by `padMs`). */
  overlaps(from: number, to: number, padMs?: number): boolean
  stop(): void
}

export function watchFreezes(thresholdMs = 40): FreezeWatch {
  const windows: Array<{ from: number; to: number }> = []
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    if (now - last > thresholdMs) windows.push({ from: last, to: now })
    last = now
  }, 5)
  timer.unref()
  return {
    windows,
    overlaps: (from, to, padMs = 20) => windows.some((w) => w.from - padMs < to && from < w.to + padMs),
    stop: () => clearInterval(timer),
  }
}
