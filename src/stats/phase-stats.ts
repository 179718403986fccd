/**
 * Everything measured in one phase. It is the HedgeObserver of the phase's
 * dispatcher, so attempts are counted where they happen (synchronously, in
 * undici's callbacks), and it takes one `recordRequest` per logical request.
 * `finish()` turns it into the PhaseResult every renderer reads.
 */
import { FiguresAccumulator } from './figures.js'
import { isOkStatus } from '../core/status.js'
import { transportOrigin } from '../core/target-url.js'
import { createHistogram, encodeHistogram, percentileMs, recordMs, summarize, type Histogram } from './histogram.js'
import type { AttemptOutcome, HedgeObserver, HedgeOutcome } from '../hedging/observer.js'
import { TIED_DROPPED_STATUS } from '../hedging/policy.js'
import { FINE_BUCKET_MS, FINE_HORIZON_MS, TimelineRecorder, type SecondRecorder } from './timeline.js'
import { hedgingStats, histogramSummary, phaseRate, phaseResult, replicaFigures } from './phase-algebra.js'
import { TimingBreakdown } from './timing-breakdown.js'
import type { EjectionListener } from '../hedging/replica-health.js'
import type {
  EarlyCancels,
  EjectionEvent,
  TargetFailures,
  GeneratorHealth,
  HedgingStats,
  SuppressedHedges,
  PhaseName,
  PhaseResult,
  ReplicaFigures,
  TimelinePoint,
} from '../results/run-result.js'
import { extraLoadPctOf } from '../results/extra-load.js'
import { isInterruption } from '../core/interruption.js'
import { localFailureCode } from '../core/local-failure.js'
import { round3 } from '../core/round.js'
// Node 20's global `performance` is a lazy getter run at every use; the module's own object is read directly (several clock reads per request).
import { performance } from 'node:perf_hooks'

export interface PhaseStatsOptions {
  name: PhaseName
  slowMs: number
  /** Replica URLs as given; attempts are keyed by their origin. */
  replicas: readonly string[]
  fanout: number
  openLoop: boolean
  /** performance.now() of the run start, for offsets. */
  runStartedAt: number
  /** Also keep a histogram of the requests finishing after this many (the warm-up's settled part). */
  steadyAfter?: number
  /**
   * Where requests and hedges are bucketed, by second and by FINE_BUCKET_MS;
   * default: TimelineRecorders from `startedAt`. A worker thread passes ones
   * whose points keep their histogram, for an exact merge (phase-snapshot.ts).
   */
  timelines?: { seconds: SecondRecorder<TimelinePoint>; fine: SecondRecorder<TimelinePoint> }
  /** The name a transport error is counted under (the run's protocol's, protocol.ts errorKind); default figures.ts errorKind. */
  errorKind?: (err: Error) => string
  /** Count the attempts cancelled sooner than this after their send (earlyCancels: a server may drop them before its handler); absent: not counted. */
  earlyCancelMs?: number
}

/** How hedging was configured for the phase (the counts come from the observer). */
export type HedgingSetup = Pick<
  HedgingStats,
  'delayMs' | 'delaySource' | 'warmupBasis' | 'adaptive' | 'maxAttempts' | 'budgetPct' | 'parallel' | 'tied' | 'cancelMode'
>

/** A logical request as the load generator saw it. */
export interface RequestSample {
  latencyMs: number
  /** Open-loop only: time from the actual send (uncorrected). */
  serviceMs: number | null
  status: number | null
  error: Error | null
  bytes: number
  /** What a failed answer's server said with its status (protocol.ts failureText), else null. */
  message?: string | null
  outcome: HedgeOutcome | null
  /** performance.now() when it finished, if the caller has it (saves a clock read). */
  endAt?: number
}

class ReplicaAccumulator extends FiguresAccumulator {
  wins = 0
  cancelled = 0
  ejections = 0
}

