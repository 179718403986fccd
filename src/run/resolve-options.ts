/**
 * Checks RunOptions and fills defaults, so the engine only ever sees a
 * complete, valid configuration. Every problem is a UsageError naming the
 * bad value and what would be valid (the CLI prints it as one line, exit 2).
 */
import { X509Certificate } from 'node:crypto'
import { createSecureContext } from 'node:tls'
import type { Shard } from '../results/shard-share.js'
import { withUrlCredentials } from './url-credentials.js'
import { UsageError } from '../core/errors.js'
import { checkTimerMs } from '../core/duration.js'
import { isToken } from '../core/header-parse.js'
import { redactUrl } from '../core/redact.js'
import { delayPercentileOf, resolveHedgeDelay, type ResolvedHedgeDelay } from '../core/delay-spec.js'
import {
  TIED_DROPPED_STATUS,
  DEFAULT_BUDGET_PCT,
  DEFAULT_HEDGE_HEADER,
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_NON_FATAL,
  hedgingAllowedBy,
  isIdempotentMethod,
  MAX_ATTEMPTS_CAP,
} from '../hedging/policy.js'
import { DEFAULT_EJECTION, type EjectionPolicy } from '../hedging/replica-health.js'
import { DEFAULT_SATURATION, type SaturationPolicy } from '../hedging/saturation-gate.js'
import type { H2LimitOptions, HedgeRunOptions, RunOptions, TlsRunOptions } from './run-options.js'
import type { TlsSettings } from '../engine/tls-options.js'
import { DEFAULT_H2_LIMITS, type H2Limits } from '../engine/h2-limits.js'
import { transportOrigin } from '../core/target-url.js'
import { checkOneService } from './one-service.js'
import { DEFAULT_GRPC_NON_FATAL } from '../protocol/grpc-status.js'
import { grpcSafeToRepeat, grpcTargetCall, grpcWriteRefusal, resolveGrpc, type ResolvedGrpc } from './grpc-target.js'
import { refuseMetadataActions } from '../protocol/grpc-template.js'
import type { LoadSchedule, Mode, RunConfig, Schedule } from '../results/run-result.js'
import { resolveConcurrencySchedule, resolveLoadSchedule } from './load-schedule-options.js'
import { stairRates } from '../engine/load-schedule.js'
import { resolveTargets, type ResolvedTarget } from './target-spec.js'
import { requestsNeeded } from '../stats/noise.js'

/** What an option left out means; the CLI's help shows these, so they are written down once. */
export const DEFAULTS = {
  requests: 200,
  concurrency: 50,
  timeoutMs: 20_000,
  slowMs: 1000,
  warmupCap: 1000,
  warmupMinMs: 2000,
  method: 'GET',
  mode: 'both',
  schedule: 'sequential',
  fanout: 1,
  workers: 1,
  hedgeDelay: 'auto',
  maxAttempts: DEFAULT_MAX_ATTEMPTS,
  budgetPct: DEFAULT_BUDGET_PCT,
  delayMinMs: 0,
  delayMaxMs: 60_000,
  adaptiveWindowRequests: 1000,
  nonFatalStatus: DEFAULT_NON_FATAL,
  cancel: 'abort',
  crossCheckGraceMs: 1,
} as const

/** The hedging settings as the engine uses them; the saved RunConfig records the same fields as text. */
export type ResolvedHedge = Omit<RunConfig['hedge'], 'delay' | 'adaptiveWindow'> & {
  delay: ResolvedHedgeDelay
  adaptiveWindow: { requests: number } | { ms: number }
}

/** A complete, valid run configuration: what RunConfig records, plus what is not saved (the body, secrets, the seed). */
export type ResolvedRun = Omit<
  RunConfig,
  'headers' | 'bodyBytes' | 'hedge' | 'seed' | 'eject' | 'saturation' | 'grpc' | 'connections' | 'loadSchedule' | 'concurrencySchedule' | 'skipFirst'
