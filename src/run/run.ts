/**
 * `run(options)`: the library entry point. The targets checked, then the
 * run's plan (run-plan.ts: warm-up, then the plain and/or hedged phases,
 * one after another or interleaved in one window, the hedge delay derived
 * from what was measured) carried out on a window runner (windows.ts), and
 * one RunResult out, its warnings collected in run-warnings.ts. Never
 * prints; interruption (options.signal) ends the run early with
 * `partial: true` and whatever was measured.
 */
import { redactUrl } from '../core/redact.js'
import { printableDeep } from '../core/printable.js'
import { shownOrigin } from '../core/target-url.js'
import { percentileMs } from '../stats/histogram.js'
import type { MeasuredPhase } from '../stats/phase-snapshot.js'
import { checkReachable, preflightTimeoutMs, type Reached } from '../engine/preflight.js'
import { checkGrpcTargets } from './grpc-probe.js'
import { randomSeed, seededRandom } from '../core/random.js'
import { resolveOptions, type ResolvedHedge, type ResolvedRun } from './resolve-options.js'
import { withReflectedSchema } from './grpc-reflection.js'
import { schemaDriftWarning } from './grpc-schema-drift.js'
import { callMessages, type CallMessages } from './grpc-target.js'
import type { RunOptions } from './run-options.js'
import { ServerCounter } from './server-check.js'
import { checkRunOptions } from './option-check.js'
import {
  RESULT_SCHEMA,
  type GrpcClientResult,
  type PhaseName,
  type PhaseResult,
  type RunConfig,
  type RunResult,
  type ServerCrossCheck,
  type TargetServerCount,
} from '../results/run-result.js'
import { buildConfigRecord } from './config-record.js'
import { checkRunId, defaultMaxLateness, deriveRunId, hostName, shardPart, startRecord } from './run-identity.js'
import { waitUntil } from './start-at.js'
import { systemClock, type WallClock } from '../core/wall-clock.js'
import { combineOffsets } from '../stats/clock-offset.js'
import { VERSION } from '../core/version.js'
import { noConnections, type WindowConnections } from './window-runner.js'
import { UsageError } from '../core/errors.js'
import { deriveDelay, laneHedging, planRun, spreadMs, type DerivedDelay, type LaneHedging, type PlannedLane, type PlannedWindow } from './run-plan.js'
import { buildDispatchOptions, createAgent, INTERRUPT_GRACE_MS, type ThreadLane } from './thread-windows.js'
import { windowsFor, type Windows } from './windows.js'
import { RunWarnings } from './run-warnings.js'
import { protocolFor } from './protocol-choice.js'
import type { LaneServerCount } from '../results/sweep-result.js'
import type { HeapSettle } from './settle-heap.js'
import { targetResults } from './target-results.js'

export async function run(given: RunOptions): Promise<RunResult> {
  return (await session(given, null)).execute()
}

/** How one setting of a sweep hedges: its delay (read from the warm-up when a percentile), attempts and budget. */
export interface SettingHedge {
  delay: { percentile: number } | { fixedMs: number }
  maxAttempts: number
  /** null: no budget. */
  budgetPct: number | null
}

/** What `runSettings` measured: the run (warm-up and plain lane), each setting's hedged lane in the order given, and the window's totals. */
export interface SettingsRun {
  run: RunResult
  hedged: PhaseResult[]
  /** The window's connection events: the lanes share the connections, so these are not split among them. */
  connections: WindowConnections
  /** The servers' count of the window, against every lane's attempts. */
  server?: ServerCrossCheck
  /** Each lane's count, when the servers count per lane (the plain lane first, then the settings in order). */
  laneServers?: LaneServerCount[]
  /** A mix (--targets): each target's lane of each setting, by target then setting index (its warm-up and plain lane are in run.targets). */
  targetSettings?: PhaseResult[][]
}

