/**
 * The one result shape. The engine fills it, every renderer (text, JSON, CSV,
 * HTML, compare) reads it, and a saved run is exactly this object as JSON, so
 * `hedgebench report FILE` can re-render it.
 */

/**
 * The saved form's version. A result of an older version is upgraded once,
 * when it is read (results/result-upgrade.ts), so every renderer reads the
 * current shape. @2: a merged phase's `rps` is over its duration (the union
 * of the shards' windows) as every phase's is; @1 had the sum of the shards'
 * rates there and the union rate in `window.rpsUnion`, and left out what
 * results saved before it existed could not have had (no ejection, no
 * saturation gate, no tied requests: upgraded to off; a suppression reason
 * not yet counted: 0; the CPU share: judged, as it then always was).
 */
export const RESULT_SCHEMA = 'hedgebench/result@2'

export type PhaseName = 'warmup' | 'plain' | 'hedged'
export const PHASE_NAMES: readonly PhaseName[] = ['warmup', 'plain', 'hedged']

/** Latency figures in milliseconds, read from an HDR histogram of microseconds. */
export interface LatencySummary {
  min: number
  mean: number
  stddev: number
  p10: number
  p25: number
  p50: number
  p75: number
  p90: number
  p95: number
  p99: number
  'p99.9': number
  'p99.99': number
  max: number
}

/** Bounds of Figures.errorMessages: a server that puts a request id in every message must not grow a result without end. */
export const MAX_MESSAGES = 20
export const MAX_MESSAGE_CHARS = 200
export const OTHER_MESSAGES = '(other messages)'

export const PERCENTILE_KEYS = ['p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99', 'p99.9', 'p99.99'] as const
export type PercentileKey = (typeof PERCENTILE_KEYS)[number]

/**
 * The figures every scope reports: a whole phase, one replica, one attempt
 * number. `histogram` is the HDR histogram (microseconds) as compressed
 * base64, so saved runs can be re-rendered and merged exactly.
 */
export interface Figures {
  /** Logical requests that finished (ok or not). For a replica: its finished attempts. */
  requests: number
  /** HTTP requests whose headers were written to a connection. */
  attempts: number
  /** Finished with a 1xx-3xx status. */
  ok: number
  /** Finished without a response, or with a status >= 400. */
  errors: number
  statusCodes: Record<string, number>
  /** Transport error kinds by name (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT, "HTTPParserError (invalid content-length)", ...). */
  errorKinds: Record<string, number>
  /**
   * Failed answers by the status and the message their server sent with it
   * (gRPC: "UNAVAILABLE: simulated unavailable", as ghz shows them), each
   * message cut to MAX_MESSAGE_CHARS, at most MAX_MESSAGES distinct (the
   * rest under OTHER_MESSAGES). Absent when no answer carried one.
   */
  errorMessages?: Record<string, number>
  bytes: number
  latencyMs: LatencySummary
  slow: { thresholdMs: number; count: number }
  histogram: string
  /**
   * Requests (or attempts) hedgebench aborted itself after the run was
   * interrupted (Ctrl-C): not server errors, and outside `requests`, `errors`
   * and every latency figure. Absent when none.
   */
  interrupted?: number
  /**
   * Of `interrupted`, those that had been in flight longer than the slow
   * threshold when they were aborted, and the longest time any had been:
   * a request hung on a stalled target is outside every latency figure, and
   * these say it was there. Absent when none was interrupted (and in results
   * saved before they were counted).
   */
  interruptedSlow?: number
  interruptedMaxMs?: number
  /**
   * Requests (or attempts) that failed on the generator's machine before
   * reaching the target, by code: EMFILE (the open-file limit, `ulimit -n`),
   * ENFILE, EADDRNOTAVAIL (no local port). Outside `requests`, `errors` and
   * every latency figure, never ejection evidence. Absent when none.
   */
  generatorFailures?: Record<string, number>
}

export interface ReplicaFigures extends Figures {
  url: string
  /** Attempts on this replica whose answer was the one used. */
  wins: number
  /** Attempts on this replica aborted because another attempt won. */
  cancelled: number
  /** Times outlier ejection took this replica out of rotation in the phase. */
  ejections?: number
}

