/**
 * `--hedge-by grpc-js`: a phase whose calls go through a real gRPC client,
 * @grpc/grpc-js, with the user's service config (methodConfig[].hedgingPolicy,
 * retryThrottling), instead of hedgebench's own policy. The request bytes
 * are the run's pre-encoded message (identity serializers), the channel
 * balances round_robin over the replica addresses, and what the client did
 * is read from channelz (subchannel calls_started) and from the response
 * metadata (grpc-previous-rpc-attempts of the attempt that answered).
 */
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { Client, credentials, getChannelzHandlers, Metadata } from '@grpc/grpc-js'
import type { ChannelCredentials, ClientUnaryCall, ServiceError, StatusObject } from '@grpc/grpc-js'
import type { TlsSettings } from '../engine/tls-options.js'
import { UsageError } from '../core/errors.js'
import { grpcCodeName, GRPC_OK } from '../protocol/grpc-status.js'
import { PREVIOUS_ATTEMPTS_HEADER } from '../protocol/grpc.js'
import { randomUUID } from 'node:crypto'
import { createHistogram, encodeHistogram, recordMs, summarize } from '../stats/histogram.js'
import { GeneratorMonitor } from '../stats/generator-monitor.js'
import { GRPC_OVER_DELAY_SLACK_MS, type GrpcClientAsked, type GrpcClientResult } from '../results/run-result.js'
import type { ServerCounter } from './server-check.js'
import { serviceConfigCaveats } from './grpc-js-caveats.js'
import { methodConfigFor, type ServiceConfig } from '../protocol/grpc-service-config.js'

export interface GrpcClientPhaseOptions {
  urls: string[]
  /** `/package.Service/Method`. */
  path: string
  /** The encoded request message (grpc-js frames it). */
  message: Buffer
  /** Per-call data (a -d template): each call's own message instead. */
  nextMessage?: () => Uint8Array
  metadata: Array<[string, string]>
  /** grpcs://: the run's TLS settings (--cacert, --cert/--key, --cname). */
  tls?: TlsSettings
  /** The user's service config, parsed. */
  serviceConfig: ServiceConfig
  /** --max-recv-size: grpc-js refuses a longer response message as the engine does (RESOURCE_EXHAUSTED). */
  maxRecvBytes: number
  concurrency: number
  requests: number | null
  durationMs: number | null
  timeoutMs: number
  /** --deadline: each call's deadline, ms (sent as grpc-timeout); null: -t is. */
  deadlineMs: number | null
  /** --idempotency-key: one key per call, on every attempt grpc-js makes of it. */
  idempotencyKey: boolean
  /** Calls made before the measured ones, and left out of every figure (the run's --warmup). */
  warmup: number
  slowMs: number
  server: ServerCounter | null
  /** Stops new calls; calls in flight are cancelled after `graceMs`. */
  signal?: AbortSignal
  /** Cancels the calls in flight at once (a second Ctrl-C). */
  stopNow?: AbortSignal
  graceMs: number
}

const identity = (b: Buffer) => b
/** A phase without -n or -z stops here; each call also has its own deadline. */
const MAX_PHASE_MS = 10 * 60_000

export async function runGrpcClientPhase(o: GrpcClientPhaseOptions): Promise<GrpcClientResult> {
  const config = withLoadBalancing(o.serviceConfig)
  const asked = askedFor(config, o.path)
  const target = await channelTarget(o.urls)
  let client: Client
  try {
    const secure = o.urls.some((u) => u.startsWith('grpcs:'))
    client = new Client(target, secure ? tlsCredentials(o.tls ?? {}) : credentials.createInsecure(), {
      ...channelNames(o),
      'grpc.service_config': JSON.stringify(config),
      'grpc.enable_channelz': 1,
      'grpc.enable_retries': 1,
      'grpc.max_receive_message_length': o.maxRecvBytes,
    })
  } catch (err) {
    throw new UsageError(`--service-config rejected by grpc-js: ${(err as Error).message}`)
  }
  try {
    // As the engine's phases are: connections open and the JIT warm before anything counts.
    if (o.warmup > 0) await closedLoop(client, { ...o, requests: o.warmup }, asked)
    const warm = await subchannelAttempts(client)
    const before = await o.server?.snapshot()
    const measured = await closedLoop(client, o, asked)
    const perReplica = since(warm, await subchannelAttempts(client))
    const attempts = perReplica.reduce((n, r) => n + r.attempts, 0)
    const server = before && o.server ? await o.server.check(before, attempts) : undefined
    const result: GrpcClientResult = {
      client: 'grpc-js',
      asked,
      ...measured,
      attempts,
      perReplica,
      hedgesSent: Math.max(0, attempts - measured.requests),
      ...(o.warmup > 0 ? { warmup: o.warmup } : {}),
      caveats: [],
      ...(server ? { server } : {}),
    }
    result.caveats = serviceConfigCaveats(result)
    return result
  } finally {
    client.close()
  }
}

