/**
 * The one result shape, declared once. Each part is a valibot schema and
 * its TypeScript type is inferred from it: the engine fills a RunResult,
 * every renderer (text, JSON, CSV, HTML, compare) reads it, and a saved run
 * is exactly this object as JSON, so `hedgebench report FILE` can re-render
 * it. result-json.ts's parseResult checks a saved file against
 * RunResultSchema, each problem one line naming the field. Objects are
 * loose: a field this version does not know passes through untouched.
 */
import { histogramBoundProblem } from '../core/histogram-payload.js'
import { bool, count, exact, type Infer, list, loose, num, oneOf, record, str, v, whole } from '../core/schema.js'

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

const PHASES = ['warmup', 'plain', 'hedged'] as const
const PhaseNameSchema = oneOf(PHASES)
export type PhaseName = Infer<typeof PhaseNameSchema>
export const PHASE_NAMES: readonly PhaseName[] = PHASES

const n = num()
/** A count of things (requests, attempts, bytes): a whole number from 0, exact as a double. */
const c = count()
const cOrNull = v.nullable(count(`must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, or null`))
const nOrNull = v.nullable(num(-Infinity, Infinity, 'must be a number or null'))
const sOrNull = v.nullable(str('must be a string or null'))
const opt = v.optional

/** Latency figures in milliseconds, read from an HDR histogram of microseconds. */
const LatencySummarySchema = loose({
  min: n,
  mean: n,
  stddev: n,
  p10: n,
  p25: n,
  p50: n,
  p75: n,
  p90: n,
  p95: n,
  p99: n,
  'p99.9': n,
  'p99.99': n,
  max: n,
})
export type LatencySummary = Infer<typeof LatencySummarySchema>

/** Bounds of Figures.errorMessages: a server that puts a request id in every message must not grow a result without end. */
export const MAX_MESSAGES = 20
export const MAX_MESSAGE_CHARS = 200
export const OTHER_MESSAGES = '(other messages)'

export const PERCENTILE_KEYS = ['p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99', 'p99.9', 'p99.99'] as const
export type PercentileKey = (typeof PERCENTILE_KEYS)[number]

const counts = record(c)

/**
 * An HDR histogram (microseconds) as compressed base64. One that would
 * inflate past its bound is refused (core/histogram-payload.ts); a damaged
 * one is kept, and its figures render without it.
 */
const histogram = v.pipe(
  str(),
  v.rawCheck(({ dataset, addIssue }) => {
    const problem = dataset.typed ? histogramBoundProblem(dataset.value) : null
    if (problem !== null) addIssue({ message: problem })
  }),
)
/** The same check for a histogram saved elsewhere (a watch's segments). */
export { histogram as HistogramSchema }

/**
 * The figures every scope reports: a whole phase, one replica, one attempt
 * number. `histogram` is the HDR histogram (microseconds) as compressed
 * base64, so saved runs can be re-rendered and merged exactly.
 */
const figuresEntries = {
  /** Logical requests that finished (ok or not). For a replica: its finished attempts. */
  requests: c,
  /** HTTP requests whose headers were written to a connection. */
  attempts: c,
  /** Finished with a 1xx-3xx status. */
  ok: c,
  /** Finished without a response, or with a status >= 400. */
  errors: c,
  statusCodes: counts,
  /** Transport error kinds by name (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT, "HTTPParserError (invalid content-length)", ...). */
  errorKinds: counts,
  /**
   * Failed answers by the status and the message their server sent with it
   * (gRPC: "UNAVAILABLE: simulated unavailable", as ghz shows them), each
   * message cut to MAX_MESSAGE_CHARS, at most MAX_MESSAGES distinct (the
   * rest under OTHER_MESSAGES). Absent when no answer carried one.
   */
  errorMessages: opt(counts),
  bytes: c,
  latencyMs: LatencySummarySchema,
  slow: loose({ thresholdMs: n, count: c }),
  histogram,
  /**
   * Requests (or attempts) hedgebench aborted itself after the run was
   * interrupted (Ctrl-C): not server errors, and outside `requests`, `errors`
   * and every latency figure. Absent when none.
   */
  interrupted: opt(c),
  /**
   * Of `interrupted`, those that had been in flight longer than the slow
   * threshold when they were aborted, and the longest time any had been:
   * a request hung on a stalled target is outside every latency figure, and
   * these say it was there. Absent when none was interrupted (and in results
   * saved before they were counted).
   */
  interruptedSlow: opt(c),
  interruptedMaxMs: opt(n),
  /**
   * Requests (or attempts) that failed on the generator's machine before
   * reaching the target, by code: EMFILE (the open-file limit, `ulimit -n`),
   * ENFILE, EADDRNOTAVAIL (no local port). Outside `requests`, `errors` and
   * every latency figure, never ejection evidence. Absent when none.
   */
  generatorFailures: opt(counts),
}
const FiguresSchema = loose(figuresEntries)
export type Figures = Infer<typeof FiguresSchema>