/** One ejection of a replica by outlier detection (--eject-after), times from the phase's start. */
export interface EjectionEvent {
  url: string
  atMs: number
  /** How long it was to stay out, ms (doubles with each ejection of the same replica). */
  forMs: number
  /** When it was readmitted on probation, or null if still out at the phase's end. */
  readmittedAtMs: number | null
  cause: string
}

/** Hedges the saturation gate held back, by reason. */
export interface SuppressedHedges {
  /** A replica answered 429, 503 with Retry-After, or gRPC RESOURCE_EXHAUSTED. */
  overload: number
  /** Too many recent attempts failed. */
  errorRate: number
  /** The hedge's replica already had --hedge-max-inflight of our attempts in flight. */
  targetBusy: number
  /** The hedge's replica had asked for no more attempts for a while (gRPC grpc-retry-pushback-ms). */
  pushback: number
}

/** What hedging did in a phase. Counters are exact; they add up. */
export interface HedgingStats {
  delayMs: number
  /** Human wording of where the delay came from: "p95 of 1000 warm-up requests = 14.8 ms". */
  delaySource: string
  /** The delay was measured on the last `requests` of the `of` warm-up requests (absent when it was not, and in older results). */
  warmupBasis?: { requests: number; of: number }
  adaptive: boolean
  /** Delay actually used per request, over the phase (adaptive delays move). */
  delayUsedMs: { min: number; p50: number; max: number }
  maxAttempts: number
  /** Extra load the budget allows, %; null = no budget (--hedge-budget off). */
  budgetPct: number | null
  parallel: boolean
  /** Tied requests (--tied). */
  tied: boolean
  cancelMode: CancelMode
  /** Hedges whose headers reached the wire (like `attempts`). */
  hedgesSent: number
  /**
   * Attempts started but stopped before they reached the wire (never seen by
   * a server): hedges, and originals still waiting for a connection when a
   * hedge won (counted here too; hedgesSent + unsent can exceed the requests
   * that launched a hedge by those).
   */
  unsent: number
  /** Of `unsent`, the originals; the rest were hedges. Absent in results saved before they were told apart. */
  unsentOriginals?: number
  /** --tied: copies their server answered 409 (dropped: the twin started elsewhere); kept out of the replicas' errors. Absent otherwise. */
  tiedDropped?: number
  /** Hedges sent per logical request (call), in percent: results/extra-load.ts. */
  extraLoadPct: number
  /** Share of logical requests that fired at least one hedge, in percent. */
  triggerRate: number
  hedgeWins: number
  originalWins: number
  /** Attempts on the wire aborted because another attempt won (or the deadline passed). */
  cancelled: number
  /** Answers that arrived after the request was already decided; discarded. */
  lateDiscarded: number
  budgetDenied: number
  /** Requests slower than --slow that wanted a hedge the budget refused (absent in runs saved before it was counted). */
  slowBudgetDenied?: number
  deadlineSuppressed: number
  /** Hedges fired at once because an attempt failed with a non-fatal status or a connection error. */
  nonFatalTriggered: number
  /** Hedges not sent because the replicas showed saturation, by reason (hedging/saturation-gate.ts). */
  suppressed: SuppressedHedges
  /**
   * How long losing attempts that reached the wire kept running after the
   * request was decided: until the abort took effect (--cancel abort), or
   * until their answer arrived (--cancel ignore). The 'Controlled Duplication' article's "loser runtime".
   */
  loserRuntimeMs?: { count: number; p50: number; p99: number; max: number; histogram: string }
  /** Logical requests by the attempts they launched: {"1": 3900, "2": 100}. */
  attemptsPerRequest?: Record<string, number>
  /** Hedge timer lateness (fire time minus intended fire time). */
  timerLatenessMs: { p50: number; p99: number; max: number }
  /** Latency of each attempt number (0 = original) measured from its own start. */
  perAttempt: Array<{ attempt: number; count: number; latencyMs: LatencySummary; histogram: string }>
}

