/**
 * The progress bar on stderr, only on a terminal (so it never mixes into
 * -o json|csv on stdout, and CI logs stay clean), as autocannon's bar.
 *
 * It replaces the ora spinner, which computed the lines to clear from the
 * terminal width and looped forever at 0 columns (issue #12). This writer
 * owns no timer and no loop: it draws one line, in place with `\r`, only
 * when the run reports progress, so it can never keep the process from
 * handling a signal. When the width is unknown or 0 it draws nothing.
 */
import type { Progress } from '../run/run-options.js'
import { progressLine, type PlannedWindow } from './progress-line.js'

/** A run's progress, its window named as the bar shows it (a sweep's window: its settings). */
export type ShownProgress = Omit<Progress, 'phase'> & { phase: string }

export interface ProgressBar {
  update: (p: ShownProgress) => void
  stop: () => void
}

/** Seconds of history the current req/s is measured over. */
const RATE_WINDOW_MS = 2000
const MIN_REDRAW_MS = 100

const silent: ProgressBar = { update: () => {}, stop: () => {} }

export function startProgress(plan: PlannedWindow[] = [], stream: NodeJS.WriteStream = process.stderr): ProgressBar {
  if (!stream.isTTY) return silent
  let windowIndex = -1
  let phase = ''
  let samples: Array<{ at: number; done: number }> = []
  let drawn = false
  let lastDraw = -Infinity
  const update = (p: ShownProgress): void => {
    if (p.phase !== phase) {
      phase = p.phase
      samples = [{ at: 0, done: 0 }]
      const next = plan.findIndex((w, i) => i > windowIndex && w.phase === p.phase)
      if (next >= 0) windowIndex = next
    }
    samples.push({ at: p.elapsedMs, done: p.done })
    while (samples.length > 2 && samples[0]!.at < p.elapsedMs - RATE_WINDOW_MS) samples.shift()
    const width = stream.columns
    const now = performance.now()
    if (!(width > 0) || now - lastDraw < MIN_REDRAW_MS) return
    lastDraw = now
    const line = progressLine(
      {
        phase: p.phase,
        done: p.done,
        total: p.total,
        elapsedMs: p.elapsedMs,
        rate: rateOf(samples),
        later: windowIndex >= 0 ? plan.slice(windowIndex + 1) : [],
        durationMs: windowIndex >= 0 ? plan[windowIndex]!.durationMs : null,
        minDurationMs: windowIndex >= 0 ? (plan[windowIndex]!.minDurationMs ?? 0) : 0,
      },
      width,
    )
    stream.write(`\r${line}\x1b[K`)
    drawn = true
  }
  return {
    update,
    stop: () => {
      if (drawn) stream.write('\r\x1b[K')
      drawn = false
    },
  }
}

function rateOf(samples: Array<{ at: number; done: number }>): number | null {
  const first = samples[0]
  const last = samples[samples.length - 1]
  if (!first || !last || last.at - first.at < 50) return null
  return ((last.done - first.done) / (last.at - first.at)) * 1000
}