export class PhaseStats implements HedgeObserver, EjectionListener {
  /** The phase's clock: its window's start once `startAt` is called (run/window-runner.ts). */
  startedAt = performance.now()
  readonly figures: FiguresAccumulator
  readonly calls: FiguresAccumulator | null
  timeline: SecondRecorder<TimelinePoint>
  launched = 0
  settled = 0
  connectionsOpened = 0
  connectionsClosedByCancel = 0
  streamsResetByCancel = 0
  streamsResentAfterGoaway = 0
  lateSends = 0
  #unsent = 0
  #unsentOriginals = 0
  #tiedDropped = 0
  #cancelled = 0
  #earlyCancels = 0
  #lateDiscarded = 0
  #budgetDenied = 0
  readonly #suppressed: Required<SuppressedHedges> = { overload: 0, errorRate: 0, targetBusy: 0, pushback: 0 }
  readonly #loserRuntime: Histogram = createHistogram()
  readonly #attemptsPerRequest: Record<string, number> = {}
  #slowBudgetDenied = 0
  #deadlineSuppressed = 0
  #nonFatal = 0
  #hedgesSent = 0
  /** Service time (latency in closed loop) of the requests that were answered successfully: the delay basis. */
  readonly #answered = createHistogram()
  #hedgeWins = 0
  #lastDelayMs: number | null = null
  #originalWins = 0
  #triggered = 0
  readonly #replicas = new Map<string, ReplicaAccumulator>()
  readonly #replicaUrls = new Map<string, string>()
  #lastOrigin: string | null = null
  #lastReplica: ReplicaAccumulator | null = null
  readonly #perAttempt: FiguresAccumulator[] = []
  /** hey's Details per attempt number (timing-breakdown.ts). */
  readonly #details: TimingBreakdown[] = []
  readonly #timerLateness: Histogram = createHistogram()
  readonly #delayUsed: Histogram = createHistogram()
  readonly #serviceTime: Histogram | null
  hedging: HedgingSetup | null = null
  /** Latency once connections and JIT are warm (see `steadyAfter`); null when not asked for. */
  readonly steady: Histogram | null
  /** The same for fan-out calls (their latency is the delay basis): answered calls of the requests after `steadyAfter`. */
  readonly #steadyCalls: Histogram | null
  /** Set when the lane ejects outliers: the phase's ejections, in order. */
  ejections: EjectionEvent[] | null = null
  /** 100 ms points while the phase is young (timeline.ts); dropped once it passes FINE_HORIZON_MS. */
  #fine: SecondRecorder<TimelinePoint> | null

  constructor(readonly opts: PhaseStatsOptions) {
    this.figures = new FiguresAccumulator(opts.slowMs, opts.errorKind)
    this.calls = opts.fanout > 1 ? new FiguresAccumulator(opts.slowMs, opts.errorKind) : null
    this.timeline = opts.timelines?.seconds ?? new TimelineRecorder(this.startedAt)
    this.#fine = opts.timelines?.fine ?? new TimelineRecorder(this.startedAt, FINE_BUCKET_MS)
    this.#serviceTime = opts.openLoop ? createHistogram() : null
    this.steady = opts.steadyAfter === undefined ? null : createHistogram()
    this.#steadyCalls = opts.steadyAfter === undefined || opts.fanout <= 1 ? null : createHistogram()
    for (const url of opts.replicas) {
      const origin = transportOrigin(url)
      this.#replicas.set(origin, new ReplicaAccumulator(opts.slowMs, opts.errorKind))
      this.#replicaUrls.set(origin, url)
    }
  }

  /**
   * The phase starts when its window does, not when its statistics were
   * built: building a window's lanes takes milliseconds on a loaded machine,
   * and a phase's start is what its open-loop schedule and over-time points
   * are read against. Called before anything is sent.
   */
  startAt(t: number): void {
    this.startedAt = t
    if (this.opts.timelines) return
    this.timeline = new TimelineRecorder(t)
    this.#fine = new TimelineRecorder(t, FINE_BUCKET_MS)
  }

  // ---- EjectionListener: when outlier detection takes a replica out and back ----

  replicaEjected(origin: string, cause: string, forMs: number, targets: TargetFailures[] | null): void {
    this.#replica(origin).ejections++
    const url = this.#replicaUrls.get(origin) ?? origin
    const event: EjectionEvent = { url, atMs: round3(performance.now() - this.startedAt), forMs, readmittedAtMs: null, cause }
    if (targets) event.targets = targets
    ;(this.ejections ??= []).push(event)
  }

  replicaReadmitted(origin: string): void {
    const url = this.#replicaUrls.get(origin) ?? origin
    const open = this.ejections?.findLast((e) => e.url === url && e.readmittedAtMs === null)
    if (open) open.readmittedAtMs = round3(performance.now() - this.startedAt)
  }

  // ---- HedgeObserver: attempt-level events, counted as they happen ----

