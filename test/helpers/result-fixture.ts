/**
 * Valid RunResult objects for tests, built from real HDR histograms so that
 * every figure (percentiles, encoded histogram, slow count) is consistent
 * with the latencies given. Renderer, compare and HTML tests share these.
 */
import { createHistogram, encodeHistogram, recordMs, summarize } from '../../src/stats/histogram.js'
import { seededRandom } from '../../src/core/random.js'
import { RESULT_SCHEMA } from '../../src/results/run-result.js'
import type {
  Figures,
  GeneratorHealth,
  GrpcClientResult,
  HedgingStats,
  LatencySummary,
  PhaseName,
  PhaseResult,
  ReplicaFigures,
  RunConfig,
  RunResult,
  TimelinePoint,
} from '../../src/results/run-result.js'

export const FIXTURE_URLS = ['http://127.0.0.1:8081/users/42', 'http://127.0.0.1:8082/users/42', 'http://127.0.0.1:8083/users/42']

/** Latencies with a base of 5-15 ms and 1 in `stallEvery` stalled for 1 s (the hedging articles' scenario). */
export function stallingLatencies(count: number, seed = 1, stallEvery = 100): number[] {
  const next = seededRandom(seed)
  return Array.from({ length: count }, (_, i) => ((i + 1) % stallEvery === 0 ? 1000 + next() * 20 : 5 + next() * 10))
}

export function latencyOf(latenciesMs: number[]): { latencyMs: LatencySummary; histogram: string } {
  const h = createHistogram()
  for (const ms of latenciesMs) recordMs(h, ms)
  return { latencyMs: summarize(h), histogram: encodeHistogram(h) }
}

/** Figures of a set of latencies; every request is a 200 unless overridden. */
export function makeFigures(latenciesMs: number[], overrides: Partial<Figures> = {}, slowMs = 1000): Figures {
  const n = latenciesMs.length
  return {
    requests: n,
    attempts: n,
    ok: n,
    errors: 0,
    statusCodes: n > 0 ? { '200': n } : {},
    errorKinds: {},
    bytes: n * 512,
    ...latencyOf(latenciesMs),
    slow: { thresholdMs: slowMs, count: latenciesMs.filter((ms) => ms > slowMs).length },
    ...overrides,
  }
}

export function makeReplica(url: string, latenciesMs: number[], overrides: Partial<ReplicaFigures> = {}): ReplicaFigures {
  return { ...makeFigures(latenciesMs), url, wins: latenciesMs.length, cancelled: 0, ...overrides }
}

/** Splits latencies round-robin over the URLs, as the engine's plain mode does. */
export function roundRobinReplicas(urls: string[], latenciesMs: number[]): ReplicaFigures[] {
  return urls.map((url, r) =>
    makeReplica(
      url,
      latenciesMs.filter((_, i) => i % urls.length === r),
    ),
  )
}

export function makeGenerator(overrides: Partial<GeneratorHealth> = {}): GeneratorHealth {
  return { eventLoopDelayMs: { p50: 0.02, p99: 0.9, max: 3.1 }, cpuPct: 23.5, cores: 1, saturated: false, warnings: [], cpuJudged: true, ...overrides }
}

/** Per-second points; percentiles by sorting (summarizing a histogram per second would make fixtures slow). */
function makeTimeline(latenciesMs: number[], durationMs: number): TimelinePoint[] {
  const seconds = Math.max(1, Math.ceil(durationMs / 1000))
  const perSecond = Math.ceil(latenciesMs.length / seconds)
  return Array.from({ length: seconds }, (_, t) => {
    const slice = latenciesMs.slice(t * perSecond, (t + 1) * perSecond).sort((a, b) => a - b)
    const at = (p: number): number =>
      slice.length === 0 ? 0 : Math.round(slice[Math.min(slice.length - 1, Math.ceil((p / 100) * slice.length) - 1)]! * 1000) / 1000
    return { t, requests: slice.length, errors: 0, p50Ms: at(50), p99Ms: at(99), hedges: 0, delayMs: null }
  })
}

export function makePhase(name: PhaseName, latenciesMs: number[], overrides: Partial<PhaseResult> = {}): PhaseResult {
  const durationMs = overrides.durationMs ?? Math.max(1, Math.round(latenciesMs.reduce((a, b) => a + b, 0) / 4))
  return {
    ...makeFigures(latenciesMs),
    name,
    startOffsetMs: 0,
    durationMs,
    rps: Math.round((latenciesMs.length / durationMs) * 1000 * 100) / 100,
    connectionsOpened: 4,
    replicas: roundRobinReplicas(FIXTURE_URLS.slice(0, 1), latenciesMs),
    timeline: makeTimeline(latenciesMs, durationMs),
    generator: makeGenerator(),
    ...overrides,
  }
}

export function makeHedgingStats(overrides: Partial<HedgingStats> = {}): HedgingStats {
  return {
    delayMs: 14.8,
    delaySource: 'p95 of 1000 warm-up requests = 14.8 ms',
    adaptive: false,
    delayUsedMs: { min: 14.8, p50: 14.8, max: 14.8 },
    maxAttempts: 2,
    budgetPct: 10,
    parallel: false,
    tied: false,
    cancelMode: 'abort',
    hedgesSent: 140,
    unsent: 12,
    unsentOriginals: 2,
    extraLoadPct: 3.5,
    triggerRate: 3.8,
    hedgeWins: 41,
    originalWins: 3959,
    cancelled: 130,
    lateDiscarded: 10,
    budgetDenied: 0,
    deadlineSuppressed: 0,
    nonFatalTriggered: 2,
    suppressed: { overload: 0, errorRate: 0, targetBusy: 0, pushback: 0 },
    timerLatenessMs: { p50: 0.05, p99: 1.2, max: 4.5 },
    perAttempt: [
      { attempt: 0, count: 4000, ...latencyOf(stallingLatencies(4000, 7)) },
      { attempt: 1, count: 140, ...latencyOf(stallingLatencies(140, 8, 1000)) },
    ],
    ...overrides,
  }
}