> & {
  /** --load-schedule: each measured window's rate over time (`rate` is its start); null: -q alone, or closed loop. */
  loadSchedule: LoadSchedule | null
  /** --concurrency-schedule: each measured window's requests in flight over time (`concurrency` is the most of them); null: -c throughout. */
  concurrencySchedule: LoadSchedule | null
  /** --skip-first: requests each measured phase sends first and leaves out of its figures (0: none). */
  skipFirst: number
  /** --connections: HTTP/2 sessions per replica (each worker thread its share); null: one, and another only when its streams are all in use. */
  connections: number | null
  origins: string[]
  eject: EjectionPolicy | null
  saturation: SaturationPolicy | null
  /** --targets: the mix of requests, each its own lane per phase (run-plan.ts); null: the one request of -m, -H, -d. */
  targets: ResolvedTarget[] | null
  /** The gRPC method of grpc:// targets, null for HTTP. */
  grpc: ResolvedGrpc | null
  headers: Array<[string, string]>
  body: Buffer | null
  label: string
  seed: number
  hedge: ResolvedHedge
  redact: string[]
  /** Names the credential rule would redact, kept (--show-secret). */
  showSecret: string[]
  /** -k, --cacert, --cert/--key, --cname: how https:// and grpcs:// connections are made. */
  tls: TlsSettings
  /** HTTP/2: what a server may make the client hold (--h2-max-header-list and the rest). */
  h2Limits: H2Limits
  /** The default warm-up goes on past its requests until it has lasted this long, ms (0: no minimum). */
  warmupMinMs: number
  /**
   * A shard's place among the others (run-identity.ts shardPart): its -q
   * schedule starts this much later (shard i of n at -q R: i / R s, where one
   * process would have sent its requests), and its round-robin at this
   * replica, so that shards started together do not send in lockstep to one
   * replica. Absent: not a shard.
   */
  shardOffsetMs?: number
  firstReplica?: number
  /** A shard: which of the shards it is (--load-schedule: its part of the schedule's sends, load-schedule.ts). Absent: not a shard. */
  shard?: Shard
  /** h2 (h2c and over TLS): per origin, the streams its server takes at once on one session (the preflight reads its SETTINGS). */
  streamLimits?: Record<string, number>
  /** --cross-check-grace: an attempt cancelled sooner than this after its send is counted as one a server may never have handled. */
  crossCheckGraceMs: number
}