/** One point per second of a phase, for the over-time charts. */
export interface TimelinePoint {
  /** Seconds since the phase started. */
  t: number
  requests: number
  errors: number
  p50Ms: number
  p99Ms: number
  hedges: number
  /** Median hedge delay used in that second, when the phase hedges. */
  delayMs: number | null
}

/** The generator checking itself: was it the bottleneck? */
export interface GeneratorHealth {
  eventLoopDelayMs: EventLoopDelay
  /** Process CPU time / wall time, in percent of one core. */
  cpuPct: number
  /** Threads that generated the load (--workers; 1 without). Not the machine's cores: see machineCores. */
  cores: number
  saturated: boolean
  warnings: string[]
  /** What made `saturated` true: the CPU share, the event-loop delay, or both. */
  saturatedBy?: Array<'cpu' | 'event-loop' | 'gc'>
  /** False when the phase was too short for its CPU share to mean anything (start-up, JIT and GC threads dominate); no CPU verdict then. */
  cpuJudged: boolean
  /** Logical cores of the machine (os.availableParallelism()). */
  machineCores?: number
  /** Local ports the machine connects from (Linux's ip_local_port_range), for the TIME_WAIT estimate; absent elsewhere and in older results. */
  ephemeralPorts?: number
  /** Garbage-collection pauses over the phase (absent in runs saved before it was measured). */
  gc?: GcPauses
}

/** How late the generator's event loop ran, sampled every 10 ms over a phase. */
export interface EventLoopDelay {
  p50: number
  p99: number
  max: number
  /** Samples taken; 0 when the phase was shorter than one, and the figures above are no measurement (absent in runs saved before it was counted). */
  samples?: number
}

/**
 * The generator's garbage-collection pauses during a phase (every thread
 * that sends load; worker threads summed). Each one stops the thread that
 * reads the clock while the answers in flight wait.
 */
export interface GcPauses {
  /** Collections of every kind. */
  count: number
  /** Young-generation collections (scavenges) among them. */
  young: number
  totalMs: number
  /** The longest single pause. */
  maxMs: number
}

/** Server-side counts beside the client's (built-in target or --server-stats). */
export interface ServerCrossCheck {
  received: number
  completed: number
  cancelled: number
  hedgeHeader: number
  clientAttempts: number
  match: boolean
  /** Requests that began executing (copies included): the work actually done. Targets that do not report it leave it out. */
  started?: number
  /** Tied copies the target dropped before they started (--tied). */
  tiedDropped?: number
  /** Per replica: busy time over the phase's wall time (mean requests executing at once), for targets that report busyMs. */
  utilisation?: Array<{ url: string; busy: number }>
  /**
   * The phases these counts cover when one window ran several (--schedule
   * interleaved): the server cannot tell their requests apart, so the one
   * count is given once, with the last of them. Absent: this phase alone.
   */
  phases?: PhaseName[]
}

export interface PhaseResult extends Figures {
  name: PhaseName
  /** Milliseconds since the run started when this phase began. */
  startOffsetMs: number
  durationMs: number
  /** Logical requests per second: requests over durationMs (stats/phase-algebra.ts phaseRate; for a merged phase too). */
  rps: number
  /** Connections opened during the phase (a cancel on HTTP/1.1 closes one). */
  connectionsOpened: number
  /**
   * Connections closed because the attempt on them was cancelled (HTTP/1.1:
   * undici destroys the socket to stop it, the next attempt reopens one).
   * Absent in results saved before it was measured.
   */
  connectionsClosedByCancel?: number
  /** Cancelled attempts whose HTTP/2 stream was reset (RST_STREAM) while the connection lived on. */
  streamsResetByCancel?: number
  /**
   * HTTP/2 streams the server did not process (above a GOAWAY's
   * last-stream-id, or refused with REFUSED_STREAM) and that were sent again
   * on a new stream: neither errors nor extra attempts (each was counted once,
   * and processed once). Absent in results saved before it was measured.
   */
  streamsResentAfterGoaway?: number
  replicas: ReplicaFigures[]
  /** Outlier ejections in this phase, in time order; absent when ejection was off. */
  ejections?: EjectionEvent[]
  /** Present when --fanout > 1: latency of the individual calls. */
  calls?: Figures & { fanout: number }
  /** Present when the phase hedged. */
  hedging?: HedgingStats
  /** Open-loop (-q) runs: service time measured from the actual send (wrk2 -U). */
  serviceTime?: { latencyMs: LatencySummary; histogram: string; lateSends: number }
  /**
   * hey's "Details": where the time of completed attempts went, per attempt
   * number (0 = original; hedges only in a hedged phase). See
   * stats/timing-breakdown.ts.
   */
  details?: AttemptDetails[]
  timeline: TimelinePoint[]
  /**
   * The same every 100 ms (t still in seconds: 0.1, 0.2 ...), for phases
   * that lasted at most 5 s, so a short phase still has a shape over time.
   * Absent for longer phases and with --workers.
   */
  timelineFine?: TimelinePoint[]
  generator: GeneratorHealth
  server?: ServerCrossCheck
  /** Wall-clock start and end of the phase (epoch ms, this generator's clock), so a merge can check that shards overlapped. */
  wall?: { startMs: number; endMs: number }
  /** A merged phase: the union of the shards' windows (its durationMs) and the part of it in which every shard ran. */
  window?: PhaseWindow
}