export function makeConfig(overrides: Partial<RunConfig> = {}): RunConfig {
  return {
    urls: FIXTURE_URLS.slice(0, 1),
    method: 'GET',
    headers: { Authorization: '***', Accept: 'application/json' },
    bodyBytes: 0,
    concurrency: 4,
    requests: 4000,
    durationMs: null,
    rate: null,
    timeoutMs: 20_000,
    mode: 'plain',
    schedule: 'sequential',
    warmup: 0,
    slowMs: 1000,
    http2: false,
    keepAlive: true,
    fanout: 1,
    workers: 1,
    profile: null,
    eject: null,
    saturation: null,
    hedge: {
      delay: 'auto',
      adaptive: false,
      adaptiveWindow: '1000',
      delayMinMs: 0,
      delayMaxMs: 60_000,
      maxAttempts: 2,
      budgetPct: 10,
      nonFatalStatus: [],
      deadlineMs: null,
      minHedgeWindowMs: null,
      parallel: false,
      tied: false,
      cancel: 'abort',
      header: 'x-hedge-attempt',
      idempotencyKey: false,
      unsafeHedge: false,
    },
    ...overrides,
  }
}

/** A completed plain-mode run of 400 requests against one URL. */
export function makeRunResult(overrides: Partial<RunResult> = {}): RunResult {
  return {
    schema: RESULT_SCHEMA,
    version: '0.1.0',
    label: 'fixture',
    startedAt: '2026-11-30T10:00:00.000Z',
    finishedAt: '2026-11-30T10:00:05.000Z',
    partial: false,
    stoppedIn: null,
    config: makeConfig(),
    phases: { plain: makePhase('plain', stallingLatencies(400)) },
    warnings: [],
    ...overrides,
  }
}

/**
 * The seeds' scenario: 3 replicas stalling 1 request in 100 for 1 s; a
 * warm-up, a plain phase with ~1 % over 1 s, and a hedged phase with none.
 * `seed` moves every phase's latencies (shards of one run measure different ones).
 */
export function makeHedgedRun(overrides: Partial<RunResult> = {}, seed = 0): RunResult {
  const warm = stallingLatencies(1000, 3 + 10 * seed)
  const plain = stallingLatencies(4000, 4 + 10 * seed)
  const hedged = stallingLatencies(4000, 5 + 10 * seed).map((ms) => (ms > 1000 ? 14.8 + (ms - 1000) : ms))
  const hedgedReplicas = roundRobinReplicas(FIXTURE_URLS, hedged).map((r, i) => ({ ...r, attempts: r.attempts + 47 - i, cancelled: 43 }))
  const attempts = hedgedReplicas.reduce((sum, r) => sum + r.attempts, 0)
  return makeRunResult({
    label: 'hedged-fixture',
    config: makeConfig({ urls: FIXTURE_URLS, mode: 'both', warmup: 1000 }),
    phases: {
      warmup: makePhase('warmup', warm, { replicas: roundRobinReplicas(FIXTURE_URLS, warm) }),
      plain: makePhase('plain', plain, { startOffsetMs: 3000, replicas: roundRobinReplicas(FIXTURE_URLS, plain) }),
      hedged: makePhase('hedged', hedged, {
        startOffsetMs: 20_000,
        attempts,
        replicas: hedgedReplicas,
        hedging: makeHedgingStats({ hedgesSent: attempts - 4000, extraLoadPct: Math.round((attempts / 4000 - 1) * 10000) / 100 }),
      }),
    },
    ...overrides,
  })
}

/**
 * grpc-js's calls of a run (--hedge-by grpc-js, sweep --verify): 200 calls
 * of the stalling latencies, `hedgesSent` hedges each one extra attempt on
 * one replica, the first attempt winning all but `hedgeWins`.
 */
export function makeGrpcClient(hedgesSent: number, overrides: Partial<GrpcClientResult> = {}, hedgeWins = 0): GrpcClientResult {
  const { latencyMs } = latencyOf(stallingLatencies(200))
  return {
    client: 'grpc-js',
    asked: { maxAttempts: 2, hedgingDelayMs: 40, nonFatalStatusCodes: [], retryThrottling: null, loadBalancing: 'round_robin' },
    requests: 200,
    ok: 200,
    errors: 0,
    statusCodes: { OK: 200 },
    latencyMs,
    slow: { thresholdMs: 150, count: 0 },
    durationMs: 1000,
    rps: 200,
    attempts: 200 + hedgesSent,
    perReplica: [{ address: '127.0.0.1:9', attempts: 200 + hedgesSent }],
    hedgesSent,
    winsByAttempt: hedgeWins > 0 ? { '0': 200 - hedgeWins, '1': hedgeWins } : { '0': 200 },
    callsOverDelay: hedgesSent,
    caveats: [],
    ...overrides,
  }
}