const ReplicaFiguresSchema = loose({
  ...figuresEntries,
  url: str(),
  /** Attempts on this replica whose answer was the one used. */
  wins: c,
  /** Attempts on this replica aborted because another attempt won. */
  cancelled: c,
  /** Times outlier ejection took this replica out of rotation in the phase. */
  ejections: opt(c),
})
export type ReplicaFigures = Infer<typeof ReplicaFiguresSchema>

/** A target of a mix (as its rows name it, "POST /c") and its failures among those in a row that ejected a replica. */
const TargetFailuresSchema = loose({ target: str(), failures: c })
export type TargetFailures = Infer<typeof TargetFailuresSchema>

/** One ejection of a replica by outlier detection (--eject-after), times from the phase's start. */
const EjectionEventSchema = loose({
  url: str(),
  atMs: n,
  /** How long it was to stay out, ms (doubles with each ejection of the same replica). */
  forMs: n,
  /** When it was readmitted on probation, or null if still out at the phase's end. */
  readmittedAtMs: nOrNull,
  cause: str(),
  /** A mix (--targets): whose failures the ones in a row were, most first (its targets share the replicas' health); absent outside a mix. */
  targets: opt(list(TargetFailuresSchema)),
})
export type EjectionEvent = Infer<typeof EjectionEventSchema>

/** Hedges the saturation gate held back, by reason. */
const SuppressedHedgesSchema = loose({
  /** A replica answered 429, 503 with Retry-After, or gRPC RESOURCE_EXHAUSTED. */
  overload: c,
  /** Too many recent attempts failed. */
  errorRate: c,
  /** The hedge's replica already had --hedge-max-inflight of our attempts in flight. */
  targetBusy: c,
  /** The hedge's replica had asked for no more attempts for a while (gRPC grpc-retry-pushback-ms). */
  pushback: c,
})
export type SuppressedHedges = Infer<typeof SuppressedHedgesSchema>

const CancelModeSchema = oneOf(['abort', 'ignore'])
export type CancelMode = Infer<typeof CancelModeSchema>

/** What hedging did in a phase. Counters are exact; they add up. */
const HedgingStatsSchema = loose({
  delayMs: n,
  /** Human wording of where the delay came from: "p95 of 1000 warm-up requests = 14.8 ms". */
  delaySource: str(),
  /** The delay was measured on the last `requests` of the `of` warm-up requests (absent when it was not, and in older results). */
  warmupBasis: opt(loose({ requests: c, of: c })),
  adaptive: bool(),
  /** Delay actually used per request, over the phase (adaptive delays move). */
  delayUsedMs: loose({ min: n, p50: n, max: n }),
  maxAttempts: c,
  /** Extra load the budget allows, %; null = no budget (--hedge-budget off). */
  budgetPct: nOrNull,
  parallel: bool(),
  /** Tied requests (--tied). */
  tied: bool(),
  cancelMode: CancelModeSchema,
  /** Hedges whose headers reached the wire (like `attempts`). */
  hedgesSent: c,
  /**
   * Attempts started but stopped before they reached the wire (never seen by
   * a server): hedges, and originals still waiting for a connection when a
   * hedge won (counted here too; hedgesSent + unsent can exceed the requests
   * that launched a hedge by those).
   */
  unsent: c,
  /** Of `unsent`, the originals; the rest were hedges. Absent in results saved before they were told apart. */
  unsentOriginals: opt(c),
  /** --tied: copies their server answered 409 (dropped: the twin started elsewhere); kept out of the replicas' errors. Absent otherwise. */
  tiedDropped: opt(c),
  /** Hedges sent per logical request (call), in percent: results/extra-load.ts. */
  extraLoadPct: n,
  /** Share of logical requests that fired at least one hedge, in percent. */
  triggerRate: n,
  hedgeWins: c,
  originalWins: c,
  /** Attempts on the wire aborted because another attempt won (or the deadline passed). */
  cancelled: c,
  /** Answers that arrived after the request was already decided; discarded. */
  lateDiscarded: c,
  budgetDenied: c,
  /** Requests slower than --slow that wanted a hedge the budget refused (absent in runs saved before it was counted). */
  slowBudgetDenied: opt(c),
  deadlineSuppressed: c,
  /** Hedges fired at once because an attempt failed with a non-fatal status or a connection error. */
  nonFatalTriggered: c,
  /** Hedges not sent because the replicas showed saturation, by reason (hedging/saturation-gate.ts). */
  suppressed: SuppressedHedgesSchema,
  /**
   * How long losing attempts that reached the wire kept running after the
   * request was decided: until the abort took effect (--cancel abort), or
   * until their answer arrived (--cancel ignore). The 'Controlled Duplication' article's "loser runtime".
   */
  loserRuntimeMs: opt(loose({ count: c, p50: n, p99: n, max: n, histogram })),
  /** Logical requests by the attempts they launched: {"1": 3900, "2": 100}. */
  attemptsPerRequest: opt(counts),
  /** Hedge timer lateness (fire time minus intended fire time). */
  timerLatenessMs: loose({ p50: n, p99: n, max: n }),
  /** Latency of each attempt number (0 = original) measured from its own start. */
  perAttempt: list(loose({ attempt: c, count: c, latencyMs: LatencySummarySchema, histogram })),
})
export type HedgingStats = Infer<typeof HedgingStatsSchema>

