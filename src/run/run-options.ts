/**
 * Typed options for the library API (`run(options)`), in the spirit of
 * vegeta's `NewAttacker(Timeout(d), Workers(n))`: the CLI parses flags into
 * this, a program builds it directly. Durations are milliseconds.
 */
import type { HedgeDelay } from '../core/delay-spec.js'
import type { EjectionPolicy } from '../hedging/replica-health.js'
import type { SaturationPolicy } from '../hedging/saturation-gate.js'
import type { CancelMode, Mode, PhaseName, Schedule } from '../results/run-result.js'
import { WHOLE, exact, type Infer, v } from '../core/schema.js'
import { checkHeader } from '../core/header-parse.js'
import type { RequestSink } from '../results/request-record.js'
import type { Shard } from './shard.js'
import type { PhaseStats } from '../stats/phase-stats.js'
import type { WallClock } from '../core/wall-clock.js'
import type { ServiceConfig } from '../protocol/grpc-service-config.js'
import type { TargetSpec } from './target-spec.js'
export type { RequestRecord, RequestSink } from '../results/request-record.js'

/**
 * The options are declared once, below, as valibot schemas; their types are
 * inferred from them. What the CLI's flags cannot get wrong (a string for a
 * number, a misspelt option, a header object instead of pairs) is refused by
 * option-check.ts with the option's own name. A value is checked for its
 * kind only (`anyOf`: not at all) here: resolve-options.ts checks values, as
 * it checks the CLI's.
 */
function describe(v: unknown): string {
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v)}`
  if (Array.isArray(v)) return 'an array'
  return v === null ? 'null' : typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`
}

type Kind = 'number' | 'boolean' | 'string' | 'function' | 'object'

/** An option of one JavaScript kind, typed as T: "requests must be a number, got the string "10"". */
function kind<T>(what: Kind) {
  const article = what === 'object' ? 'an' : 'a'
  return v.optional(
    v.custom<T>(
      (x) => typeof x === what && x !== null,
      (issue) => `must be ${article} ${what}, got ${describe(issue.input)}`,
    ),
  )
}

/** An option checked where it is used (resolve-options.ts), typed as T. */
const anyOf = <T>() => v.optional(v.custom<T>(() => true))

const number = kind<number>('number')
const boolean = kind<boolean>('boolean')
const string = kind<string>('string')
const objectKind = (input: unknown) => `must be an object, got ${describe(input)}`
const unknownOption = (prefix: string, key: string, entries: object) => `${WHOLE}unknown option ${prefix}${key} (known: ${Object.keys(entries).join(', ')})`

const pem = v.optional(
  v.custom<string | Buffer>(
    (x) => typeof x === 'string' || x instanceof Uint8Array,
    (issue) => `must be PEM text (a string or a Buffer), got ${describe(issue.input)}`,
  ),
)

const URLS = v.custom<string[]>(
  (x) => Array.isArray(x) && x.every((u) => typeof u === 'string'),
  (issue) => `must be an array of URLs as strings, got ${describe(issue.input)}`,
)

/** Pairs, as the CLI's -H gives them; each checked as -H checks it (a bad name is a 400 or an undici error on every request). */
const HEADERS = v.optional(
  v.pipe(
    v.custom<Array<[string, string]>>(
      (x) => Array.isArray(x) && x.every((h) => Array.isArray(h) && h.length === 2 && typeof h[0] === 'string' && typeof h[1] === 'string'),
      (issue) => `must be an array of [name, value] pairs, got ${describe(issue.input)}`,
    ),
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return
      try {
        for (const [name, value] of dataset.value) checkHeader(name, value)
      } catch (err) {
        addIssue({ message: `${WHOLE}${(err as Error).message}` })
      }
    }),
  ),
)

const BODY = v.optional(
  v.custom<Buffer>(
    (x) => x instanceof Uint8Array,
    (issue) => `must be a Buffer, got ${describe(issue.input)}`,
  ),
)