/** How a merged phase's shards overlapped in time. */
export interface PhaseWindow {
  /** Milliseconds in which all shards were running; 0 when they did not overlap. */
  overlapMs: number
  /** From the first shard's start to the last one's end: the phase's durationMs. */
  unionMs: number
}

export type Mode = 'plain' | 'hedged' | 'both'
export type Schedule = 'sequential' | 'interleaved'
export type CancelMode = 'abort' | 'ignore'

/** Outlier ejection settings (hedging/replica-health.ts): out after this many failures in a row, for a back-off that doubles. */
export interface EjectionConfig {
  consecutiveFailures: number
  baseEjectionMs: number
  maxEjectionMs: number
}

/** Hedge suppression during saturation (hedging/saturation-gate.ts). */
export interface SaturationConfig {
  /** Fraction of recent attempts failing above which hedges stop; null = never. */
  maxErrorRate: number | null
  /** Our attempts in flight on a replica at which hedges to it stop; null = no limit. */
  maxInflight: number | null
  /** Obey 429, 503 + Retry-After, RESOURCE_EXHAUSTED and pushback answers. */
  obeyOverload: boolean
}

/** How the run was configured, with credentials already redacted. */
export interface RunConfig {
  urls: string[]
  method: string
  headers: Record<string, string>
  bodyBytes: number
  concurrency: number
  /** Requests per measured phase, or null when the phase is timed (-z). */
  requests: number | null
  durationMs: number | null
  /** Global requests/s (-q), or null for closed loop. */
  rate: number | null
  timeoutMs: number
  mode: Mode
  schedule: Schedule
  warmup: number
  slowMs: number
  http2: boolean
  keepAlive: boolean
  fanout: number
  workers: number
  /** --connections: HTTP/2 sessions per replica, the streams spread over them. Absent when not given (one, and another only when its streams are all in use), and in results saved before it existed. */
  connections?: number
  profile: string | null
  /** Outlier ejection; null when off (--no-eject, or one replica). */
  eject: EjectionConfig | null
  /** Hedge suppression during saturation; null when off (--no-suppress). */
  saturation: SaturationConfig | null
  /** Seed of the client's random choices: --seed replays them. */
  seed?: number
  /** gRPC targets: what was called and who hedged it, so that two such runs can be told apart. Absent for HTTP and in results saved before it was recorded. */
  grpc?: GrpcConfig
  hedge: {
    delay: string
    adaptive: boolean
    adaptiveWindow: string
    delayMinMs: number
    delayMaxMs: number
    maxAttempts: number
    budgetPct: number | null
    nonFatalStatus: number[]
    deadlineMs: number | null
    minHedgeWindowMs: number | null
    parallel: boolean
    /** Tied requests (--tied): two copies at once, the first server to start one drops the other. */
    tied: boolean
    cancel: CancelMode
    header: string | null
    idempotencyKey: boolean
    unsafeHedge: boolean
    /**
     * The rule that allowed sending a request twice ("GET is idempotent",
     * "idempotency_level = IDEMPOTENT in the proto", "--idempotency-key",
     * "--unsafe-hedge"); null when nothing was hedged (--mode plain). Absent
     * in results saved before it was recorded.
     */
    allowedBy?: string | null
  }
}