/** One point per second of a phase, for the over-time charts. */
const TimelinePointSchema = loose({
  /** Seconds since the phase started. */
  t: n,
  requests: c,
  errors: c,
  p50Ms: n,
  p99Ms: n,
  hedges: c,
  /** Median hedge delay used in that second, when the phase hedges. */
  delayMs: nOrNull,
})
export type TimelinePoint = Infer<typeof TimelinePointSchema>

/**
 * A schedule (ghz's --load-schedule, --concurrency-schedule): the open-loop
 * rate, or the closed loop's requests in flight, of each measured window,
 * from its start. const: `start` (-q, -c) throughout; step: `start`, then
 * `step` more every `stepMs` until `end` or `maxMs`, then held; line: the
 * same with a step every second (ghz's slope per second).
 */
const LoadScheduleSchema = loose({
  kind: oneOf(['const', 'step', 'line']),
  /** Requests/s (or in flight) at the window's start. */
  start: n,
  /** Added at each step (negative: a step down); 0 for const. */
  step: n,
  /** The rate the steps stop at, or null: they stop at maxMs, or go on to the window's end. */
  end: nOrNull,
  stepMs: n,
  /** No step after this long, or null. */
  maxMs: nOrNull,
})
export type LoadSchedule = Infer<typeof LoadScheduleSchema>

/**
 * One second of a scheduled window (--load-schedule, --concurrency-schedule):
 * what the schedule asked beside what was sent. The window's, not a lane's:
 * interleaved phases share one window, and so one series.
 */
const ScheduleSecondSchema = loose({
  /** Seconds since the window started. */
  t: n,
  /** --load-schedule: the asked requests/s at the second's start. */
  rate: opt(n),
  /** --load-schedule: sends the schedule placed in this second. */
  asked: opt(c),
  /** --concurrency-schedule: the requests in flight asked at the second's start. */
  concurrency: opt(c),
  /** Sends that left in this second (by their actual send): the rate achieved. */
  sent: c,
})
export type ScheduleSecond = Infer<typeof ScheduleSecondSchema>

/** How late the generator's event loop ran, sampled every 10 ms over a phase. */
const EventLoopDelaySchema = loose({
  p50: n,
  p99: n,
  max: n,
  /** Samples taken; 0 when the phase was shorter than one, and the figures above are no measurement (absent in runs saved before it was counted). */
  samples: opt(c),
})
export type EventLoopDelay = Infer<typeof EventLoopDelaySchema>

/**
 * The generator's garbage-collection pauses during a phase (every thread
 * that sends load; worker threads summed). Each one stops the thread that
 * reads the clock while the answers in flight wait.
 */
const GcPausesSchema = loose({
  /** Collections of every kind. */
  count: c,
  /** Young-generation collections (scavenges) among them. */
  young: c,
  totalMs: n,
  /** The longest single pause. */
  maxMs: n,
})
export type GcPauses = Infer<typeof GcPausesSchema>