/** grpcs:// with the engine's TLS settings: its CAs (else the system's), a client certificate, -k. */
function tlsCredentials(tls: TlsSettings): ChannelCredentials {
  const pem = (v: string | undefined) => (v === undefined ? null : Buffer.from(v))
  return credentials.createSsl(pem(tls.ca), pem(tls.key), pem(tls.cert), tls.insecure ? { rejectUnauthorized: false } : {})
}

/** --authority and --cname, as grpc-js names them. */
function channelNames(o: GrpcClientPhaseOptions): Record<string, string> {
  const authority = o.metadata.find(([k]) => k.toLowerCase() === 'host')?.[1]
  return {
    ...(authority !== undefined ? { 'grpc.default_authority': authority } : {}),
    ...(o.tls?.servername !== undefined ? { 'grpc.ssl_target_name_override': o.tls.servername } : {}),
  }
}

/** round_robin over the replicas unless the config chose a policy (grpc-js's default, pick_first, sends every call to one). */
function withLoadBalancing(config: ServiceConfig): ServiceConfig {
  if (config.loadBalancingConfig?.length || config.loadBalancingPolicy) return config
  return { ...config, loadBalancingConfig: [{ round_robin: {} }] }
}

function askedFor(config: ServiceConfig, path: string): GrpcClientAsked {
  const hedging = methodConfigFor(config, path)?.hedgingPolicy
  const lb = config.loadBalancingConfig?.[0] ? Object.keys(config.loadBalancingConfig[0])[0]! : (config.loadBalancingPolicy ?? 'pick_first')
  return {
    maxAttempts: hedging?.maxAttempts ?? 1,
    hedgingDelayMs: hedging?.hedgingDelay ? Number(hedging.hedgingDelay.replace(/s$/, '')) * 1000 : 0,
    nonFatalStatusCodes: (hedging?.nonFatalStatusCodes ?? []).map((c) => (typeof c === 'number' ? grpcCodeName(c) : c)),
    retryThrottling: config.retryThrottling ? { maxTokens: config.retryThrottling.maxTokens, tokenRatio: config.retryThrottling.tokenRatio } : null,
    loadBalancing: lb,
  }
}

/** grpc-js's multi-address target: ipv4:a:p,b:p (names resolved first, as one channel needs one family). */
async function channelTarget(urls: string[]): Promise<string> {
  const addresses = await Promise.all(
    urls.map(async (raw) => {
      const url = new URL(raw)
      const host = url.hostname.replace(/^\[|\]$/g, '')
      const ip = isIP(host) ? host : (await lookup(host)).address
      return { ip, port: url.port, family: isIP(ip) }
    }),
  )
  const family = addresses[0]!.family
  if (addresses.some((a) => a.family !== family)) throw new UsageError('--hedge-by grpc-js needs replicas of one address family (all IPv4 or all IPv6)')
  return family === 6 ? `ipv6:${addresses.map((a) => `[${a.ip}]:${a.port}`).join(',')}` : `ipv4:${addresses.map((a) => `${a.ip}:${a.port}`).join(',')}`
}

type Measured = Pick<
  GrpcClientResult,
  | 'requests'
  | 'ok'
  | 'errors'
  | 'statusCodes'
  | 'latencyMs'
  | 'histogram'
  | 'slow'
  | 'durationMs'
  | 'rps'
  | 'winsByAttempt'
  | 'callsOverDelay'
  | 'committedByHeaders'
  | 'generator'
  | 'deadlineMs'
>

async function closedLoop(client: Client, o: GrpcClientPhaseOptions, asked: GrpcClientAsked): Promise<Measured> {
  const inFlight = new Set<ClientUnaryCall>()
  const cancelAll = () => {
    for (const c of inFlight) c.cancel()
  }
  let grace: NodeJS.Timeout | null = null
  const onStop = () => (grace ??= setTimeout(cancelAll, o.graceMs))
  o.signal?.addEventListener('abort', onStop, { once: true })
  o.stopNow?.addEventListener('abort', cancelAll, { once: true })
  try {
    return await measure(client, o, asked, inFlight)
  } finally {
    if (grace) clearTimeout(grace)
    o.signal?.removeEventListener('abort', onStop)
    o.stopNow?.removeEventListener('abort', cancelAll)
  }
}