const REDACT = v.optional(
  v.custom<string[]>(
    (x) => Array.isArray(x) && x.every((r) => typeof r === 'string'),
    (issue) => `must be an array of header names, got ${describe(issue.input)}`,
  ),
)

export interface Progress {
  phase: PhaseName
  done: number
  /** Requests planned for the phase, or null for timed phases. */
  total: number | null
  elapsedMs: number
}

/** TLS beyond -k, as ghz's and grpcurl's flags give it; certificates and keys as PEM text. */
const tlsEntries = {
  /** --cacert: trust these CAs instead of the system's. */
  ca: pem,
  /** --cert/--key: the client certificate (chain) and its private key, for servers that require one. */
  cert: pem,
  key: pem,
  /** --cname: check the server's certificate against this name (and send it as SNI) instead of the URL's host. */
  servername: string,
}
/** What a server may make the HTTP/2 client hold (engine/h2-limits.ts), each raised by its flag. */
const h2LimitEntries = {
  /** --h2-max-header-list: octets of one header list (SETTINGS_MAX_HEADER_LIST_SIZE). */
  maxHeaderList: number,
  /** --h2-header-table: octets of the HPACK dynamic table the server may use (SETTINGS_HEADER_TABLE_SIZE). */
  headerTable: number,
  /** --h2-max-continuations: CONTINUATION frames after one HEADERS. */
  maxContinuations: number,
  /** --h2-max-owed-frames: control frames owed to the server while our writes wait to leave. */
  maxOwedFrames: number,
}
const H2LimitsSchema = exact(h2LimitEntries, objectKind, (key) => unknownOption('h2Limits.', key, h2LimitEntries))
export type H2LimitOptions = Infer<typeof H2LimitsSchema>

/** --load-schedule and its --load-* flags, as ghz names them. */
const loadScheduleEntries = {
  kind: kind<'const' | 'step' | 'line'>('string'),
  start: number,
  step: number,
  end: number,
  stepDurationMs: number,
  maxDurationMs: number,
}
const LoadScheduleOptionsSchema = exact(loadScheduleEntries, objectKind, (key) => unknownOption('loadSchedule.', key, loadScheduleEntries))
export type LoadScheduleOptions = Infer<typeof LoadScheduleOptionsSchema>

const TlsSchema = exact(tlsEntries, objectKind, (key) => unknownOption('tls.', key, tlsEntries))
export type TlsRunOptions = Infer<typeof TlsSchema>

/** A list of strings: "importPaths must be an array of strings, got the string "protos"". */
const strings = v.optional(
  v.custom<string[]>(
    (x) => Array.isArray(x) && x.every((s) => typeof s === 'string'),
    (issue) => `must be an array of strings, got ${describe(issue.input)}`,
  ),
)

/** What a grpc:// run needs beyond the URLs, as ghz's flags give it (--proto/-i/--protoset, --call, -d/-D/-B). */
const grpcEntries = {
  /** `package.Service/Method`. */
  call: string,
  /** A .proto file (exclusive with protoset). */
  proto: string,
  /** Directories searched for the proto file and its imports, in order. */
  importPaths: strings,
  /** A binary FileDescriptorSet (exclusive with proto). */
  protoset: string,
  /** A FileDescriptorSet already read (from the server's reflection service): the schema without a file. */
  descriptorSet: kind<Uint8Array>('object'),
  /** Read the schema from the server's reflection service (also what happens when neither proto nor protoset is given). */
  reflect: boolean,
  /** `-d`: the message as JSON text. */
  data: string,
  /** `-D`: a file holding the JSON. */
  dataFile: string,
  /** -d/-D of several messages (a JSON array, or NDJSON in -D): the calls send them 'round-robin' (default) or at 'random' (the run's seed). */
  dataOrder: kind<'round-robin' | 'random'>('string'),
  /** `-B`: a file holding the already-encoded message bytes. */
  binaryFile: string,
  /** Who hedges the hedged calls: hedgebench's engine (default), or also a real grpc-js client with `serviceConfig`. */
  hedgeBy: kind<'hedgebench' | 'grpc-js'>('string'),
  /** A gRPC service config (methodConfig[].hedgingPolicy, retryThrottling), for hedgeBy 'grpc-js'. */
  serviceConfig: kind<ServiceConfig>('object'),
  /** `--max-recv-size`: the longest response message accepted, bytes, judged on its length prefix (4 MiB when absent). */
  maxRecvBytes: number,
}
const GrpcSchema = exact(grpcEntries, objectKind, (key) => unknownOption('grpc.', key, grpcEntries))
export type GrpcRunOptions = Infer<typeof GrpcSchema>