/** The generator checking itself: was it the bottleneck? */
const GeneratorHealthSchema = loose({
  eventLoopDelayMs: EventLoopDelaySchema,
  /** Process CPU time / wall time, in percent of one core. */
  cpuPct: n,
  /** Threads that generated the load (--workers; 1 without). Not the machine's cores: see machineCores. */
  cores: c,
  saturated: bool(),
  warnings: list(str()),
  /** What made `saturated` true: the CPU share, the event-loop delay, or both. */
  saturatedBy: opt(list(oneOf(['cpu', 'event-loop', 'gc']))),
  /** False when the phase was too short for its CPU share to mean anything (start-up, JIT and GC threads dominate); no CPU verdict then. */
  cpuJudged: bool(),
  /** Logical cores of the machine (os.availableParallelism()). */
  machineCores: opt(c),
  /** Local ports the machine connects from (Linux's ip_local_port_range), for the TIME_WAIT estimate; absent elsewhere and in older results. */
  ephemeralPorts: opt(c),
  /** Garbage-collection pauses over the phase (absent in runs saved before it was measured). */
  gc: opt(GcPausesSchema),
})
export type GeneratorHealth = Infer<typeof GeneratorHealthSchema>

/**
 * Attempts the client cancelled sooner than `withinMs` after writing them
 * (--cross-check-grace): a server may drop a stream reset that early before
 * its handler runs (gRPC C-core does), so it may never count them.
 */
const EarlyCancelsSchema = loose({ withinMs: n, count: c })
export type EarlyCancels = Infer<typeof EarlyCancelsSchema>

/** Server-side counts beside the client's (built-in target or --server-stats). */
export const ServerCrossCheckSchema = loose({
  received: c,
  completed: c,
  cancelled: c,
  hedgeHeader: c,
  clientAttempts: c,
  match: bool(),
  /** Requests that began executing (copies included): the work actually done. Targets that do not report it leave it out. */
  started: opt(c),
  /** Tied copies the target dropped before they started (--tied). */
  tiedDropped: opt(c),
  /** Started requests the target stalled on purpose (the simulated replicas): each slow whatever the client, so the slow count is at least this. */
  stalled: opt(c),
  /** Per replica: busy time over the phase's wall time (mean requests executing at once), for targets that report busyMs. */
  utilisation: opt(list(loose({ url: str(), busy: n }))),
  /** The client's early cancels over the same window (absent in results saved before they were counted): a shortfall within them is explained. */
  earlyCancels: opt(EarlyCancelsSchema),
  /**
   * The phases these counts cover when one window ran several (--schedule
   * interleaved): the server cannot tell their requests apart, so the one
   * count is given once, with the last of them. Absent: this phase alone.
   */
  phases: opt(list(PhaseNameSchema)),
})
export type ServerCrossCheck = Infer<typeof ServerCrossCheckSchema>

/** One stage of an attempt's time, over the attempts that went through it. */
const StageSummarySchema = loose({
  count: c,
  p50: n,
  p99: n,
  max: n,
  /** HDR histogram (base64), for an exact merge of worker threads. */
  histogram,
})
export type StageSummary = Infer<typeof StageSummarySchema>

/** hey's Details for one attempt number, ms. */
const AttemptDetailsSchema = loose({
  attempt: c,
  /** Dispatch to connection ready, for attempts that opened their connection (DNS + connect + TLS). */
  connect: StageSummarySchema,
  /** Writing the request (headers and body) to the socket. */
  write: StageSummarySchema,
  /** Request written to response headers: the server's time plus the network's. */
  wait: StageSummarySchema,
  /** Response headers to its last byte. */
  read: StageSummarySchema,
})
export type AttemptDetails = Infer<typeof AttemptDetailsSchema>

/** How a merged phase's shards overlapped in time. */
const PhaseWindowSchema = loose({
  /** Milliseconds in which all shards were running; 0 when they did not overlap. */
  overlapMs: n,
  /** From the first shard's start to the last one's end: the phase's durationMs. */
  unionMs: n,
})
export type PhaseWindow = Infer<typeof PhaseWindowSchema>

