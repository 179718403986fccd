/**
 * Typed options for the library API (`run(options)`), in the spirit of
 * vegeta's `NewAttacker(Timeout(d), Workers(n))`: the CLI parses flags into
 * this, a program builds it directly. Durations are milliseconds.
 */
import type { HedgeDelay } from '../core/delay-spec.js'
import type { EjectionPolicy } from '../hedging/replica-health.js'
import type { SaturationPolicy } from '../hedging/saturation-gate.js'
import type { CancelMode, Mode, PhaseName, Schedule } from '../results/run-result.js'

export interface HedgeRunOptions {
  /** 'auto' (= p95 of the warm-up), 'p90'/'p99'/..., or a fixed delay in ms. */
  delay?: HedgeDelay
  adaptive?: boolean
  /** Adaptive window: a count of original attempts, or a time span in ms. */
  adaptiveWindow?: { requests: number } | { ms: number }
  delayMinMs?: number
  delayMaxMs?: number
  maxAttempts?: number
  budgetPct?: number
  nonFatalStatus?: number[]
  deadlineMs?: number
  /** Default: the measured p50 (of the warm-up, else of the plain phase). */
  minHedgeWindowMs?: number
  parallel?: boolean
  /** Tied requests (the 'ask many servers' article): both copies at once with a tie id; the server that starts one drops the other. */
  tied?: boolean
  cancel?: CancelMode
  /** Header naming the hedge number on hedges; null drops it. Default x-hedge-attempt. */
  header?: string | null
  /** Send one Idempotency-Key per logical request on every copy. */
  idempotencyKey?: boolean
  /** Allow hedging a non-idempotent method without keys. */
  unsafeHedge?: boolean
}

import type { RequestSink } from '../results/request-record.js'
import type { Shard } from './shard.js'
import type { WallClock } from '../core/wall-clock.js'
import type { GrpcRunOptions } from './grpc-target.js'
export type { GrpcRunOptions } from './grpc-target.js'
export type { RequestRecord, RequestSink } from '../results/request-record.js'

export interface Progress {
  phase: PhaseName
  done: number
  /** Requests planned for the phase, or null for timed phases. */
  total: number | null
  elapsedMs: number
}

/** TLS beyond -k, as ghz's and grpcurl's flags give it; certificates and keys as PEM text. */
export interface TlsRunOptions {
  /** --cacert: trust these CAs instead of the system's. */
  ca?: string | Buffer
  /** --cert/--key: the client certificate (chain) and its private key, for servers that require one. */
  cert?: string | Buffer
  key?: string | Buffer
  /** --cname: check the server's certificate against this name (and send it as SNI) instead of the URL's host. */
  servername?: string
}

export interface RunOptions {
  urls: string[]
  method?: string
  /** Headers as name/value pairs (repeats allowed). */
  headers?: Array<[string, string]>
  body?: Buffer
  concurrency?: number
  /** Requests per measured phase (default 200), unless durationMs is set. */
  requests?: number
  /** Length of each measured phase; when set, requests is ignored (as in hey: -z wins over -n) and the warm-up stops at it too. */
  durationMs?: number
  /** Global requests/s: makes the run open-loop. */
  rate?: number
  timeoutMs?: number
  mode?: Mode
  schedule?: Schedule
  /** Warm-up requests, excluded from the measured phases. */
  warmup?: number
  slowMs?: number
  http2?: boolean
  /** Accept any TLS certificate (curl's and hey's -k). */
  insecure?: boolean
  /** https:// and grpcs://: the CAs to trust, a client certificate (mTLS), the name the server's certificate must carry. */
  tls?: TlsRunOptions
  /** For grpc:// targets: the schema, --call and the message (the body and method come from these). */
  grpc?: GrpcRunOptions
  keepAlive?: boolean
  fanout?: number
  workers?: number
  /** HTTP/2 and gRPC: connections per replica, the attempts spread over them (ghz's --connections); absent: one, and another only when its streams are all in use. */
  connections?: number
  label?: string
  profile?: string | null
  hedge?: HedgeRunOptions
  /** Outlier ejection of failing replicas (on by default with several replicas); false turns it off. */
  eject?: false | Partial<EjectionPolicy>
  /** Suppress hedges while the replicas show saturation (on by default); false turns it off. */
  saturation?: false | Partial<SaturationPolicy>
  /** Seed for every random choice the client makes (replica picks, interleaving, keys). */
  seed?: number
  /** Extra header names to redact in everything written. */
  redact?: string[]
  /** Stats endpoint of a compatible target, for the client/server cross-check. */
  serverStatsUrl?: string
  /** Aborting stops new requests; in-flight ones get a short grace; the run resolves with partial = true. */
  signal?: AbortSignal
  /** Aborting also aborts in-flight requests at once (a second Ctrl-C). */
  stopNow?: AbortSignal
  onProgress?: (progress: Progress) => void
  /** A wait that measures nothing begins ('check': the pre-run check; 'start': waiting for startAt), or ends before the first phase (null). */
  onWait?: (wait: 'check' | 'start' | null) => void
  requestSink?: RequestSink
  /** Run shard `index` of `count`: requests and rate are split exactly (see shard.ts); the config records the whole run. */
  shard?: Shard
  /** Wall-clock time (epoch ms) to start the first phase at; the result records how late it really started. */
  startAt?: number
  /** A shard starting later than this after startAt is marked late. Default: 1 % of -z (50 ms to 1 s), else 100 ms. */
  maxStartLatenessMs?: number
  /** Names the run the shards belong to; default derived from the start time and the config. */
  runId?: string
  /** The wall clock (default Date.now): injectable so a test can skew one generator's clock. */
  wallClock?: WallClock
  /**
   * Called once after the warm-up with the percentile of its steady half that
   * a pNN delay would be (null: nothing answered), so that a sweep derives
   * all its delays from one warm-up as a run derives its own.
   */
  onWarmup?: (delayAt: (percentile: number) => number | null) => void
}
