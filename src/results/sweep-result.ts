/** What `sweep()` (run/sweep.ts) returns: one run per hedge delay tried; report/sweep-frontier.ts reads it. */
import type { RunResult } from './run-result.js'

export interface SweepSetting {
  /** As given: p90, 20ms. */
  label: string
  /** The percentile of the warm-up it came from; null for a fixed delay. */
  percentile: number | null
  delayMs: number
  /** Its run: a plain and a hedged phase, interleaved. */
  result: RunResult
}

export interface SweepResult {
  kind: 'sweep'
  /** The settings finished, in the order given. */
  settings: SweepSetting[]
  /** How many were asked for. */
  planned: number
  /** Interrupted: the settings not finished are left out. */
  partial: boolean
  warnings: string[]
}