export function resolveOptions(o: RunOptions, seed: number): ResolvedRun {
  const urls = checkUrls(o.urls)
  checkOneService(urls)
  const grpcBase = resolveGrpc(urls, o.grpc, o.targets !== undefined)
  const requests = o.durationMs !== undefined ? null : positiveInt(o.requests ?? DEFAULTS.requests, '-n', 'requests')
  const durationMs = o.durationMs === undefined ? null : positiveMs(o.durationMs, '-z', 'duration')
  const mode = oneOf(o.mode ?? DEFAULTS.mode, ['plain', 'hedged', 'both'] as const, '--mode')
  // A gRPC run records its call where an HTTP run records its method (gRPC's own framing sends POST).
  if (grpcBase) refuseMetadataActions(o.headers ?? [])
  const httpMethod = grpcBase ? null : checkMethod((o.method ?? DEFAULTS.method).toUpperCase())
  const hedge = resolveHedge(o.hedge ?? {}, httpMethod ?? `gRPC ${grpcBase!.call}`, mode, grpcBase, o.targets !== undefined)
  const headers = withUrlCredentials(urls, oneHost(o.headers ?? []))
  const targets = resolveTargets(o.targets, headers, hedge, grpcBase && o.targets !== undefined ? grpcTargetCall(o.grpc ?? {}) : null)
  // A mix of calls records its methods where one run records its call.
  const grpc = grpcBase && targets ? { ...grpcBase, call: [...new Set(targets.map((t) => t.name))].join(', ') } : grpcBase
  const method = grpc ? `gRPC ${grpc.call}` : httpMethod!
  const warmup = nonNegativeInt(o.warmup ?? defaultWarmup(requests, targets, hedge, mode), '--warmup')
  const schedule = oneOf(o.schedule ?? DEFAULTS.schedule, ['sequential', 'interleaved'] as const, '--schedule')
  checkDelaySource(hedge, mode, schedule, warmup)
  const concurrencySchedule = resolveConcurrencySchedule(o, DEFAULTS.concurrency)
  // A concurrency schedule's window has a slot for the most requests it has in flight at once.
  const concurrency = concurrencySchedule
    ? Math.max(...stairRates(concurrencySchedule))
    : positiveInt(o.concurrency ?? DEFAULTS.concurrency, '-c', 'concurrency')
  const workers = positiveInt(o.workers ?? DEFAULTS.workers, '--workers', 'worker count')
  const loadSchedule = resolveLoadSchedule(o)
  const rate = loadSchedule ? loadSchedule.start : o.rate === undefined ? null : positiveNumber(o.rate, '-q', 'rate')
  return {
    warmupMinMs: defaultWarmupMinMs(o.warmup, requests),
    urls,
    origins: urls.map(transportOrigin),
    grpc,
    method,
    headers,
    targets,
    body: grpc ? grpc.body : (o.body ?? null),
    concurrency,
    requests,
    durationMs,
    rate,
    loadSchedule,
    concurrencySchedule,
    skipFirst: nonNegativeInt(o.skipFirst ?? 0, '--skip-first'),
    timeoutMs: positiveMs(o.timeoutMs ?? DEFAULTS.timeoutMs, '-t', 'timeout'),
    mode,
    schedule,
    warmup,
    slowMs: positiveMs(o.slowMs ?? DEFAULTS.slowMs, '--slow', 'threshold'),
    http2: o.http2 ?? false,
    keepAlive: o.keepAlive ?? true,
    fanout: atMost(positiveInt(o.fanout ?? DEFAULTS.fanout, '--fanout', 'fan-out'), MAX_FANOUT, '--fanout', 'calls per request'),
    workers,
    connections: resolveConnections(o.connections, grpc !== null || (o.http2 ?? false), concurrency, workers),
    label: o.label ?? 'run',
    profile: o.profile ?? null,
    eject: resolveEject(o.eject, urls.length),
    saturation: resolveSaturation(o.saturation),
    seed,
    hedge,
    redact: o.redact ?? [],
    showSecret: o.showSecret ?? [],
    tls: resolveTls(o, urls),
    h2Limits: resolveH2Limits(o.h2Limits ?? {}),
    crossCheckGraceMs: nonNegativeMs(o.crossCheckGraceMs ?? DEFAULTS.crossCheckGraceMs, '--cross-check-grace'),
  }
}

/** Each limit a whole number of at least 1 (a header table may be 0: no dynamic table), the rest nghttp2's defaults. */
function resolveH2Limits(l: H2LimitOptions): H2Limits {
  const d = DEFAULT_H2_LIMITS
  return {
    maxHeaderList: positiveInt(l.maxHeaderList ?? d.maxHeaderList, '--h2-max-header-list', 'header list size'),
    headerTable: nonNegativeInt(l.headerTable ?? d.headerTable, '--h2-header-table'),
    maxContinuations: nonNegativeInt(l.maxContinuations ?? d.maxContinuations, '--h2-max-continuations'),
    maxOwedFrames: positiveInt(l.maxOwedFrames ?? d.maxOwedFrames, '--h2-max-owed-frames', 'frame count'),
  }
}

/**
 * --connections, as ghz's: HTTP/2 sessions per replica. Only where attempts
 * share a connection: over HTTP/1.1 each request in flight has its own
 * already (-c is the connection count, as in hey, oha and wrk), and a cap
 * would only make hedges wait behind originals. At most -c, as ghz says (a
 * further one would carry nothing), and at least one per worker thread,
 * which has connections of its own.
 */
function resolveConnections(n: number | undefined, multiplexed: boolean, concurrency: number, workers: number): number | null {
  if (n === undefined) return null
  const count = positiveInt(n, '--connections', 'connections per replica')
  if (!multiplexed)
    throw new UsageError(
      '--connections is for HTTP/2 and gRPC, where requests share a connection (add --http2, or use grpc://); over HTTP/1.1 each request in flight has a connection of its own: -c sets how many',
    )
  if (count > concurrency) throw new UsageError(`invalid --connections ${count} (at most -c ${concurrency}: one more would carry no request)`)
  const threads = Math.min(workers, concurrency)
  if (count < threads)
    throw new UsageError(
      `--connections ${count} with --workers ${threads}: each worker thread has connections of its own (give --connections ${threads} or more)`,
    )
  return count
}