/**
 * A sweep's measuring core (run/sweep.ts): `run()`'s warm-up, then ONE
 * window whose lanes are the plain lane and one hedged lane per setting,
 * each request given to a lane by a seeded shuffle of blocks (each lane once
 * per block, so every lane gets its share and sees the same conditions).
 * Options are a run's; mode and schedule are the sweep's own.
 */
export async function runSettings(given: RunOptions, settings: readonly SettingHedge[]): Promise<SettingsRun> {
  if (settings.length === 0) throw new UsageError('a sweep needs at least one setting')
  // Before anything is sent: the lanes share one thread's window (worker-pool.ts runs one lane per phase name).
  if ((given.workers ?? 1) > 1)
    throw new UsageError(
      "a sweep runs its lanes on one thread: --workers is not supported (the worker threads merge a window's lanes by phase, one plain and one hedged; a sweep's window has a hedged lane per setting)",
    )
  const s = await session({ ...given, mode: 'both', schedule: 'interleaved' }, settings)
  const run = await s.execute()
  return { run, ...s.settingsMeasured() }
}

async function session(given: RunOptions, settings: readonly SettingHedge[] | null): Promise<RunSession> {
  checkRunOptions(given)
  given.onWait?.('check')
  const options = await withReflectedSchema(given)
  const whole = resolveOptions(options, options.seed ?? randomSeed())
  const cfg = shardPart(whole, options.shard)
  if (options.runId !== undefined) checkRunId(options.runId)
  const names = cfg.urls.map(shownOrigin)
  const reached = await checkReachable(cfg.origins, preflightTimeoutMs(cfg.timeoutMs), { tls: cfg.tls, http2: protocolFor(cfg).transport.http2, names })
  const checked = withStreamLimits(cfg, reached)
  if (checked.grpc) await checkGrpcService(checked, names)
  // Once the servers are known to answer the method: the schema given against the one they serve.
  const drift = checked.grpc ? await schemaDriftWarning(options) : null
  if (drift !== null) options.onWarning?.(drift)
  return new RunSession(checked, options, buildConfigRecord(whole), reached, settings, drift === null ? [] : [drift])
}

/**
 * gRPC: one call to each replica, on connections of their own, refused unless it is a gRPC server with the method
 * (grpc-probe.ts); a mix: with each target's method. A method its proto does not mark idempotent is not called.
 */
async function checkGrpcService(cfg: ResolvedRun, names: readonly string[]): Promise<void> {
  const agent = createAgent(cfg)
  const calls = cfg.targets
    ? [
        ...new Map(
          cfg.targets.map((t) => [
            t.path,
            { probe: { call: t.path.slice(1), given: 'the CALL line of --targets', idempotent: t.idempotent }, opts: buildDispatchOptions(cfg, t) },
          ]),
        ).values(),
      ]
    : [{ probe: { call: cfg.grpc!.call, given: '--call', idempotent: cfg.grpc!.idempotency !== 'IDEMPOTENCY_UNKNOWN' }, opts: buildDispatchOptions(cfg) }]
  try {
    for (const { probe, opts } of calls)
      await checkGrpcTargets(
        agent,
        cfg.origins.map((origin, i) => ({ name: names[i]!, opts: opts.get(origin)! })),
        probe,
      )
  } finally {
    await agent.destroy()
  }
}

/** h2: the streams each server said it takes at once, for the connections (connection-pool.ts); unchanged when none said. */
function withStreamLimits(cfg: ResolvedRun, reached: readonly Reached[]): ResolvedRun {
  const limits = Object.fromEntries(
    cfg.origins.flatMap((origin, i) => {
      const limit = reached[i]?.maxConcurrentStreams ?? null
      return limit === null ? [] : [[origin, limit]]
    }),
  )
  return Object.keys(limits).length > 0 ? { ...cfg, streamLimits: limits } : cfg
}