export interface GrpcConfig {
  /** `package.Service/Method`. */
  call: string
  /** Where the schema came from: the --proto or --protoset file as given, or "server reflection". */
  schema: string
  /** --hedge-by: hedgebench alone, or a grpc-js client too. */
  hedgeBy: 'hedgebench' | 'grpc-js'
  /** --service-config as compact JSON (grpc-js), or null. */
  serviceConfig: string | null
}

export interface RunResult {
  schema: typeof RESULT_SCHEMA
  version: string
  label: string
  startedAt: string
  finishedAt: string
  /** True when the run was interrupted; `stoppedIn` names the phase. */
  partial: boolean
  stoppedIn: PhaseName | null
  config: RunConfig
  phases: Partial<Record<PhaseName, PhaseResult>>
  /** Warnings the report must show (single URL hedging, unsafe hedge, generator saturated, ...). */
  warnings: string[]
  /** Names the run the shards belong to (--run-id, or derived from the start time and config). */
  runId?: string
  /** --shard I/N: this result is shard `index` (0-based) of `count`. Absent on a merged result. */
  shard?: { index: number; count: number }
  /** Host name of the generator. */
  host?: string
  /** --start-at: when the first phase was to start, and how late it really started. */
  start?: StartRecord
  /** Offset of the target's clock from this generator's (target - local), bounded by the responses' Date headers. */
  clock?: ClockOffset
  /** A merged result (hedgebench merge): one row per generator, and what the merge checked. */
  generators?: GeneratorRow[]
  merge?: MergeSummary
  /** --hedge-by grpc-js: the hedged calls as a real grpc-js client made them. */
  grpcClient?: GrpcClientResult
  /**
   * What each replica's connections spoke, in config.urls order, as the
   * pre-run check found it (engine/preflight.ts). Absent in results saved
   * before it was recorded: results/wire-protocol.ts reads it.
   */
  protocols?: ReplicaProtocol[]
}

/**
 * The protocol on a replica's connections: HTTP/1.1, HTTP/2 chosen by TLS
 * ALPN ("h2"), or HTTP/2 with prior knowledge over cleartext ("h2c"); a gRPC
 * target's calls travel on one of the two h2 kinds.
 */
export type WireProtocol = 'http/1.1' | 'h2' | 'h2c'
export const WIRE_PROTOCOLS: readonly WireProtocol[] = ['http/1.1', 'h2', 'h2c']

export interface ReplicaProtocol {
  /** As in config.urls (credentials redacted). */
  url: string
  protocol: WireProtocol
}

/**
 * What a run's `--hedge-by grpc-js` phase found: the hedged calls made by a
 * real gRPC client (grpc-js) with the user's service config, beside what
 * that config asked for.
 */
export interface GrpcClientAsked {
  /** hedgingPolicy.maxAttempts (1 = no hedgingPolicy for the method). */
  maxAttempts: number
  /** hedgingPolicy.hedgingDelay in ms (0 when absent). */
  hedgingDelayMs: number
  nonFatalStatusCodes: string[]
  retryThrottling: { maxTokens: number; tokenRatio: number } | null
  /** The load-balancing policy the channel used (round_robin unless the config chose one). */
  loadBalancing: string
}

/** A gRPC call counts as over grpc-js's hedgingDelay only beyond this, ms. */
export const GRPC_OVER_DELAY_SLACK_MS = 20