/** A method is an RFC 9110 token: anything else undici refuses on every request (UND_ERR_INVALID_ARG). */
function checkMethod(method: string): string {
  if (!isToken(method)) throw new UsageError(`invalid -m "${method}" (an HTTP method is one word of letters, digits or !#$%&'*+-.^_\`|~, e.g. GET or POST)`)
  if (method === 'CONNECT') throw new UsageError('-m CONNECT is not supported (it opens a tunnel through a proxy: there is no answer to measure)')
  return method
}

/** Calls a fan-out request makes at once; each takes a connection, so a mistyped 1000000 is refused rather than run out of memory. */
const MAX_FANOUT = 1000

function atMost(n: number, max: number, flag: string, what: string): number {
  if (n > max) throw new UsageError(`invalid ${flag} ${n} (at most ${max} ${what})`)
  return n
}

function checkHedgeHeader(name: string): void {
  if (!isToken(name))
    throw new UsageError(`invalid --hedge-header ${JSON.stringify(name)} (a header name, letters, digits and !#$%&'*+-.^_\`|~; --no-hedge-header sends none)`)
}

/**
 * The TLS settings, their PEM checked before anything is sent (a key that
 * does not match its certificate would fail every handshake). Only for
 * https:// and grpcs:// targets: on others they would be ignored.
 */
export function resolveTls(o: RunOptions, urls: string[]): TlsSettings {
  const t: TlsRunOptions = o.tls ?? {}
  const given = TLS_FLAGS.filter(([k]) => t[k] !== undefined).map(([, flag]) => flag)
  if (given.length > 0 && !urls.some((u) => /^(https|grpcs):/i.test(u))) throw new UsageError(`${given.join(', ')}: only for TLS targets (https://, grpcs://)`)
  if ((t.cert === undefined) !== (t.key === undefined))
    throw new UsageError(
      t.cert === undefined ? '--key needs --cert (the client certificate it belongs to)' : "--cert needs --key (the client certificate's private key)",
    )
  const pem = (v: string | Buffer | undefined): string | undefined => (v === undefined ? undefined : v.toString())
  const s: TlsSettings = { insecure: o.insecure ?? false }
  if (t.ca !== undefined) s.ca = pem(t.ca)!
  if (t.cert !== undefined) s.cert = pem(t.cert)!
  if (t.key !== undefined) s.key = pem(t.key)!
  if (t.servername !== undefined) s.servername = checkServername(t.servername)
  checkPem(s)
  return s
}

const TLS_FLAGS = [
  ['ca', '--cacert'],
  ['cert', '--cert'],
  ['key', '--key'],
  ['servername', '--cname'],
] as const

function checkServername(name: string): string {
  if (!/^[A-Za-z0-9.:_-]+$/.test(name)) throw new UsageError(`invalid --cname ${JSON.stringify(name)} (a host name, as the server's certificate names it)`)
  return name
}