/** One run carried out: its plan's windows in order, what they measured, its interruption, the grpc-js phase and the shard's identity. */
class RunSession {
  readonly #clock: WallClock
  readonly #startedAt: Date
  readonly #t0 = performance.now()
  /** Wall-clock time the first phase started (for --start-at lateness). */
  #firstPhaseAt: number | null = null
  /** The first window's full collection was done while waiting for --start-at. */
  #settledBeforeStart = false
  /** Where the windows run: on this thread, or on --workers threads (windows.ts). */
  readonly #windows: Windows
  readonly #phases: Partial<Record<PhaseName, PhaseResult>> = {}
  readonly #stats = new Map<PhaseName, MeasuredPhase>()
  /** The one place the run's warnings are collected (run-warnings.ts). */
  readonly #warnings = new RunWarnings()
  /** Per-call data (a gRPC -d template): each call's message, numbered across the run's phases; undefined without one. */
  readonly #messages: CallMessages | undefined
  readonly #server: ServerCounter | null
  #current: PhaseName | null = null
  #interrupted = false
  #grpcClient: GrpcClientResult | null = null
  /** A sweep's settings (runSettings): their hedged lanes' results, by index, and the window's totals. */
  readonly #settingPhases: PhaseResult[] = []
  #sweepWindow: { connections: WindowConnections; server?: ServerCrossCheck; laneServers?: LaneServerCount[] } = { connections: noConnections() }
  /** A mix (--targets): each target's phases, what its delay is derived from, and its derived delay, by target index. */
  readonly #targets: Array<{
    phases: Partial<Record<PhaseName, PhaseResult>>
    stats: Map<PhaseName, MeasuredPhase>
    delay: DerivedDelay | null
    server: TargetServerCount[]
    /** A sweep's: this target's lane of each setting, by index. */
    settings: PhaseResult[]
  }>

  constructor(
    readonly cfg: ResolvedRun,
    readonly options: RunOptions,
    readonly config: RunConfig,
    /** What the pre-run check found of each URL (the address reached, the protocol spoken), by index. */
    readonly reached: readonly Reached[],
    /** A sweep's settings: one window with a hedged lane each (null: a run). */
    readonly settings: readonly SettingHedge[] | null = null,
    /** Warnings said before the run (onWarning), kept first among its own. */
    before: readonly string[] = [],
  ) {
    this.#warnings.add(...before)
    this.#clock = options.wallClock ?? systemClock
    this.#startedAt = new Date(this.#clock())
    this.#messages = callMessages(cfg.grpc, cfg.seed)
    this.#server = options.serverStatsUrl ? new ServerCounter(options.serverStatsUrl) : null
    this.#targets = (cfg.targets ?? []).map(() => ({ phases: {}, stats: new Map(), delay: null, server: [], settings: [] }))
    this.#windows = windowsFor({
      cfg,
      t0: this.#t0,
      clock: this.#clock,
      random: seededRandom(cfg.seed),
      messages: this.#messages,
      sink: options.requestSink,
      server: this.#server,
    })
  }

  async execute(): Promise<RunResult> {
    const signal = this.options.signal
    const onAbort = (): void => this.#interrupt()
    const onStopNow = (): void => this.#interrupt(0)
    if (signal?.aborted) this.#interrupt()
    signal?.addEventListener('abort', onAbort, { once: true })
    this.options.stopNow?.addEventListener('abort', onStopNow, { once: true })
    try {
      const start = this.options.startAt
      if (start !== undefined) {
        // Threads take a while to start: not after the agreed time. Nor the first window's full collection
        // (10-30 ms, with exposing gc): done while waiting, here or in every worker, so that the start is on
        // time (one process started 32-36 ms after --start-at on an idle machine).
        await this.#windows.prepare()
        this.#settledBeforeStart = true
        this.options.onWait?.('start')
        if (!(await waitUntil(start, this.#clock, signal))) this.#interrupt()
      }
      this.options.onWait?.(null)
      await this.#phasesInOrder()
      await this.#grpcClientPhase()
    } finally {
      signal?.removeEventListener('abort', onAbort)
      this.options.stopNow?.removeEventListener('abort', onStopNow)
      await this.#windows.close()
    }
    return this.#result()
  }

  /** The plan (run-plan.ts) carried out: its windows in order, the hedge delay derived when the plan says. */
  async #phasesInOrder(): Promise<void> {
    const plan = planRun(this.cfg, this.settings?.length ?? null)
    let delay: DerivedDelay | null = null
    for (const window of plan.windows) {
      if (!this.#interrupted)
        await this.#runWindow(
          window,
          window.lanes.map((lane) => this.#laneSpec(lane, delay, plan.delayFrom)),
        )
      // A run stopped by Ctrl-C has no hedge delay to warn about. A mix derives each target's own.
      if (window.derivesDelay && !this.#interrupted) {
        if (window.targets) for (const t of this.#targets.keys()) this.#targets[t]!.delay = this.#targetDelay(t, window.lanes[0]!.name)
        else delay = this.#deriveDelay(window.lanes[0]!.name)
      }
      if (window.lanes[0]!.name === 'warmup') this.#reportWarmup()
      if (this.#interrupted) return
    }
  }

  /** A planned lane as the window runs it: a hedged lane's delay is the run's, derived before (or from `delayFrom` now); a setting's its own. */
  #laneSpec(lane: PlannedLane, delay: DerivedDelay | null, delayFrom: PhaseName | null): ThreadLane {
    const target = lane.target === undefined ? {} : { target: lane.target }
    if (!lane.hedged) return { name: lane.name, hedge: null, ...(lane.steadyAfter === undefined ? {} : { steadyAfter: lane.steadyAfter }), ...target }
    if (lane.target !== undefined && lane.setting === undefined) {
      const own = this.#targets[lane.target]!
      own.delay ??= this.#targetDelay(lane.target, delayFrom)
      return { name: 'hedged', hedge: this.#hedging(own.delay, this.#targetHedge(lane.target)), ...target }
    }
    if (lane.setting === undefined) return { name: 'hedged', hedge: this.#hedging(delay ?? this.#deriveDelay(delayFrom), this.cfg.hedge) }
    const setting = this.settings![lane.setting]!
    const hedge: ResolvedHedge = { ...this.cfg.hedge, delay: setting.delay, maxAttempts: setting.maxAttempts, budgetPct: setting.budgetPct }
    // A mix's setting lane: the setting's delay from the target's own warm-up (the file's hedgeDelay is what the sweep tries instead).
    const derived = lane.target === undefined ? this.#deriveDelay(delayFrom, hedge) : this.#targetDelay(lane.target, delayFrom, hedge)
    return { name: 'hedged', hedge: this.#hedging(derived, hedge), setting: { index: lane.setting, hedge }, ...target }
  }

  /** What runSettings returns beside the run: each setting's lane, and the window's connections and server count. */
  settingsMeasured(): Omit<SettingsRun, 'run'> {
    const perTarget = this.#targets.map((t) => [...t.settings])
    return { hedged: [...this.#settingPhases], ...this.#sweepWindow, ...(perTarget.length > 0 ? { targetSettings: perTarget } : {}) }
  }

  /** options.onWarmup: the warm-up's steady percentiles, from the basis #deriveDelay reads. */
  #reportWarmup(): void {
    const basis = this.#stats.get('warmup')?.delayBasis()
    this.options.onWarmup?.((percentile) => (basis && basis.totalCount > 0 ? percentileMs(basis, percentile) : null))
  }

  /** --hedge-by grpc-js: the hedged calls once more, through grpc-js with the user's service config, on the same replicas. */
  async #grpcClientPhase(): Promise<void> {
    const grpc = this.cfg.grpc
    if (!grpc?.serviceConfig || this.cfg.mode === 'plain' || this.#interrupted) return
    const cfg = this.cfg
    this.#current = 'hedged'
    // Loaded on demand: grpc-js is only needed by this phase.
    const { runGrpcClientPhase } = await import('./grpc-js-phase.js')
    this.#grpcClient = await runGrpcClientPhase({
      urls: cfg.urls,
      path: grpc.path,
      message: grpc.message,
      ...(this.#messages ? { nextMessage: this.#messages.message } : {}),
      metadata: cfg.headers,
      tls: cfg.tls,
      serviceConfig: grpc.serviceConfig,
      maxRecvBytes: grpc.maxRecvBytes,
      concurrency: cfg.concurrency,
      requests: cfg.requests,
      durationMs: cfg.durationMs,
      timeoutMs: cfg.timeoutMs,
      // The same request as the other phases: its deadline and its idempotency key.
      deadlineMs: cfg.hedge.deadlineMs,
      idempotencyKey: cfg.hedge.idempotencyKey,
      warmup: cfg.warmup,
      slowMs: cfg.slowMs,
      server: this.#server,
      ...(this.options.signal ? { signal: this.options.signal } : {}),
      ...(this.options.stopNow ? { stopNow: this.options.stopNow } : {}),
      graceMs: INTERRUPT_GRACE_MS,
    })
  }

  /** One window of the plan on the run's window runner; its lanes' results filed by phase (a sweep's setting lanes by index). */
  async #runWindow(window: PlannedWindow, lanes: ThreadLane[]): Promise<void> {
    const phase = lanes[lanes.length - 1]!.name
    const outcome = await this.#windows.run({
      lanes,
      size: window.size,
      choice: window.choice,
      targets: window.targets,
      measured: window.measured,
      settle: this.#heapSettle(),
      spreadMs: this.#spreadMs(window.size.durationMs),
      started: () => {
        this.#current = phase
        return this.#phaseStarts()
      },
      onProgress: this.#progress(phase, window.size.requests),
      onLanes: this.options.onWindow,
    })
    if (!outcome) return
    // A mix's outcome has a lane per phase (its targets' lanes merged), in the order of each phase's first target lane.
    const phaseLanes = lanes.filter((l) => (l.target ?? 0) === 0)
    for (const [i, { result, measured, targets }] of outcome.lanes.entries()) {
      const setting = phaseLanes[i]!.setting
      if (setting) this.#settingPhases[setting.index] = result
      else {
        this.#phases[result.name] = result
        this.#stats.set(result.name, measured)
      }
      for (const [t, own] of (targets ?? []).entries()) {
        if (setting) {
          this.#targets[t]!.settings[setting.index] = own.result
          continue
        }
        this.#targets[t]!.phases[own.result.name] = own.result
        this.#targets[t]!.stats.set(own.result.name, own.measured)
      }
    }
    if (outcome.sweep) this.#sweepWindow = outcome.sweep
    for (const [t, count] of (outcome.targetServers ?? []).entries()) this.#targets[t]!.server.push(count)
  }

  /** How long the next window spreads its slots' first requests over (run-plan.ts): from the median of the phase that ran last. */
  #spreadMs(durationMs: number | null): number {
    const phases = Object.values(this.#phases) // in the order they ran
    return spreadMs(phases[phases.length - 1]?.latencyMs.p50 ?? 0, durationMs)
  }

  /** How the heap is settled before the next window, here or in the workers: the run's first window (no phase has started yet) after a full collection, the later ones after a young one (settle-heap.ts). */
  #heapSettle(): HeapSettle {
    return this.#firstPhaseAt === null && !this.#settledBeforeStart ? 'full' : 'young'
  }

  /** A window starts now: its wall-clock time, which is the run's real start when it is the first. */
  #phaseStarts(): number {
    const now = this.#clock()
    this.#firstPhaseAt ??= now
    return now
  }

  /** A hedged lane's set-up from its derived delay (run-plan.ts), its warnings collected. */
  #hedging(derived: DerivedDelay, hedge: ResolvedHedge): LaneHedging {
    const { value, warnings } = laneHedging(derived, hedge, this.cfg.timeoutMs)
    this.#warnings.add(...warnings)
    return value
  }

  /** The hedge delay from a measured phase (or fixed); `from` null = nothing measured. */
  #deriveDelay(from: PhaseName | null, hedge: ResolvedHedge = this.cfg.hedge): DerivedDelay {
    const { value, warnings } = deriveDelay(hedge, from, from ? this.#stats.get(from) : undefined, this.cfg.fanout)
    this.#warnings.add(...warnings)
    return value
  }

  /** A target's hedging: the run's, with the targets file's delay when it gives one. */
  #targetHedge(target: number): ResolvedHedge {
    const own = this.cfg.targets![target]!.delay
    return own ? { ...this.cfg.hedge, delay: own } : this.cfg.hedge
  }

  /** A target's delay (by default the run's hedging with its file's delay), from its own lane of the measured phase `from`, or fixed; its warnings name it. */
  #targetDelay(target: number, from: PhaseName | null, hedge = this.#targetHedge(target)): DerivedDelay {
    const stats = from ? this.#targets[target]!.stats.get(from) : undefined
    const { value, warnings } = deriveDelay(hedge, from, stats, this.cfg.fanout, this.cfg.targets!.length)
    const spec = this.cfg.targets![target]!
    // A write sent once never waits on its delay: how well it was measured is nothing to warn about.
    if (spec.repeatable) this.#warnings.add(...warnings.map((w) => `${spec.name}: ${w}`))
    return value
  }

  /** A window's progress, to options.onProgress. */
  #progress(phase: PhaseName, total: number | null): ((done: number, elapsedMs: number) => void) | undefined {
    const onProgress = this.options.onProgress
    return onProgress && ((done, elapsedMs) => onProgress({ phase, done, total, elapsedMs }))
  }

  /** Stop sending; in-flight requests get `graceMs` (by default INTERRUPT_GRACE_MS), then they are aborted. */
  #interrupt(graceMs?: number): void {
    this.#interrupted = true
    this.#windows.stop(graceMs)
  }

  #result(): RunResult {
    const cfg = this.cfg
    const identity = this.#identity() // first: a late start adds a warning
    const server = this.#server
    const warnings = this.#warnings.finish({
      cfg,
      options: this.options,
      peers: this.reached.map((r) => r.address),
      serverStats: server && { url: server.statsUrl, failure: server.failure },
      phases: Object.values(this.#phases),
      grpcClient: this.#grpcClient,
    })
    // What a target said (a grpc-message, a stats endpoint's replica names) is printed: it must not drive the terminal.
    return printableDeep({
      schema: RESULT_SCHEMA,
      version: VERSION,
      label: cfg.label,
      startedAt: this.#startedAt.toISOString(),
      finishedAt: new Date(this.#clock()).toISOString(),
      partial: this.#interrupted,
      stoppedIn: this.#interrupted ? this.#current : null,
      config: this.config,
      phases: this.#phases,
      warnings,
      ...identity,
      ...(this.#grpcClient ? { grpcClient: this.#grpcClient } : {}),
      protocols: cfg.urls.map((url, i) => ({ url: redactUrl(url, cfg.showSecret), protocol: this.reached[i]!.protocol })),
      ...(cfg.targets
        ? {
            targets: targetResults(cfg.targets, this.#targets),
          }
        : {}),
    }) as RunResult
  }

  /** Run id, shard, host, start and clock offset: what a merge of shards checks and reports. */
  #identity(): Pick<RunResult, 'runId' | 'shard' | 'host' | 'start' | 'clock'> {
    const { startAt, shard, runId } = this.options
    const out: Pick<RunResult, 'runId' | 'shard' | 'host' | 'start' | 'clock'> = {
      runId: runId ?? deriveRunId(startAt ?? this.#startedAt.getTime(), this.config),
      host: hostName(),
    }
    if (shard) out.shard = { index: shard.index, count: shard.count }
    if (startAt !== undefined) {
      const record = startRecord(startAt, this.#firstPhaseAt ?? this.#clock(), this.options.maxStartLatenessMs ?? defaultMaxLateness(this.cfg))
      out.start = record
      this.#warnings.lateStart(record)
    }
    const clock = combineOffsets(this.#windows.clockOffsets())
    if (clock) out.clock = clock
    return out
  }
}