const PhaseResultObjectSchema = loose({
  ...figuresEntries,
  name: PhaseNameSchema,
  /** Milliseconds since the run started when this phase began. */
  startOffsetMs: n,
  durationMs: n,
  /** Logical requests per second: requests over durationMs (stats/phase-algebra.ts phaseRate; for a merged phase too). */
  rps: n,
  /** Connections opened during the phase (a cancel on HTTP/1.1 closes one). */
  connectionsOpened: c,
  /**
   * Connections closed because the attempt on them was cancelled (HTTP/1.1:
   * undici destroys the socket to stop it, the next attempt reopens one).
   * Absent in results saved before it was measured.
   */
  connectionsClosedByCancel: opt(c),
  /** Cancelled attempts whose HTTP/2 stream was reset (RST_STREAM) while the connection lived on. */
  streamsResetByCancel: opt(c),
  /**
   * HTTP/2 streams the server did not process (above a GOAWAY's
   * last-stream-id, or refused with REFUSED_STREAM) and that were sent again
   * on a new stream: neither errors nor extra attempts (each was counted once,
   * and processed once). Absent in results saved before it was measured.
   */
  streamsResentAfterGoaway: opt(c),
  /** Attempts cancelled soon after their send (see EarlyCancelsSchema); absent in results saved before they were counted. */
  earlyCancels: opt(EarlyCancelsSchema),
  replicas: list(ReplicaFiguresSchema),
  /** Outlier ejections in this phase, in time order; absent when ejection was off. */
  ejections: opt(list(EjectionEventSchema)),
  /** Present when --fanout > 1: latency of the individual calls. */
  calls: opt(loose({ ...figuresEntries, fanout: c })),
  /** Present when the phase hedged. */
  hedging: opt(HedgingStatsSchema),
  /** Open-loop (-q) runs: service time measured from the actual send (wrk2 -U). */
  serviceTime: opt(loose({ latencyMs: LatencySummarySchema, histogram, lateSends: c })),
  /**
   * hey's "Details": where the time of completed attempts went, per attempt
   * number (0 = original; hedges only in a hedged phase). See
   * stats/timing-breakdown.ts.
   */
  details: opt(list(AttemptDetailsSchema)),
  timeline: list(TimelinePointSchema),
  /** A scheduled window (--load-schedule, --concurrency-schedule): per second, what was asked beside the sends. Absent without one. */
  scheduleSeconds: opt(list(ScheduleSecondSchema)),
  /** --skip-first: requests this phase sent first and left out of every figure. Absent without it. */
  skipped: opt(c),
  /**
   * The same every 100 ms (t still in seconds: 0.1, 0.2 ...), for phases
   * that lasted at most 5 s, so a short phase still has a shape over time.
   * Absent for longer phases and with --workers.
   */
  timelineFine: opt(list(TimelinePointSchema)),
  generator: GeneratorHealthSchema,
  server: opt(ServerCrossCheckSchema),
  /** Wall-clock start and end of the phase (epoch ms, this generator's clock), so a merge can check that shards overlapped. */
  wall: opt(loose({ startMs: n, endMs: n })),
  /** A merged phase: the union of the shards' windows (its durationMs) and the part of it in which every shard ran. */
  window: opt(PhaseWindowSchema),
})
/**
 * An interface, and the schema typed by it, rather than the inferred type
 * alone: a result holds phases in several places (the run's, each target's
 * of a mix), and TypeScript expanding the inferred type at each of them in
 * a program that awaits run() went past its depth limit (TS2589). Named
 * once, it is expanded once.
 */
export interface PhaseResult extends Infer<typeof PhaseResultObjectSchema> {}
export const PhaseResultSchema: v.GenericSchema<v.InferInput<typeof PhaseResultObjectSchema>, PhaseResult> = PhaseResultObjectSchema

const ModeSchema = oneOf(['plain', 'hedged', 'both'], 'must be "plain", "hedged" or "both"')
export type Mode = Infer<typeof ModeSchema>
const ScheduleSchema = oneOf(['sequential', 'interleaved'])
export type Schedule = Infer<typeof ScheduleSchema>

/** Outlier ejection settings (hedging/replica-health.ts): out after this many failures in a row, for a back-off that doubles. */
const EjectionConfigSchema = loose({
  consecutiveFailures: c,
  baseEjectionMs: n,
  maxEjectionMs: n,
})
export type EjectionConfig = Infer<typeof EjectionConfigSchema>

/** Hedge suppression during saturation (hedging/saturation-gate.ts). */
const SaturationConfigSchema = loose({
  /** Fraction of recent attempts failing above which hedges stop; null = never. */
  maxErrorRate: nOrNull,
  /** Our attempts in flight on a replica at which hedges to it stop; null = no limit. */
  maxInflight: nOrNull,
  /** Obey 429, 503 + Retry-After, RESOURCE_EXHAUSTED and pushback answers. */
  obeyOverload: bool(),
})
export type SaturationConfig = Infer<typeof SaturationConfigSchema>

const GrpcConfigSchema = loose({
  /** `package.Service/Method`. */
  call: str(),
  /** Where the schema came from: the --proto or --protoset file as given, or "server reflection". */
  schema: str(),
  /** --hedge-by: hedgebench alone, or a grpc-js client too. */
  hedgeBy: oneOf(['hedgebench', 'grpc-js']),
  /** --service-config as compact JSON (grpc-js), or null. */
  serviceConfig: sOrNull,
})
export type GrpcConfig = Infer<typeof GrpcConfigSchema>

