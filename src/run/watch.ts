/**
 * `watch(options)`: one open-loop window that runs until -z or an
 * interruption, its plain and hedged lanes interleaved as a sweep's are
 * (run.ts runSettings: each block of requests holds both lanes once, in a
 * seeded order), so at every moment both tails are measured on the same
 * replicas. The hedged lane's delay follows the target: a rolling
 * percentile (p95 unless --hedge-delay names another) of the last
 * --adaptive-window (30 s unless given), clamped to --delay-min/--delay-max.
 *
 * Once a second each lane is read (stats/lane-seconds.ts): its second is
 * kept as one point (the last MAX_POINTS), folded into the current
 * segment's counts and histogram, and fed to the change detectors
 * (stats/change-points.ts). A mark (mark(): a key, a signal, an HTTP POST)
 * starts a new segment at the moment it is taken: the second it falls in is
 * split there (LaneSampler.take), the requests that finished before it in
 * the old segment, the rest in the new one; --mark-at's marks fall on a
 * whole second. Nothing is kept per request: memory is flat however long
 * it runs. Never prints: what it has to say goes to onNote, each second to
 * onSecond.
 */
import { performance } from 'node:perf_hooks'
import { UsageError } from '../core/errors.js'
import { resolveHedgeDelay, type HedgeDelay } from '../core/delay-spec.js'
import { redactUrl } from '../core/redact.js'
import { randomSeed } from '../core/random.js'
import { VERSION } from '../core/version.js'
import { DEFAULT_BUDGET_PCT, DEFAULT_MAX_ATTEMPTS } from '../hedging/policy.js'
import type { RunResult } from '../results/run-result.js'
import {
  LANE_COUNT_KEYS,
  WATCH_LANES,
  WATCH_SCHEMA,
  type MarkSource,
  type SegmentLane,
  type WatchChange,
  type WatchLane,
  type WatchResult,
  type FinishedWatch,
  type WatchSecond,
  type WatchSegment,
  windowSeconds,
} from '../results/watch-result.js'
import { ChangeDetector, changeLine, type ChangeMetric } from '../stats/change-points.js'
import { createHistogram, encodeHistogram, type Histogram } from '../stats/histogram.js'
import { LaneSampler, type LanePart, type LaneSecond } from '../stats/lane-seconds.js'
import type { PhaseStats } from '../stats/phase-stats.js'
import { MAX_POINTS } from '../stats/timeline.js'
import { delayPercentile } from './lane.js'
import { resolveOptions } from './resolve-options.js'
import type { RunOptions } from './run-options.js'
import { runSettings } from './run.js'

export interface WatchOptions
  extends Omit<RunOptions, 'mode' | 'schedule' | 'requests' | 'onWindow' | 'onProgress' | 'rate' | 'loadSchedule' | 'concurrencySchedule' | 'skipFirst'> {
  /** Requests/s of both lanes together (open loop): required. */
  rate: number
  /** Marks at set times: seconds since the window started. */
  marksAt?: Array<{ atS: number; name?: string }>
  /** Each second as it is read, with everything so far (to draw it, to save it). */
  onSecond?: (second: WatchSecond, state: WatchResult) => void
  /** A line to show: a mark taken or ignored, a change found. */
  onNote?: (line: string) => void
}

/** The rolling window of the hedge delay unless --adaptive-window says otherwise. */
export const DEFAULT_DELAY_WINDOW_MS = 30_000
/** The seed rule's clamp, clamp(p95, 20 ms, 80 ms) (--seed-rule). */
export const SEED_RULE = { delayMinMs: 20, delayMaxMs: 80 } as const

/** A segment as it grows: its counts, and its latencies per lane folded into one histogram. */
interface LiveSegment {
  name: string
  fromS: number
  toS: number
  lanes: Record<WatchLane, Omit<SegmentLane, 'histogram'> & { histogram: Histogram }>
}

const CHANGE_METRICS: readonly ChangeMetric[] = ['p99', 'slow', 'error_rate']

export class Watch {
  readonly #options: WatchOptions
  readonly #state: WatchResult
  #samplers: Record<WatchLane, LaneSampler> | null = null
  #origin = 0
  #timer: NodeJS.Timeout | null = null
  #segment: LiveSegment
  /** A mark fell inside the second being read: that second is both segments', so no change detector reads it. */
  #splitSecond = false
  readonly #marksAt: Array<{ atS: number; name: string }>
  readonly #detectors: Record<WatchLane, Record<ChangeMetric, ChangeDetector>>
  readonly #names = new Set<string>()
  /** When an interruption stopped the sending (seconds since the window started). */
  #stoppedAtS: number | null = null