/** Hedging, as --hedge-* give it. */
const hedgeEntries = {
  /** 'auto' (= p95 of the warm-up), 'p90'/'p99'/..., or a fixed delay in ms. */
  delay: anyOf<HedgeDelay>(),
  adaptive: boolean,
  /** Adaptive window: a count of original attempts, or a time span in ms. */
  adaptiveWindow: kind<{ requests: number } | { ms: number }>('object'),
  delayMinMs: number,
  delayMaxMs: number,
  maxAttempts: number,
  budgetPct: anyOf<number>(),
  nonFatalStatus: anyOf<number[]>(),
  deadlineMs: number,
  /** Default: the measured p50 (of the warm-up, else of the plain phase). */
  minHedgeWindowMs: number,
  parallel: boolean,
  /** Tied requests (the 'ask many servers' article): both copies at once with a tie id; the server that starts one drops the other. */
  tied: boolean,
  cancel: kind<CancelMode>('string'),
  /** Header naming the hedge number on hedges; null drops it. Default x-hedge-attempt. */
  header: anyOf<string | null>(),
  /** Send one Idempotency-Key per logical request on every copy. */
  idempotencyKey: boolean,
  /** Allow hedging a non-idempotent method without keys. */
  unsafeHedge: boolean,
}
const HedgeSchema = exact(hedgeEntries, objectKind, (key) => unknownOption('hedge.', key, hedgeEntries))
export type HedgeRunOptions = Infer<typeof HedgeSchema>