export interface GrpcClientResult {
  client: string
  asked: GrpcClientAsked
  requests: number
  ok: number
  errors: number
  /** Calls by gRPC code name (OK, UNAVAILABLE, DEADLINE_EXCEEDED, ...). */
  statusCodes: Record<string, number>
  latencyMs: LatencySummary
  /** The calls' latency as an HDR histogram (base64), for compare's intervals. Absent in results saved before it was kept. */
  histogram?: string
  slow: { thresholdMs: number; count: number }
  durationMs: number
  rps: number
  /** The deadline each call was given, ms (--deadline, else -t). Absent in results saved before it was recorded. */
  deadlineMs?: number
  /** The generator over this phase: event loop, CPU, GC (as a hedgebench phase's). Absent in results saved before it was measured. */
  generator?: GeneratorHealth
  /** Attempts the client started: channelz calls_started summed over its subchannels. */
  attempts: number
  /** Per replica address, from channelz. */
  perReplica: Array<{ address: string; attempts: number }>
  /** attempts - calls: the copies the client added. */
  hedgesSent: number
  /** Calls made first through the same client and left out of every figure here (the run's --warmup); absent when none. */
  warmup?: number
  /** Calls answered by attempt N (grpc-previous-rpc-attempts in the response metadata; 0 = the original). */
  winsByAttempt: Record<string, number>
  /** Calls that took longer than the hedging delay plus GRPC_OVER_DELAY_SLACK_MS (a timer firing a little late is not a missing hedge): each should have hedged. */
  callsOverDelay: number
  /** Of those, calls whose response headers arrived before the delay: grpc-js had committed to that attempt. Absent in results saved before it was observed. */
  committedByHeaders?: number
  server?: ServerCrossCheck
  /** What a user would not expect, shown when it happened. */
  caveats: string[]
}

export interface StartRecord {
  /** The agreed start (ISO 8601), or null when the run started at once. */
  scheduledAt: string | null
  /** First phase start minus the agreed start, ms (0 without --start-at). */
  lateMs: number
  maxLatenessMs: number
  /** lateMs > maxLatenessMs: the shard still ran, but a merge says so. */
  late: boolean
}

/**
 * Each response's Date header (whole seconds, truncated) says the server's
 * clock read [D, D + 1 s) at some moment between our send and receive, so
 * offset = server - local lies in [D - receive, D + 1000 - send]. The
 * bounds are the intersection over the sampled responses.
 */
export interface ClockOffset {
  minMs: number
  maxMs: number
  /** Responses whose Date header was read. */
  samples: number
}

/** One generator of a merged result. */
export interface GeneratorRow {
  shard: number
  /** The shard's own --label (absent in results merged before it was recorded). */
  label?: string
  host: string
  startedAt: string
  lateMs: number
  late: boolean
  clock: ClockOffset | null
  saturated: boolean
  /** The hedge delay this shard used (adaptive delays are per shard), or null when it did not hedge. */
  hedgeDelayMs: number | null
  delaySource: string | null
  /** The delay this shard actually used (an adaptive delay moves), or null when it did not hedge. */
  delayUsedMs?: HedgingStats['delayUsedMs'] | null
  phases: Partial<Record<PhaseName, GeneratorPhase>>
  /** The shard's own warnings, as it reported them. */
  warnings: string[]
}

export interface GeneratorPhase {
  requests: number
  attempts: number
  rps: number
  p99Ms: number
  startMs: number
  endMs: number
}

export interface MergeSummary {
  generators: number
  shardCount: number
  /** Shards not in the merge (--allow-partial). */
  missing: number[]
  /** Latest minus earliest first-phase start, ms, by the generators' own clocks. */
  startSpreadMs: number
  /** Spread of the clock-offset midpoints, ms; null when fewer than two generators measured one. */
  offsetSpreadMs: number | null
  /** The first-phase starts as the target's clock saw them (own start + offset midpoint): what a skewed clock hides. */
  targetStartSpreadMs: number | null
  /** How far apart the offset bounds provably are (0 when they overlap, i.e. the clocks may agree). */
  offsetGapMs: number | null
}

/** One stage of an attempt's time, over the attempts that went through it. */
export interface StageSummary {
  count: number
  p50: number
  p99: number
  max: number
  /** HDR histogram (base64), for an exact merge of worker threads. */
  histogram: string
}

/** hey's Details for one attempt number, ms. */
export interface AttemptDetails {
  attempt: number
  /** Dispatch to connection ready, for attempts that opened their connection (DNS + connect + TLS). */
  connect: StageSummary
  /** Writing the request (headers and body) to the socket. */
  write: StageSummary
  /** Request written to response headers: the server's time plus the network's. */
  wait: StageSummary
  /** Response headers to its last byte. */
  read: StageSummary
}