  constructor(options: WatchOptions) {
    if (!(options.rate > 0)) throw new UsageError('watch needs an open-loop rate: -q N (requests/s, both lanes together)')
    if ((options.workers ?? 1) > 1) throw new UsageError('watch runs on one thread: --workers is not supported (its lanes are read live, once a second)')
    this.#options = { ...options, hedge: watchHedge(options) }
    const cfg = resolveOptions({ ...this.#options, mode: 'both', schedule: 'interleaved' }, options.seed ?? 0)
    checkMarksAt(options.marksAt ?? [], options.durationMs)
    this.#marksAt = (options.marksAt ?? []).map((m) => ({ atS: m.atS, name: m.name ?? `at ${m.atS}s` })).sort((a, b) => a.atS - b.atS)
    this.#state = {
      schema: WATCH_SCHEMA,
      version: VERSION,
      label: cfg.label,
      startedAt: new Date().toISOString(),
      finishedAt: null,
      partial: true,
      urls: cfg.urls.map((u) => redactUrl(u, cfg.showSecret)),
      rate: options.rate,
      slowMs: cfg.slowMs,
      hedgeDelay: { percentile: delayPercentile(cfg.hedge), window: cfg.hedge.adaptiveWindow, minMs: cfg.hedge.delayMinMs, maxMs: cfg.hedge.delayMaxMs },
      seconds: [],
      marks: [],
      segments: [],
      changes: [],
    }
    this.#segment = this.#newSegment('start', 0)
    this.#detectors = Object.fromEntries(
      WATCH_LANES.map((lane) => [lane, Object.fromEntries(CHANGE_METRICS.map((m) => [m, new ChangeDetector(m)]))]),
    ) as Record<WatchLane, Record<ChangeMetric, ChangeDetector>>
  }