const URLS = 'must be a non-empty array of URLs'

/** How the run was configured, with credentials already redacted. */
const RunConfigSchema = loose(
  {
    urls: whole(v.pipe(list(str()), v.minLength(1)), URLS),
    method: str(),
    headers: record(str()),
    /** Names that look like credentials but were written as they are, knowingly (--show-secret): the renderers keep them too. Absent when none. */
    showSecrets: opt(list(str())),
    bodyBytes: c,
    concurrency: c,
    /** Requests per measured phase, or null when the phase is timed (-z). */
    requests: cOrNull,
    durationMs: nOrNull,
    /** Global requests/s (-q), or null for closed loop. */
    rate: nOrNull,
    /** --load-schedule: each measured window's rate over time (`rate` is then its start, the warm-up's rate). Absent without one. */
    loadSchedule: opt(LoadScheduleSchema),
    /** --concurrency-schedule: each measured window's requests in flight over time (closed loop; `concurrency` is then the most, the warm-up runs at its start). Absent without one. */
    concurrencySchedule: opt(LoadScheduleSchema),
    /** --skip-first: requests each measured phase sends first and does not count. Absent without it. */
    skipFirst: opt(c),
    timeoutMs: n,
    mode: ModeSchema,
    schedule: ScheduleSchema,
    warmup: c,
    slowMs: n,
    http2: bool(),
    keepAlive: bool(),
    fanout: c,
    workers: c,
    /** --connections: HTTP/2 sessions per replica, the streams spread over them. Absent when not given (one, and another only when its streams are all in use), and in results saved before it existed. */
    connections: opt(c),
    profile: sOrNull,
    /** Outlier ejection; null when off (--no-eject, or one replica). */
    eject: v.nullable(EjectionConfigSchema),
    /** Hedge suppression during saturation; null when off (--no-suppress). */
    saturation: v.nullable(SaturationConfigSchema),
    /** Seed of the client's random choices: --seed replays them. */
    seed: opt(n),
    /** gRPC targets: what was called and who hedged it, so that two such runs can be told apart. Absent for HTTP and in results saved before it was recorded. */
    grpc: opt(GrpcConfigSchema),
    hedge: loose({
      delay: str(),
      adaptive: bool(),
      adaptiveWindow: str(),
      delayMinMs: n,
      delayMaxMs: n,
      maxAttempts: c,
      budgetPct: nOrNull,
      nonFatalStatus: list(c),
      deadlineMs: nOrNull,
      minHedgeWindowMs: nOrNull,
      parallel: bool(),
      /** Tied requests (--tied): two copies at once, the first server to start one drops the other. */
      tied: bool(),
      cancel: CancelModeSchema,
      header: sOrNull,
      idempotencyKey: bool(),
      unsafeHedge: bool(),
      /**
       * The rule that allowed sending a request twice ("GET is idempotent",
       * "idempotency_level = IDEMPOTENT in the proto", "--idempotency-key",
       * "--unsafe-hedge"); null when nothing was hedged (--mode plain). Absent
       * in results saved before it was recorded.
       */
      allowedBy: opt(sOrNull),
    }),
  },
  'is missing',
)
export type RunConfig = Infer<typeof RunConfigSchema>

/**
 * The protocol on a replica's connections: HTTP/1.1, HTTP/2 chosen by TLS
 * ALPN ("h2"), or HTTP/2 with prior knowledge over cleartext ("h2c"); a gRPC
 * target's calls travel on one of the two h2 kinds.
 */
const WIRE = ['http/1.1', 'h2', 'h2c'] as const
const WireProtocolSchema = oneOf(WIRE)
export type WireProtocol = Infer<typeof WireProtocolSchema>
export const WIRE_PROTOCOLS: readonly WireProtocol[] = WIRE

const ReplicaProtocolSchema = loose({
  /** As in config.urls (credentials redacted). */
  url: str(),
  protocol: WireProtocolSchema,
})
export type ReplicaProtocol = Infer<typeof ReplicaProtocolSchema>

/**
 * What a run's `--hedge-by grpc-js` phase found: the hedged calls made by a
 * real gRPC client (grpc-js) with the user's service config, beside what
 * that config asked for.
 */