async function measure(client: Client, o: GrpcClientPhaseOptions, asked: GrpcClientAsked, inFlight: Set<ClientUnaryCall>): Promise<Measured> {
  const histogram = createHistogram()
  const statusCodes: Record<string, number> = {}
  const winsByAttempt: Record<string, number> = {}
  let requests = 0
  let ok = 0
  let slow = 0
  let overDelay = 0
  let committedByHeaders = 0
  let next = 0
  const monitor = new GeneratorMonitor(1)
  const start = performance.now()
  const endAt = start + Math.min(o.durationMs ?? MAX_PHASE_MS, MAX_PHASE_MS)
  const more = () => !o.signal?.aborted && performance.now() < endAt && (o.requests === null || next < o.requests)
  const worker = async () => {
    while (more()) {
      next++
      const call = await oneCall(client, o, inFlight)
      requests++
      recordMs(histogram, call.ms)
      const name = grpcCodeName(call.code)
      statusCodes[name] = (statusCodes[name] ?? 0) + 1
      if (call.code === GRPC_OK) {
        ok++
        winsByAttempt[call.answeredBy] = (winsByAttempt[call.answeredBy] ?? 0) + 1
      }
      if (call.ms > o.slowMs) slow++
      if (asked.hedgingDelayMs > 0 && call.ms > asked.hedgingDelayMs + GRPC_OVER_DELAY_SLACK_MS) {
        overDelay++
        // Its headers came before the delay: grpc-js had committed to that attempt, and a hedge was never due.
        if (call.headersMs !== null && call.headersMs < asked.hedgingDelayMs) committedByHeaders++
      }
    }
  }
  await Promise.all(Array.from({ length: o.concurrency }, worker))
  const durationMs = performance.now() - start
  return {
    generator: monitor.finish(asked.maxAttempts > 1 ? asked.hedgingDelayMs : null),
    histogram: encodeHistogram(histogram),
    committedByHeaders,
    deadlineMs: callDeadlineMs(o),
    requests,
    ok,
    errors: requests - ok,
    statusCodes,
    latencyMs: summarize(histogram),
    slow: { thresholdMs: o.slowMs, count: slow },
    durationMs,
    rps: durationMs > 0 ? (requests * 1000) / durationMs : 0,
    winsByAttempt,
    callsOverDelay: overDelay,
  }
}

interface CallOutcome {
  ms: number
  code: number
  /** grpc-previous-rpc-attempts of the answer ('0' = the original). */
  answeredBy: string
  /** When the response headers of the attempt grpc-js committed to arrived, ms after the call began (null: none came). */
  headersMs: number | null
}

/** Each call's deadline: --deadline, as hedgebench's own calls carry it in grpc-timeout, else -t. */
function callDeadlineMs(o: GrpcClientPhaseOptions): number {
  return o.deadlineMs ?? o.timeoutMs
}

function oneCall(client: Client, o: GrpcClientPhaseOptions, inFlight: Set<ClientUnaryCall>): Promise<CallOutcome> {
  const metadata = new Metadata()
  // The authority is the channel's (channelNames), not metadata.
  for (const [k, v] of o.metadata) if (k.toLowerCase() !== 'host') metadata.add(k, v)
  if (o.idempotencyKey && metadata.get('idempotency-key').length === 0) metadata.set('idempotency-key', randomUUID())
  const started = performance.now()
  let answeredBy = '0'
  let headersMs: number | null = null
  const noteAttempt = (m: Metadata) => {
    const value = m.get(PREVIOUS_ATTEMPTS_HEADER)[0]
    if (value !== undefined) answeredBy = String(value)
  }
  return new Promise((resolve) => {
    const message = o.nextMessage ? Buffer.from(o.nextMessage()) : o.message
    const call = client.makeUnaryRequest(
      o.path,
      identity,
      identity,
      message,
      metadata,
      { deadline: Date.now() + callDeadlineMs(o) },
      (err: ServiceError | null) => {
        inFlight.delete(call)
        resolve({ ms: performance.now() - started, code: err ? err.code : GRPC_OK, answeredBy, headersMs })
      },
    )
    inFlight.add(call)
    call.on('metadata', (m: Metadata) => {
      headersMs ??= performance.now() - started
      noteAttempt(m)
    })
    call.on('status', (s: StatusObject) => noteAttempt(s.metadata))
  })
}

/** Attempts per replica since `earlier` (channelz counts from the channel's start). */
function since(earlier: ReplicaAttempts, now: ReplicaAttempts): ReplicaAttempts {
  return now.map((r) => ({ address: r.address, attempts: r.attempts - (earlier.find((e) => e.address === r.address)?.attempts ?? 0) }))
}

type ReplicaAttempts = Array<{ address: string; attempts: number }>

/** Attempts per replica from channelz: the channel's subchannels' calls_started. */
async function subchannelAttempts(client: Client): Promise<ReplicaAttempts> {
  const handlers = getChannelzHandlers() as unknown as Record<
    string,
    (call: { request: Record<string, string> }, cb: (err: unknown, value: any) => void) => void
  >
  const ask = (name: string, request: Record<string, string>) =>
    new Promise<any>((resolve, reject) =>
      handlers[name]!({ request }, (err, value) => (err ? reject(new Error(String((err as Error).message ?? err))) : resolve(value))),
    )
  const id = String(client.getChannel().getChannelzRef().id)
  const { channel } = await ask('GetChannel', { channel_id: id })
  const refs: Array<{ subchannel_id: string | number }> = channel.subchannel_ref ?? []
  const list = await Promise.all(refs.map((r) => ask('GetSubchannel', { subchannel_id: String(r.subchannel_id) })))
  return list.map(({ subchannel }) => ({ address: String(subchannel.data.target), attempts: Number(subchannel.data.calls_started) }))
}