const runEntries = {
  urls: URLS,
  method: string,
  /** Headers as name/value pairs (repeats allowed). */
  headers: HEADERS,
  body: BODY,
  concurrency: number,
  /** Requests per measured phase (default 200), unless durationMs is set. */
  requests: number,
  /** Length of each measured phase; when set, requests is ignored (as in hey: -z wins over -n) and the warm-up stops at it too. */
  durationMs: number,
  /** Global requests/s: makes the run open-loop. */
  rate: number,
  /**
   * ghz's --load-schedule: the rate of each measured phase over time (open
   * loop; a 'const' schedule is `rate`). Requests/s and ms; checked in
   * resolve-options.ts (load-schedule-options.ts).
   */
  loadSchedule: v.optional(LoadScheduleOptionsSchema),
  /** ghz's --concurrency-schedule: the closed loop's requests in flight over each measured phase (a 'const' schedule is `concurrency`). */
  concurrencySchedule: v.optional(LoadScheduleOptionsSchema),
  /** ghz's --skip-first: each measured phase sends this many requests first and counts none of them. */
  skipFirst: number,
  timeoutMs: number,
  mode: kind<Mode>('string'),
  schedule: kind<Schedule>('string'),
  /** Warm-up requests, excluded from the measured phases. */
  warmup: number,
  slowMs: number,
  http2: boolean,
  /** Accept any TLS certificate (curl's and hey's -k). */
  insecure: boolean,
  /** https:// and grpcs://: the CAs to trust, a client certificate (mTLS), the name the server's certificate must carry. */
  tls: v.optional(TlsSchema),
  /** HTTP/2 (h2c, TLS, gRPC): the limits on what a server may make the client hold; absent ones keep nghttp2's defaults. */
  h2Limits: v.optional(H2LimitsSchema),
  /** A mix of requests (--targets FILE, target-spec.ts), each drawn by its weight; checked where it is used. */
  targets: anyOf<TargetSpec[]>(),
  /** For grpc:// targets: the schema, --call and the message (the body and method come from these). */
  grpc: v.optional(GrpcSchema),
  keepAlive: boolean,
  fanout: number,
  workers: number,
  /** HTTP/2 and gRPC: connections per replica, the attempts spread over them (ghz's --connections); absent: one, and another only when its streams are all in use. */
  connections: number,
  label: string,
  profile: anyOf<string | null>(),
  hedge: v.optional(HedgeSchema),
  /** Outlier ejection of failing replicas (on by default with several replicas); false turns it off. */
  eject: anyOf<false | Partial<EjectionPolicy>>(),
  /** Suppress hedges while the replicas show saturation (on by default); false turns it off. */
  saturation: anyOf<false | Partial<SaturationPolicy>>(),
  /** Seed for every random choice the client makes (replica picks, interleaving, keys). */
  seed: number,
  /** Extra header names to redact in everything written. */
  redact: REDACT,
  /** Header or parameter names that look like credentials (core/redact.ts) but are written as they are, knowingly (--show-secret). */
  showSecret: REDACT,
  /** Stats endpoint of a compatible target, for the client/server cross-check. */
  serverStatsUrl: string,
  /** Cancels this soon after their send may never reach a server's handler: the cross-check judges a shortfall against them (ms, default 1). */
  crossCheckGraceMs: number,
  /** Aborting stops new requests; in-flight ones get a short grace; the run resolves with partial = true. */
  signal: kind<AbortSignal>('object'),
  /** Aborting also aborts in-flight requests at once (a second Ctrl-C). */
  stopNow: kind<AbortSignal>('object'),
  onProgress: kind<(progress: Progress) => void>('function'),
  /** A wait that measures nothing begins ('check': the pre-run check; 'start': waiting for startAt), or ends before the first phase (null). */
  onWait: kind<(wait: 'check' | 'start' | null) => void>('function'),
  /** A warning said before anything is measured (a --proto that differs from the server's schema); it is in the result's warnings too. */
  onWarning: kind<(warning: string) => void>('function'),
  requestSink: kind<RequestSink>('object'),
  /** Run shard `index` of `count`: requests and rate are split exactly (see shard.ts); the config records the whole run. */
  shard: kind<Shard>('object'),
  /** Wall-clock time (epoch ms) to start the first phase at; the result records how late it really started. */
  startAt: number,
  /** A shard starting later than this after startAt is marked late. Default: 1 % of -z (50 ms to 1 s), else 100 ms. */
  maxStartLatenessMs: number,
  /** Names the run the shards belong to; default derived from the start time and the config. */
  runId: string,
  /** The wall clock (default Date.now): injectable so a test can skew one generator's clock. */
  wallClock: kind<WallClock>('function'),
  /**
   * Called once after the warm-up with the percentile of its steady half that
   * a pNN delay would be (null: nothing answered), so that a sweep derives
   * all its delays from one warm-up as a run derives its own.
   */
  onWarmup: kind<(delayAt: (percentile: number) => number | null) => void>('function'),
  /** Called as each window starts (on this thread) with its lanes' live statistics, so a caller can read them while it runs (`watch`, --metrics-port); a sweep's setting lane with its setting's index. */
  onWindow: kind<(lanes: ReadonlyArray<{ name: PhaseName; stats: PhaseStats; setting?: number | undefined }>) => void>('function'),
}
export const RunOptionsSchema = exact(runEntries, 'pass an object, at least { urls: ["http://127.0.0.1:8080/"] }', (key) => unknownOption('', key, runEntries))
export type RunOptions = Infer<typeof RunOptionsSchema>