const GrpcClientAskedSchema = loose({
  /** hedgingPolicy.maxAttempts (1 = no hedgingPolicy for the method). */
  maxAttempts: c,
  /** hedgingPolicy.hedgingDelay in ms (0 when absent). */
  hedgingDelayMs: n,
  nonFatalStatusCodes: list(str()),
  retryThrottling: v.nullable(loose({ maxTokens: n, tokenRatio: n })),
  /** The load-balancing policy the channel used (round_robin unless the config chose one). */
  loadBalancing: str(),
})
export type GrpcClientAsked = Infer<typeof GrpcClientAskedSchema>

/** A gRPC call counts as over grpc-js's hedgingDelay only beyond this, ms. */
export const GRPC_OVER_DELAY_SLACK_MS = 20

const GrpcClientResultSchema = loose({
  client: str(),
  asked: GrpcClientAskedSchema,
  requests: c,
  ok: c,
  errors: c,
  /** Calls by gRPC code name (OK, UNAVAILABLE, DEADLINE_EXCEEDED, ...). */
  statusCodes: counts,
  latencyMs: LatencySummarySchema,
  /** The calls' latency as an HDR histogram (base64), for compare's intervals. Absent in results saved before it was kept. */
  histogram: opt(histogram),
  slow: loose({ thresholdMs: n, count: c }),
  durationMs: n,
  rps: n,
  /** The deadline each call was given, ms (--deadline, else -t). Absent in results saved before it was recorded. */
  deadlineMs: opt(n),
  /** The generator over this phase: event loop, CPU, GC (as a hedgebench phase's). Absent in results saved before it was measured. */
  generator: opt(GeneratorHealthSchema),
  /** Attempts the client started: channelz calls_started summed over its subchannels. */
  attempts: c,
  /** Per replica address, from channelz. */
  perReplica: list(loose({ address: str(), attempts: c })),
  /** attempts - calls: the copies the client added. */
  hedgesSent: c,
  /** Calls made first through the same client and left out of every figure here (the run's --warmup); absent when none. */
  warmup: opt(c),
  /** Calls answered by attempt N (grpc-previous-rpc-attempts in the response metadata; 0 = the original). */
  winsByAttempt: counts,
  /** Calls that took longer than the hedging delay plus GRPC_OVER_DELAY_SLACK_MS (a timer firing a little late is not a missing hedge): each should have hedged. */
  callsOverDelay: c,
  /** Of those, calls whose response headers arrived before the delay: grpc-js had committed to that attempt. Absent in results saved before it was observed. */
  committedByHeaders: opt(c),
  server: opt(ServerCrossCheckSchema),
  /** What a user would not expect, shown when it happened. */
  caveats: list(str()),
})
export type GrpcClientResult = Infer<typeof GrpcClientResultSchema>

const StartRecordSchema = loose({
  /** The agreed start (ISO 8601), or null when the run started at once. */
  scheduledAt: sOrNull,
  /** First phase start minus the agreed start, ms (0 without --start-at). */
  lateMs: n,
  maxLatenessMs: n,
  /** lateMs > maxLatenessMs: the shard still ran, but a merge says so. */
  late: bool(),
})
export type StartRecord = Infer<typeof StartRecordSchema>

/**
 * Each response's Date header (whole seconds, truncated) says the server's
 * clock read [D, D + 1 s) at some moment between our send and receive, so
 * offset = server - local lies in [D - receive, D + 1000 - send]. The
 * bounds are the intersection over the sampled responses.
 */
const ClockOffsetSchema = loose({
  minMs: n,
  maxMs: n,
  /** Responses whose Date header was read. */
  samples: c,
})
export type ClockOffset = Infer<typeof ClockOffsetSchema>

const GeneratorPhaseSchema = loose({
  requests: c,
  attempts: c,
  rps: n,
  p99Ms: n,
  startMs: n,
  endMs: n,
})
export type GeneratorPhase = Infer<typeof GeneratorPhaseSchema>

const DelayUsedSchema = loose({ min: n, p50: n, max: n })

/** One generator of a merged result. */
const GeneratorRowSchema = loose({
  shard: c,
  /** The shard's own --label (absent in results merged before it was recorded). */
  label: opt(str()),
  host: str(),
  startedAt: str(),
  lateMs: n,
  late: bool(),
  clock: v.nullable(ClockOffsetSchema),
  saturated: bool(),
  /** The hedge delay this shard used (adaptive delays are per shard), or null when it did not hedge. */
  hedgeDelayMs: nOrNull,
  delaySource: sOrNull,
  /** The delay this shard actually used (an adaptive delay moves), or null when it did not hedge. */
  delayUsedMs: opt(v.nullable(DelayUsedSchema)),
  phases: exact({ warmup: opt(GeneratorPhaseSchema), plain: opt(GeneratorPhaseSchema), hedged: opt(GeneratorPhaseSchema) }),
  /** The shard's own warnings, as it reported them. */
  warnings: list(str()),
})
export type GeneratorRow = Infer<typeof GeneratorRowSchema>