  attemptLaunched(): void {
    this.launched++
  }

  attemptSettled(): void {
    this.settled++
  }

  attemptSent(index: number, origin: string): void {
    this.figures.attempts++
    this.#replica(origin).attempts++
    if (index > 0) {
      this.#hedgesSent++
      const now = performance.now()
      this.timeline.hedge(now)
      if (this.#fine && this.#young(now)) this.#fine.hedge(now)
    }
  }

  attemptRefused(index: number, origin: string, cancelled: boolean, sentForMs?: number): void {
    const replica = this.#replica(origin)
    this.figures.attempts--
    replica.attempts--
    if (cancelled) {
      this.#cancelled--
      replica.cancelled--
      if (this.#early(sentForMs)) this.#earlyCancels--
    }
    if (index > 0) {
      this.#hedgesSent--
      const now = performance.now()
      this.timeline.unhedge(now)
      if (this.#fine && this.#young(now)) this.#fine.unhedge(now)
    }
  }

  attemptUnsent(index: number): void {
    this.#unsent++
    if (index === 0) this.#unsentOriginals++
  }

  /** Attempts on the wire aborted because another attempt won, so far. */
  get cancelledAttempts(): number {
    return this.#cancelled
  }

  attemptCancelled(_index: number, origin: string, sentForMs?: number): void {
    this.#cancelled++
    this.#replica(origin).cancelled++
    if (this.#early(sentForMs)) this.#earlyCancels++
  }

  /** Attempts cancelled within `earlyCancelMs` of their send, so far (null: not counted). */
  get earlyCancels(): EarlyCancels | null {
    const withinMs = this.opts.earlyCancelMs
    return withinMs === undefined ? null : { withinMs, count: this.#earlyCancels }
  }

  #early(sentForMs: number | undefined): boolean {
    return sentForMs !== undefined && this.opts.earlyCancelMs !== undefined && sentForMs < this.opts.earlyCancelMs
  }

  attemptDone(o: AttemptOutcome): void {
    // A tied copy its server dropped because the twin started elsewhere is the tie working, not
    // a replica failing: it stays out of the replica's errors and latencies (counted in attempts).
    if (this.hedging?.tied && o.status === TIED_DROPPED_STATUS && !o.won) {
      this.#tiedDropped++
      return
    }
    const replica = this.#replica(o.origin)
    replica.add(o.latencyMs, o.status, o.error, o.bytes)
    if (o.won) replica.wins++
    // Per-attempt-number figures are only reported for a hedged phase.
    if (this.hedging) this.#attemptFigures(o.index).add(o.latencyMs, o.status, o.error, o.bytes)
    if (o.firstByteAt !== undefined) this.#breakdown(o.index).add(o)
  }

  #breakdown(index: number): TimingBreakdown {
    while (this.#details.length <= index) this.#details.push(new TimingBreakdown())
    return this.#details[index]!
  }

  lateDiscarded(): void {
    this.#lateDiscarded++
  }

  budgetDenied(): void {
    this.#budgetDenied++
  }

  deadlineSuppressed(): void {
    this.#deadlineSuppressed++
  }

  nonFatalTriggered(): void {
    this.#nonFatal++
  }

  saturationSuppressed(reason: keyof SuppressedHedges): void {
    this.#suppressed[reason]++
  }

  loserFinished(msAfterDecision: number): void {
    recordMs(this.#loserRuntime, msAfterDecision)
  }

  timerLateness(ms: number): void {
    recordMs(this.#timerLateness, ms)
  }

  // ---- logical requests ----

  /** One fan-out call finished (only when fanout > 1). Each call is hedged on its own, so its hedge outcome counts here. */
  recordCall(
    latencyMs: number,
    status: number | null,
    error: Error | null,
    bytes: number,
    outcome: HedgeOutcome | null = null,
    message: string | null = null,
  ): void {
    this.calls?.add(latencyMs, status, error, bytes, message)
    // Only answers, and only once the first `steadyAfter` requests (and their cold connections) are past.
    if (this.#steadyCalls && status !== null && isOkStatus(status) && this.figures.requests >= this.opts.steadyAfter!) recordMs(this.#steadyCalls, latencyMs)
    this.#hedgeOutcome(outcome, latencyMs)
  }

  recordRequest(s: RequestSample): void {
    // Aborted by hedgebench after an interruption, or failed on this machine (EMFILE): counted apart (figures.add), nothing else.
    if (s.error && (isInterruption(s.error) || localFailureCode(s.error) !== null)) return this.figures.add(s.latencyMs, s.status, s.error, s.bytes)
    const failed = s.status === null || !isOkStatus(s.status)
    // The hedge timer starts at the send, so the delay basis is the service time in open loop;
    // only answers count: a timeout or a refused connect says nothing about how long an answer takes.
    if (!failed) {
      if (this.steady && this.figures.requests >= this.opts.steadyAfter!) recordMs(this.steady, s.serviceMs ?? s.latencyMs)
      recordMs(this.#answered, s.serviceMs ?? s.latencyMs)
    }
    this.figures.add(s.latencyMs, s.status, s.error, s.bytes, s.message ?? null)
    if (this.#serviceTime && s.serviceMs !== null) recordMs(this.#serviceTime, s.serviceMs)
    const outcome = s.outcome
    // With fan-out, every call's outcome was counted in recordCall (wins and triggers are per call).
    if (!this.calls) this.#hedgeOutcome(outcome, s.latencyMs)
    const endAt = s.endAt ?? performance.now()
    const delayMs = this.hedging ? (outcome?.delayMs ?? null) : null
    this.timeline.request(endAt, s.latencyMs, failed, delayMs)
    if (this.#fine && this.#young(endAt)) this.#fine.request(endAt, s.latencyMs, failed, delayMs)
  }

  /** Still within the fine timeline's horizon; past it the fine points are dropped for good. */
  #young(now: number): boolean {
    if (now - this.startedAt < FINE_HORIZON_MS) return true
    this.#fine = null
    return false
  }

  #hedgeOutcome(outcome: HedgeOutcome | null, latencyMs: number): void {
    if (!outcome || !this.hedging) return
    this.#lastDelayMs = outcome.delayMs
    recordMs(this.#delayUsed, outcome.delayMs)
    this.#attemptsPerRequest[outcome.launched] = (this.#attemptsPerRequest[outcome.launched] ?? 0) + 1
    if (outcome.budgetDenied && latencyMs > this.opts.slowMs) this.#slowBudgetDenied++
    if (outcome.hedgeFiredMs !== null) this.#triggered++
    if (outcome.winner === 0) this.#originalWins++
    else if (outcome.winner > 0) this.#hedgeWins++
  }

  /** The hedging counts so far, read while the phase runs (`watch`'s seconds and metrics); the delay is the last request's. */
  hedgeCounts(): { hedgesSent: number; hedgeWins: number; cancelled: number; budgetDenied: number; delayMs: number | null } {
    return {
      hedgesSent: this.#hedgesSent,
      hedgeWins: this.#hedgeWins,
      cancelled: this.#cancelled,
      budgetDenied: this.#budgetDenied,
      delayMs: this.#lastDelayMs,
    }
  }

  /** Latency to derive a hedge delay from: the settled part, and time from the send (not the intended start). */
  delayBasis(): Histogram {
    // With fan-out each call is hedged on its own: its delay comes from call latency, of warm calls when asked.
    if (this.#steadyCalls && this.#steadyCalls.totalCount > 0) return this.#steadyCalls
    if (this.calls && this.calls.histogram.totalCount > 0) return this.calls.histogram
    if (this.steady && this.steady.totalCount > 0) return this.steady
    return this.#answered
  }

  /** What `finish()` rounds away, for merging the phases of several worker threads exactly (phase-snapshot.ts). */
  mergeParts(): { triggered: number; delayUsed: Histogram; timerLateness: Histogram } {
    return { triggered: this.#triggered, delayUsed: this.#delayUsed, timerLateness: this.#timerLateness }
  }

  /** Every attempt launched has made its last callback. */
  drained(): boolean {
    return this.settled >= this.launched
  }

  finish(durationMs: number, generator: GeneratorHealth): PhaseResult {
    const figures = this.figures.fields()
    const now = performance.now()
    // Plain phases have one attempt per request: only the original's line.
    const details = (this.hedging ? this.#details : this.#details.slice(0, 1)).map((d, attempt) => d.toDetails(attempt)).filter((d) => d.write.count > 0)
    return phaseResult({
      name: this.opts.name,
      ...figures,
      startOffsetMs: round3(this.startedAt - this.opts.runStartedAt),
      durationMs: round3(durationMs),
      rps: phaseRate(this.figures.requests, round3(durationMs)),
      connectionsOpened: this.connectionsOpened,
      connectionsClosedByCancel: this.connectionsClosedByCancel,
      streamsResetByCancel: this.streamsResetByCancel,
      streamsResentAfterGoaway: this.streamsResentAfterGoaway,
      earlyCancels: this.earlyCancels ?? undefined,
      replicas: this.#replicaFigures(),
      timeline: this.timeline.finish(now),
      generator,
      ejections: this.ejections ?? undefined,
      timelineFine: this.#fine && durationMs <= FINE_HORIZON_MS ? this.#fine.finish(now) : undefined,
      // Set by the run's window runner, which holds the window's schedule and its skipped requests.
      scheduleSeconds: undefined,
      skipped: undefined,
      calls: this.calls ? { ...this.calls.toFigures(), fanout: this.opts.fanout } : undefined,
      hedging: this.hedging ? this.#hedgingStats(this.figures.requests) : undefined,
      serviceTime: this.#serviceTime
        ? { latencyMs: summarize(this.#serviceTime), histogram: encodeHistogram(this.#serviceTime), lateSends: this.lateSends }
        : undefined,
      details: details.length > 0 ? details : undefined,
      // Set by the run, which reads the server and the wall clock around the window.
      server: undefined,
      wall: undefined,
      window: undefined,
    })
  }

  #hedgingStats(requests: number): HedgingStats {
    const calls = this.calls ? this.calls.requests : requests
    return hedgingStats({
      ...this.hedging!,
      warmupBasis: this.hedging!.warmupBasis,
      tied: this.hedging!.tied,
      delayUsedMs: { min: minMs(this.#delayUsed), p50: percentileMs(this.#delayUsed, 50), max: percentileMs(this.#delayUsed, 100) },
      hedgesSent: this.#hedgesSent,
      unsent: this.#unsent,
      unsentOriginals: this.#unsentOriginals,
      tiedDropped: this.hedging!.tied ? this.#tiedDropped : undefined,
      extraLoadPct: extraLoadPctOf(this.#hedgesSent, calls),
      triggerRate: calls > 0 ? round3((this.#triggered / calls) * 100) : 0,
      hedgeWins: this.#hedgeWins,
      originalWins: this.#originalWins,
      cancelled: this.#cancelled,
      lateDiscarded: this.#lateDiscarded,
      budgetDenied: this.#budgetDenied,
      slowBudgetDenied: this.#slowBudgetDenied,
      deadlineSuppressed: this.#deadlineSuppressed,
      nonFatalTriggered: this.#nonFatal,
      suppressed: { ...this.#suppressed },
      loserRuntimeMs: histogramSummary(this.#loserRuntime),
      attemptsPerRequest: { ...this.#attemptsPerRequest },
      timerLatenessMs: {
        p50: percentileMs(this.#timerLateness, 50),
        p99: percentileMs(this.#timerLateness, 99),
        max: percentileMs(this.#timerLateness, 100),
      },
      perAttempt: this.#perAttempt.map((acc, attempt) => {
        const f = acc.toFigures()
        return { attempt, count: f.requests, latencyMs: f.latencyMs, histogram: f.histogram }
      }),
    })
  }

  #replicaFigures(): ReplicaFigures[] {
    return [...this.#replicas].map(([origin, acc]) =>
      replicaFigures({
        url: this.#replicaUrls.get(origin) ?? origin,
        ...acc.fields(),
        wins: acc.wins,
        cancelled: acc.cancelled,
        ejections: this.ejections ? acc.ejections : undefined,
      }),
    )
  }

  #replica(origin: string): ReplicaAccumulator {
    // Twice per attempt: remember the last one (one replica is the common case).
    if (origin === this.#lastOrigin) return this.#lastReplica!
    let acc = this.#replicas.get(origin)
    if (!acc) {
      acc = new ReplicaAccumulator(this.opts.slowMs, this.opts.errorKind)
      this.#replicas.set(origin, acc)
    }
    this.#lastOrigin = origin
    this.#lastReplica = acc
    return acc
  }

  #attemptFigures(index: number): FiguresAccumulator {
    while (this.#perAttempt.length <= index) this.#perAttempt.push(new FiguresAccumulator(this.opts.slowMs, this.opts.errorKind))
    return this.#perAttempt[index]!
  }
}

function minMs(h: Histogram): number {
  return h.totalCount === 0 ? 0 : Math.round(h.minNonZeroValue) / 1000
}