/** The PEM parsed once here (Node would parse it at the first handshake), so a bad file is one line before the run. */
function checkPem(s: TlsSettings): void {
  if (s.ca === undefined && s.cert === undefined) return
  // Node skips what is not a certificate in `ca` without a word: every handshake would then fail.
  if (s.ca !== undefined) {
    try {
      if (!s.ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no "-----BEGIN CERTIFICATE-----" in it')
      new X509Certificate(s.ca)
    } catch (err) {
      throw new UsageError(`--cacert is not a PEM certificate: ${(err as Error).message}`)
    }
  }
  try {
    if (s.cert !== undefined) createSecureContext({ cert: s.cert, key: s.key })
  } catch (err) {
    throw new UsageError(`--cert/--key: ${(err as Error).message} (PEM certificate and the private key that belongs to it)`)
  }
}

/** On by default with several replicas (one replica has nowhere else to go). */
function resolveEject(eject: RunOptions['eject'], replicas: number): EjectionPolicy | null {
  // Checked even when unused (--no-eject, one replica): a bad value is a typo either way.
  const e = { ...DEFAULT_EJECTION, ...(eject === false ? {} : eject) }
  const policy = {
    consecutiveFailures: positiveInt(e.consecutiveFailures, '--eject-after', 'failure count'),
    baseEjectionMs: positiveMs(e.baseEjectionMs, '--eject-for', 'ejection time'),
    maxEjectionMs: Math.max(e.baseEjectionMs, e.maxEjectionMs),
  }
  return eject === false || replicas < 2 ? null : policy
}

function resolveSaturation(saturation: RunOptions['saturation']): SaturationPolicy | null {
  if (saturation === false) return null
  const s = { ...DEFAULT_SATURATION, ...saturation }
  if (s.maxErrorRate !== null && !(s.maxErrorRate > 0 && s.maxErrorRate <= 1)) {
    throw new UsageError(`invalid --suppress-at-error-rate ${s.maxErrorRate * 100}% (use a percentage above 0 and at most 100, or "off")`)
  }
  return { ...s, maxInflight: s.maxInflight === null ? null : positiveInt(s.maxInflight, '--hedge-max-inflight', 'in-flight limit') }
}

function checkUrls(urls: string[]): string[] {
  if (!urls || urls.length === 0) throw new UsageError('no URL given (pass one or more replica URLs, e.g. http://127.0.0.1:8080/, or --profile NAME)')
  const origins = new Set<string>()
  return urls.map((raw) => {
    // `localhost:8080` parses as scheme "localhost", `127.0.0.1:8080` not at all: suggest what was meant.
    if (looksLikeHostWithoutScheme(raw)) throw new UsageError(`URL without a scheme: "${redactUrl(raw)}" (did you mean http://${redactUrl(raw)} ?)`)
    let url: URL
    try {
      url = new URL(raw)
    } catch {
      throw new UsageError(`invalid URL "${redactUrl(raw)}" (expected http://host[:port]/path, https://..., grpc://host:port or grpcs://host:port)`)
    }
    if (!['http:', 'https:', 'grpc:', 'grpcs:'].includes(url.protocol)) {
      throw new UsageError(`unsupported scheme "${url.protocol.replace(':', '')}" in "${redactUrl(raw)}" (only http, https, grpc and grpcs)`)
    }
    if (!url.hostname) throw new UsageError(`URL without a host: "${redactUrl(raw)}" (expected http://host[:port]/path)`)
    const origin = transportOrigin(raw)
    if (origins.has(origin)) throw new UsageError(`replica "${origin}" given twice (each URL must be a different replica origin)`)
    origins.add(origin)
    return raw
  })
}

/** host:port, host.name or host/path with no scheme: what curl would send to http://. */
function looksLikeHostWithoutScheme(raw: string): boolean {
  if (raw.includes('://')) return false
  const m = /^(\[[\da-f:.]+\]|[\w.-]+)(:\d+)?([/?#].*)?$/i.exec(raw)
  return m !== null && (m[1]!.includes('.') || m[1]!.startsWith('[') || m[2] !== undefined || m[1]!.toLowerCase() === 'localhost')
}

/** `grpc`: a gRPC call, hedged as a gRPC client's hedgingPolicy would (its non-fatal default is UNAVAILABLE). */
function resolveHedge(h: HedgeRunOptions, method: string, mode: Mode, grpc: ResolvedGrpc | null, mixed: boolean): ResolvedHedge {
  const maxAttempts = positiveInt(h.maxAttempts ?? DEFAULTS.maxAttempts, '--max-attempts', 'attempt count')
  // Tied requests always send both copies: a budget would only leave some requests untied.
  const budgetPct = h.budgetPct === undefined ? (h.tied ? null : DEFAULTS.budgetPct) : h.budgetPct
  if (budgetPct !== null && !(budgetPct >= 0 && budgetPct <= 100)) {
    throw new UsageError(`invalid --hedge-budget ${budgetPct} (use a percentage from 0 to 100, or "off")`)
  }
  const resolved: ResolvedHedge = {
    delay: resolveHedgeDelay(h.delay ?? DEFAULTS.hedgeDelay),
    adaptive: h.adaptive ?? false,
    adaptiveWindow: h.adaptiveWindow ?? { requests: DEFAULTS.adaptiveWindowRequests },
    delayMinMs: h.delayMinMs ?? DEFAULTS.delayMinMs,
    delayMaxMs: h.delayMaxMs ?? DEFAULTS.delayMaxMs,
    maxAttempts: h.tied ? 2 : Math.min(MAX_ATTEMPTS_CAP, maxAttempts),
    budgetPct: budgetPct as number | null,
    nonFatalStatus: [...(h.nonFatalStatus ?? (grpc ? DEFAULT_GRPC_NON_FATAL : DEFAULTS.nonFatalStatus)), ...(h.tied ? [TIED_DROPPED_STATUS] : [])],
    deadlineMs: h.deadlineMs ?? null,
    minHedgeWindowMs: h.minHedgeWindowMs ?? null,
    // A tie is two copies at once; the dropped twin's 409 is discarded while the other runs.
    parallel: (h.parallel ?? false) || (h.tied ?? false),
    tied: h.tied ?? false,
    cancel: oneOf(h.cancel ?? DEFAULTS.cancel, ['abort', 'ignore'] as const, '--cancel'),
    header: h.header === undefined ? DEFAULT_HEDGE_HEADER : h.header,
    idempotencyKey: h.idempotencyKey ?? false,
    unsafeHedge: h.unsafeHedge ?? false,
  }
  if (resolved.deadlineMs !== null && !(resolved.deadlineMs > 0))
    throw new UsageError(`invalid --deadline ${resolved.deadlineMs} ms (above 0: every request would miss it)`)
  // A library caller's values, as parseDuration checks the flags': each may end up in a timer.
  if (resolved.deadlineMs !== null) checkTimerMs(resolved.deadlineMs, '--deadline')
  if (typeof resolved.delay === 'object' && 'fixedMs' in resolved.delay) checkTimerMs(resolved.delay.fixedMs, '--hedge-delay')
  checkTimerMs(resolved.delayMaxMs, '--delay-max')
  // The CLI's own check of -H, for the header every hedge carries: a bad name is a 400 on every hedge.
  if (resolved.header !== null) checkHedgeHeader(resolved.header)
  if (resolved.delayMinMs > resolved.delayMaxMs) {
    throw new UsageError(`--delay-min ${resolved.delayMinMs} ms is above --delay-max ${resolved.delayMaxMs} ms`)
  }
  // Never hedge a write: the request must say it is safe to repeat, or the user must.
  const safe = mixed ? MIXED_SAFETY : grpc ? grpcSafeToRepeat(grpc) : isIdempotentMethod(method) ? `${method} is idempotent` : null
  const allowedBy = mode === 'plain' ? null : hedgingAllowedBy(safe, resolved)
  if (mode !== 'plain' && allowedBy === null) {
    if (grpc) throw grpcWriteRefusal(grpc)
    throw new UsageError(
      `refusing to hedge ${method}: it is not idempotent (pass --idempotency-key to send one key per request on every copy, --unsafe-hedge to do it anyway, or --mode plain)`,
    )
  }
  return { ...resolved, allowedBy }
}

/** A mix's hedging is allowed per target (target-spec.ts): the engine sends a write once unless it may be repeated. */
const MIXED_SAFETY =
  'each target by its method (a write, or a gRPC method its proto does not mark NO_SIDE_EFFECTS or IDEMPOTENT, is never hedged without --idempotency-key or --unsafe-hedge)'

/**
 * The default warm-up: min(n, 1000). A mix's is at least enough for every
 * target's own measured delay: each target gets 1/N of the warm-up and its
 * delay is read from the second half of its share, so N × 2 × the requests
 * the percentile needs to be placed (p95: 72, so 144 a target; p99: 368),
 * for the highest percentile any target's delay follows. A per-target
 * warning that its delay rested on too few requests is then not the default.
 */
function defaultWarmup(requests: number | null, targets: readonly ResolvedTarget[] | null, hedge: ResolvedHedge, mode: Mode): number {
  const one = Math.min(DEFAULTS.warmupCap, requests ?? DEFAULTS.warmupCap)
  if (!targets || mode === 'plain') return one
  const percentiles = targets.flatMap((t) => delayPercentileOf(t.delay ?? hedge.delay) ?? [])
  if (percentiles.length === 0) return one
  return Math.max(one, targets.length * 2 * requestsNeeded(Math.max(...percentiles)))
}

/**
 * The default warm-up of a run of 1,000 requests or more (or a timed one)
 * also lasts at least DEFAULTS.warmupMinMs: against a fast target its
 * 1,000 requests are over in half a second, while V8 is still optimizing
 * the request path for about two (--trace-opt: 130-170 functions compiled
 * in the first 2 s of the plain phase after a 1,000-request warm-up, 80-100
 * after 4,000). Compiling runs on background threads that share the
 * generator's core, so the measured phase paid for it in its tail (p99
 * 23.6-23.8 ms against a fixed 20 ms target at -c 40, 21.4-22.5 ms after
 * 4,000 requests). A --warmup the user gives is taken as it is, and short
 * runs (hey's default -n 200) keep a warm-up of n.
 */
function defaultWarmupMinMs(given: number | undefined, requests: number | null): number {
  if (given !== undefined) return 0
  return requests === null || requests >= DEFAULTS.warmupCap ? DEFAULTS.warmupMinMs : 0
}

/** A measured delay needs something measured before the hedged requests start. */
function checkDelaySource(hedge: ResolvedHedge, mode: Mode, schedule: Schedule, warmup: number): void {
  const measured = hedge.delay === 'auto' || 'percentile' in hedge.delay
  if (schedule === 'interleaved' && mode !== 'both') throw new UsageError('--schedule interleaved needs --mode both (it mixes plain and hedged requests)')
  if (!measured || warmup > 0) return
  if (mode === 'hedged')
    throw new UsageError('--mode hedged with --warmup 0 needs a fixed --hedge-delay (e.g. 15ms): there is nothing to measure the delay from')
  if (schedule === 'interleaved')
    throw new UsageError('--schedule interleaved with --warmup 0 needs a fixed --hedge-delay: the delay must be known before the window starts')
}

function positiveInt(value: number, flag: string, what: string): number {
  if (!Number.isInteger(value) || value <= 0) throw new UsageError(`invalid ${flag} ${value} (${what} must be a whole number above 0)`)
  return value
}

function nonNegativeInt(value: number, flag: string): number {
  if (!Number.isInteger(value) || value < 0) throw new UsageError(`invalid ${flag} ${value} (must be a whole number, 0 or more)`)
  return value
}

/** A request carries one Host (RFC 9112 §3.2: a server answers 400 to two); a second -H Host silently replaced the first. */
function oneHost(headers: Array<[string, string]>): Array<[string, string]> {
  const hosts = headers.filter(([name]) => name.trim().toLowerCase() === 'host').map(([, value]) => JSON.stringify(value))
  if (hosts.length > 1) throw new UsageError(`-H Host given ${hosts.length} times (${hosts.join(', ')}): a request carries one Host, give it once`)
  return headers
}

function positiveNumber(value: number, flag: string, what: string): number {
  if (!(typeof value === 'number' && Number.isFinite(value) && value > 0)) throw new UsageError(`invalid ${flag} ${value} (${what} must be above 0)`)
  return value
}

/** A time above 0 that a timer may wait on: no longer than a timer can wait. */
/** A time that may be 0 (0: nothing is counted). */
function nonNegativeMs(value: number, flag: string): number {
  if (!Number.isFinite(value) || value < 0) throw new UsageError(`invalid ${flag} ${value} ms (must be 0 or more)`)
  return value
}

function positiveMs(value: number, flag: string, what: string): number {
  return checkTimerMs(positiveNumber(value, flag, what), flag)
}

function oneOf<T extends string>(value: string, choices: readonly T[], flag: string): T {
  if (!(choices as readonly string[]).includes(value)) throw new UsageError(`invalid ${flag} "${value}" (choose one of: ${choices.join(', ')})`)
  return value as T
}