const MergeSummarySchema = loose({
  generators: c,
  shardCount: c,
  /** Shards not in the merge (--allow-partial). */
  missing: list(c),
  /** Latest minus earliest first-phase start, ms, by the generators' own clocks. */
  startSpreadMs: n,
  /** Spread of the clock-offset midpoints, ms; null when fewer than two generators measured one. */
  offsetSpreadMs: nOrNull,
  /** The first-phase starts as the target's clock saw them (own start + offset midpoint): what a skewed clock hides. */
  targetStartSpreadMs: nOrNull,
  /** How far apart the offset bounds provably are (0 when they overlap, i.e. the clocks may agree). */
  offsetGapMs: nOrNull,
})
export type MergeSummary = Infer<typeof MergeSummarySchema>

const PROTOCOL_ITEM = `must be {url, protocol} with protocol one of ${WIRE.join(', ')}`

const PhasesSchema = exact(
  { warmup: opt(PhaseResultSchema), plain: opt(PhaseResultSchema), hedged: opt(PhaseResultSchema) },
  'is missing',
  (name) => `has an unknown phase ${JSON.stringify(name)} (known: ${PHASES.join(', ')})`,
)

/**
 * A target's attempts of one window beside the server's count of its path
 * (a target that reports `totals.paths`): `clientAttempts` are those of
 * every target sending that path, which the server cannot tell apart.
 */
const TargetServerCountSchema = loose({ phases: list(PhaseNameSchema), received: c, clientAttempts: c, match: bool() })
export type TargetServerCount = Infer<typeof TargetServerCountSchema>

/** One target of a mix (--targets): what it sent and its own phases; the run's phases are the targets' merged exactly. */
export const TargetResultSchema = loose({
  /** `GET /a`. */
  name: str(),
  method: str(),
  path: str(),
  weight: num(),
  /** True for a write sent once, never hedged (no idempotent method, key or --unsafe-hedge): no hedging setting is deployed for it. Absent: it could be hedged. */
  sentOnce: opt(bool()),
  phases: PhasesSchema,
  /** Per window, the server's count of its path (--server-stats on a target that counts per path). */
  server: opt(list(TargetServerCountSchema)),
})
export type TargetResult = Infer<typeof TargetResultSchema>

export const RunResultSchema = loose({
  schema: v.literal(RESULT_SCHEMA),
  version: str(),
  label: str(),
  startedAt: str(),
  finishedAt: str(),
  /** True when the run was interrupted; `stoppedIn` names the phase. */
  partial: bool(),
  stoppedIn: v.nullable(PhaseNameSchema),
  config: RunConfigSchema,
  phases: PhasesSchema,
  /** Warnings the report must show (single URL hedging, unsafe hedge, generator saturated, ...). */
  warnings: list(str('must be an array of strings'), 'must be an array of strings'),
  /** Names the run the shards belong to (--run-id, or derived from the start time and config). */
  runId: opt(str()),
  /** --shard I/N: this result is shard `index` (0-based) of `count`. Absent on a merged result. */
  shard: opt(loose({ index: c, count: c })),
  /** Host name of the generator. */
  host: opt(str()),
  /** --start-at: when the first phase was to start, and how late it really started. */
  start: opt(StartRecordSchema),
  /** Offset of the target's clock from this generator's (target - local), bounded by the responses' Date headers. */
  clock: opt(ClockOffsetSchema),
  /** A merged result (hedgebench merge): one row per generator, and what the merge checked. */
  generators: opt(list(GeneratorRowSchema)),
  merge: opt(MergeSummarySchema),
  /** --hedge-by grpc-js: the hedged calls as a real grpc-js client made them. */
  grpcClient: opt(GrpcClientResultSchema),
  /**
   * What each replica's connections spoke, in config.urls order, as the
   * pre-run check found it (engine/preflight.ts). Absent in results saved
   * before it was recorded: results/wire-protocol.ts reads it.
   */
  protocols: opt(list(whole(ReplicaProtocolSchema, PROTOCOL_ITEM))),
  /** A mix (--targets): each target's own phases, in the targets file's order. */
  targets: opt(list(TargetResultSchema)),
})
export type RunResult = Infer<typeof RunResultSchema>