  /** Starts a new segment now (to the millisecond); ignored (with the line saying so) before any traffic in the current one. */
  mark(name?: string, source: MarkSource = 'api'): { taken: boolean; line: string } {
    if (this.#samplers === null) return { taken: false, line: MARK_BEFORE_WINDOW }
    const atS = Math.round(performance.now() - this.#origin) / 1000
    this.#foldParts()
    // Past the last second read: the rest of the second is the new segment's, so the second as a whole is neither's level.
    const splits = atS > this.#segment.toS
    const taken = this.#cut(atS, name ?? `mark ${this.#state.marks.length + 1}`, source)
    if (taken === null) return { taken: false, line: `mark ignored: no traffic yet in segment "${this.#segment.name}"` }
    if (splits) this.#splitSecond = true
    return { taken: true, line: `mark "${taken}" (${source}): a new segment from ${formatS(atS)}` }
  }

  /** Each lane's counts so far, for the metrics endpoint; null before the measured window. */
  totals(): Record<WatchLane, ReturnType<LaneSampler['totals']> & { errorKinds: ReadonlyMap<string, number> }> | null {
    const s = this.#samplers
    if (!s) return null
    const of = (lane: WatchLane) => ({ ...s[lane].totals(), errorKinds: s[lane].stats.figures.errorKinds })
    return { plain: of('plain'), hedged: of('hedged') }
  }

  /** What a read of the latency of each lane since the last call would need: the lanes' samplers (null before the window). */
  get samplers(): Readonly<Record<WatchLane, LaneSampler>> | null {
    return this.#samplers
  }

  /** Everything so far, the live segment included: what is saved each second. Before the measured window, no segment at all (nothing was measured: a watch stopped in its warm-up has nothing to judge). */
  snapshot(): WatchResult {
    if (this.#samplers === null) return { ...this.#state, segments: [] }
    return { ...this.#state, segments: [...this.#state.segments, savedSegment(this.#segment)] }
  }

  async run(): Promise<FinishedWatch> {
    const { marksAt: _m, onSecond: _s, onNote: _n, ...run } = this.#options
    const hedge = run.hedge!
    const setting = {
      delay: { percentile: watchPercentile(hedge.delay) },
      maxAttempts: hedge.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
      budgetPct: hedge.budgetPct === undefined ? DEFAULT_BUDGET_PCT : hedge.budgetPct,
    }
    let measured: Awaited<ReturnType<typeof runSettings>>
    try {
      measured = await runSettings(
        {
          ...run,
          seed: run.seed ?? randomSeed(),
          // Until -z, else until interrupted: the open-loop window's end is read against its clock, never a timer.
          durationMs: run.durationMs ?? FOREVER_MS,
          onWindow: (lanes) => this.#started(lanes),
        },
        [setting],
      )
    } finally {
      if (this.#timer) clearTimeout(this.#timer)
    }
    if (this.#samplers) {
      this.#read(Math.max(Math.floor(this.#segment.toS) + 1, Math.ceil((performance.now() - this.#origin) / 1000)))
      this.#state.sentUntilS = Math.min(this.#segment.toS, this.#stoppedAtS ?? (run.durationMs ?? FOREVER_MS) / 1000)
    }
    const hedged = measured.hedged[0]
    const result: RunResult = { ...measured.run, phases: { ...measured.run.phases, ...(hedged ? { hedged } : {}) } }
    this.#state.finishedAt = new Date().toISOString()
    this.#state.partial = result.partial
    return { ...this.snapshot(), run: result }
  }

  #started(lanes: ReadonlyArray<{ name: string; stats: PhaseStats }>): void {
    const plain = lanes.find((l) => l.name === 'plain')
    const hedged = lanes.find((l) => l.name === 'hedged')
    if (!plain || !hedged) return
    this.#samplers = { plain: new LaneSampler(plain.stats), hedged: new LaneSampler(hedged.stats) }
    this.#origin = plain.stats.startedAt
    this.#options.signal?.addEventListener('abort', () => (this.#stoppedAtS ??= Math.ceil((performance.now() - this.#origin) / 1000)), { once: true })
    this.#schedule(1)
  }

  /** The reading of second `t`, at the window's start + t seconds (a timer that keeps to the window's clock, not to its own last firing). */
  #schedule(t: number): void {
    const wait = Math.max(0, this.#origin + t * 1000 - performance.now())
    this.#timer = setTimeout(() => {
      // A timer that fired late (a busy machine) reads the seconds it missed as one.
      const now = Math.max(t, Math.floor((performance.now() - this.#origin) / 1000))
      this.#read(now)
      this.#schedule(now + 1)
    }, wait)
    this.#timer.unref()
  }

  #read(t: number): void {
    const samplers = this.#samplers!
    const second: WatchSecond = { t, plain: samplers.plain.read(t), hedged: samplers.hedged.read(t) }
    this.#foldParts()
    for (const lane of WATCH_LANES) {
      addDelay(this.#segment.lanes[lane], second[lane])
      if (!this.#splitSecond) this.#detect(lane, second[lane])
    }
    this.#splitSecond = false
    this.#segment.toS = t
    const seconds = this.#state.seconds
    seconds.push(second)
    if (seconds.length > MAX_POINTS) seconds.shift()
    this.#takeMarks(t)
    this.#options.onSecond?.(second, this.#state)
  }

  #detect(lane: WatchLane, s: LaneSecond): void {
    const d = this.#detectors[lane]
    const found = [d.p99.push(s.t, s.p99Ms ?? 0, s.requests), d.slow.push(s.t, s.slow, s.requests), d.error_rate.push(s.t, s.errors, s.requests)]
    for (const change of found) {
      if (!change) continue
      const c: WatchChange = { ...change, lane }
      this.#state.changes.push(c)
      this.#options.onNote?.(changeLine(c, lane))
    }
  }

  /** The --mark-at marks due by second t, just read: each closes the segment and starts the next at t. */
  #takeMarks(t: number): void {
    while (this.#marksAt.length > 0 && this.#marksAt[0]!.atS <= t) {
      const due = this.#marksAt.shift()!
      const taken = this.#cut(t, due.name, 'mark-at')
      this.#options.onNote?.(
        taken === null
          ? `mark "${due.name}" (--mark-at) ignored: no traffic yet in segment "${this.#segment.name}"`
          : `mark "${taken}" (--mark-at): a new segment from ${formatS(t)}`,
      )
    }
  }

  /** What each lane counted since the last part, into the current segment. */
  #foldParts(): void {
    for (const lane of WATCH_LANES) addPart(this.#segment.lanes[lane], this.#samplers![lane].take())
  }

  /** Closes the segment at `atS` and starts the next one named `name` (made unique); null (nothing done) when the segment has no traffic. */
  #cut(atS: number, name: string, source: MarkSource): string | null {
    const current = this.#segment
    if (current.lanes.plain.requests + current.lanes.hedged.requests === 0) return null
    const unique = this.#unique(name)
    current.toS = Math.max(current.toS, atS)
    this.#state.segments.push(savedSegment(current))
    this.#state.marks.push({ atS, name: unique, source })
    this.#segment = this.#newSegment(unique, atS)
    for (const lane of WATCH_LANES) for (const d of Object.values(this.#detectors[lane])) d.restart()
    return unique
  }

  #newSegment(name: string, fromS: number): LiveSegment {
    this.#names.add(name)
    const lane = () => ({
      requests: 0,
      errors: 0,
      slow: 0,
      attempts: 0,
      hedges: 0,
      hedgeWins: 0,
      cancelled: 0,
      budgetDenied: 0,
      delaySumMs: 0,
      delaySeconds: 0,
      errorKinds: {},
      histogram: createHistogram(),
    })
    return { name, fromS, toS: fromS, lanes: { plain: lane(), hedged: lane() } }
  }

  /** Segment names are compared runs' names: never the same twice. */
  #unique(name: string): string {
    let candidate = name
    for (let i = 2; this.#names.has(candidate); i++) candidate = `${name} (${i})`
    return candidate
  }
}

/** What mark() answers before the measured window. */
const MARK_BEFORE_WINDOW = 'mark ignored: no traffic yet (the measured window has not started)'

const formatS = (s: number): string => `${windowSeconds(s)} s`

/**
 * `hedgebench watch` as a library call: the watch until `durationMs`, or
 * until `signal` aborts (what was measured is kept, as on Ctrl-C), marked
 * at `marksAt`. To mark while it runs, `new Watch(options)`, then `run()`
 * and `mark(name)` when the flag flips. `compareSegments(result)` judges
 * each segment against the one before it.
 */
export function watch(options: WatchOptions): Promise<FinishedWatch> {
  return new Watch(options).run()
}

/** A mark at or past the window's end (-z) would start a segment with no traffic: refused, as any bad input. */
export function checkMarksAt(marksAt: ReadonlyArray<{ atS: number }>, durationMs: number | undefined): void {
  if (durationMs === undefined) return
  const past = marksAt.find((m) => m.atS * 1000 >= durationMs)
  if (past) throw new UsageError(`--mark-at ${past.atS}s is not inside the watch (-z ${durationMs / 1000}s): a mark starts a segment before the window ends`)
}

/** A window without -z ends when it is interrupted, or after the longest -z a run takes (596 h: the longest a Node timer waits). */
const FOREVER_MS = 2_147_483_647

/** The hedging a watch runs: always a rolling delay, over DEFAULT_DELAY_WINDOW_MS unless one was given. */
function watchHedge(options: WatchOptions): NonNullable<RunOptions['hedge']> {
  const hedge = options.hedge ?? {}
  watchPercentile(hedge.delay)
  return { ...hedge, adaptive: true, adaptiveWindow: hedge.adaptiveWindow ?? { ms: DEFAULT_DELAY_WINDOW_MS } }
}

/** The percentile the rolling delay follows: p95 unless --hedge-delay names one; a fixed delay is refused. */
function watchPercentile(delay: HedgeDelay | undefined): number {
  const resolved = resolveHedgeDelay(delay ?? 'auto')
  if (resolved === 'auto') return 95
  if ('percentile' in resolved) return resolved.percentile
  throw new UsageError('watch derives its hedge delay as it goes: --hedge-delay takes a percentile there (p95), not a fixed delay')
}

function addPart(into: LiveSegment['lanes'][WatchLane], part: LanePart): void {
  for (const key of LANE_COUNT_KEYS) into[key] += part.counts[key]
  for (const [kind, n] of Object.entries(part.errorKinds ?? {})) into.errorKinds[kind] = (into.errorKinds[kind] ?? 0) + n
  into.histogram.add(part.histogram)
}

/** The hedge delay is read once a second: the second's, in the segment current at its end. */
function addDelay(into: LiveSegment['lanes'][WatchLane], s: LaneSecond): void {
  if (s.delayMs === null) return
  into.delaySumMs += s.delayMs
  into.delaySeconds++
}

function savedSegment(s: LiveSegment): WatchSegment {
  const lane = (l: LiveSegment['lanes'][WatchLane]): SegmentLane => ({ ...l, errorKinds: { ...l.errorKinds }, histogram: encodeHistogram(l.histogram) })
  return { name: s.name, fromS: s.fromS, toS: s.toS, lanes: { plain: lane(s.lanes.plain), hedged: lane(s.lanes.hedged) } }
}
