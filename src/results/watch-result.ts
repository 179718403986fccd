/**
 * What `hedgebench watch` keeps and saves as it goes: one point per second
 * per lane (the last MAX_POINTS seconds), the marks, each segment's counts
 * and latency histogram (folded from its seconds), the change points found
 * without a mark; at the end, the whole window's RunResult and each
 * segment compared with the one before (report/watch-compare.ts).
 */
import type { RunResult } from './run-result.js'

/** What a lane counted over a span (a second, a segment). */
export interface LaneCounts {
  requests: number
  errors: number
  /** Requests slower than --slow. */
  slow: number
  attempts: number
  hedges: number
  hedgeWins: number
  cancelled: number
  budgetDenied: number
}

export const LANE_COUNT_KEYS: ReadonlyArray<keyof LaneCounts> = ['requests', 'errors', 'slow', 'attempts', 'hedges', 'hedgeWins', 'cancelled', 'budgetDenied']

/** A lane's second as stats/lane-seconds.ts reads it. */
export interface LaneSecond extends LaneCounts {
  /** Seconds since the window started, at the end of this second. */
  t: number
  /** null when no request ended in the second. */
  p50Ms: number | null
  p99Ms: number | null
  /** The hedge delay the lane's last request used (null: plain, or none yet). */
  delayMs: number | null
  /** Transport error kinds of the second (absent when none). */
  errorKinds?: Record<string, number>
}

/** A change found without a mark (stats/change-points.ts). */
/** What a series measures, and so how it is transformed. */
export type ChangeMetric = 'p99' | 'slow' | 'error_rate'

export interface ChangePoint {
  metric: ChangeMetric
  /** Seconds since the window started: the estimated first second of the new level. */
  atS: number
  /** 95 % interval of `atS`. */
  intervalS: [number, number]
  /** When the alarm was raised. */
  detectedAtS: number
  direction: 'up' | 'down'
  /** The level before and after: the median of the seconds (or blocks) on each side since the series last learnt its level, as the p99 in ms, slow requests per second, the error rate as a fraction. */
  before: number
  after: number
  /** Seconds per sample when a count was summed over blocks (a rare count: see BLOCK_COUNT). */
  blockS?: number
}

export const WATCH_SCHEMA = 'hedgebench.watch/1'

export type WatchLane = 'plain' | 'hedged'
export const WATCH_LANES: readonly WatchLane[] = ['plain', 'hedged']

/** Where a mark came from ('api': a program's call of Watch.mark, the library's). */
export type MarkSource = 'key' | 'signal' | 'mark-at' | 'http' | 'api'

export interface WatchMark {
  /** Seconds since the window started, to the millisecond: when the segment it starts begins (a --mark-at mark: a whole second). */
  atS: number
  name: string
  source: MarkSource
}

/** One second of both lanes. */
export interface WatchSecond {
  t: number
  plain: LaneSecond
  hedged: LaneSecond
}

/** A segment's lane: its seconds summed, its latencies folded into one histogram. */
export interface SegmentLane extends LaneCounts {
  /** Sum of the seconds' hedge delays, and how many seconds had one (their mean is the segment's delay). */
  delaySumMs: number
  delaySeconds: number
  errorKinds: Record<string, number>
  /** HDR histogram (base64) of the segment's latencies. */
  histogram: string
}

export interface WatchSegment {
  name: string
  /** Seconds since the window started: [fromS, toS) (a mark's time, to the millisecond, or a second's end). */
  fromS: number
  toS: number
  lanes: Record<WatchLane, SegmentLane>
}

/** A change point in one lane's series. */
export interface WatchChange extends ChangePoint {
  lane: WatchLane
}

export interface WatchResult {
  schema: typeof WATCH_SCHEMA
  version: string
  label: string
  startedAt: string
  /** Set when the watch ended; null while it runs (a file read then is what a killed watch keeps). */
  finishedAt: string | null
  /** Stopped by Ctrl-C (or not yet ended). */
  partial: boolean
  urls: string[]
  /** -q: requests/s of both lanes together. */
  rate: number
  slowMs: number
  /** How the hedged lane's delay follows the target: the rolling percentile, its window and clamp. */
  hedgeDelay: { percentile: number; window: { requests: number } | { ms: number }; minMs: number; maxMs: number }
  /** The last MAX_POINTS seconds. */
  seconds: WatchSecond[]
  /** When sending stopped (-z, or the interruption), seconds since the window started; the seconds after it only drain what was in flight. */
  sentUntilS?: number
  marks: WatchMark[]
  segments: WatchSegment[]
  changes: WatchChange[]
  /** The whole window as a run (at the end). */
  run?: RunResult
}

/** A watch that has ended: its whole window is there as a run. */
export type FinishedWatch = WatchResult & { run: RunResult }

/** A time of the window as shown: whole seconds as they are, a mark's time to the tenth ("15", "15.4"). */
export function windowSeconds(s: number): string {
  return String(Number(s.toFixed(1)))
}
