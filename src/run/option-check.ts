/**
 * The library's `run(options)` checks its caller's value before anything
 * else: what the CLI's flags cannot get wrong (a string for a number, a
 * misspelt option, a header object instead of pairs) is refused here with
 * the option's own name, rather than as a TypeError from deep inside or a
 * message about a CLI flag the caller never used. Values are then checked
 * by resolve-options.ts, as the CLI's are.
 */
import { UsageError } from '../core/errors.js'
import { checkHeader } from '../core/header-parse.js'
import type { HedgeRunOptions, RunOptions, TlsRunOptions } from './run-options.js'

type Kind = 'number' | 'boolean' | 'string' | 'function' | 'object' | 'any'

/** The kind an option's declared type allows (or 'any': checked where it is used), so the compiler holds each entry below to its type. */
type KindOf<T> = [T] extends [number]
  ? 'number' | 'any'
  : [T] extends [boolean]
    ? 'boolean' | 'any'
    : [T] extends [string]
      ? 'string' | 'any'
      : [T] extends [(...args: never[]) => unknown]
        ? 'function' | 'any'
        : 'object' | 'any'
type Kinds<T> = { [K in keyof Required<T>]: KindOf<NonNullable<T[K]>> }

/** Every option, with the type it must have (`any`: checked where it is used). The mapped type makes the compiler list them all. */
const RUN_OPTIONS: Kinds<RunOptions> = {
  urls: 'any',
  method: 'string',
  headers: 'any',
  body: 'any',
  concurrency: 'number',
  requests: 'number',
  durationMs: 'number',
  rate: 'number',
  timeoutMs: 'number',
  mode: 'string',
  schedule: 'string',
  warmup: 'number',
  slowMs: 'number',
  http2: 'boolean',
  insecure: 'boolean',
  tls: 'object',
  grpc: 'object',
  keepAlive: 'boolean',
  fanout: 'number',
  workers: 'number',
  connections: 'number',
  label: 'string',
  profile: 'any',
  hedge: 'object',
  eject: 'any',
  saturation: 'any',
  seed: 'number',
  redact: 'any',
  serverStatsUrl: 'string',
  signal: 'object',
  stopNow: 'object',
  onProgress: 'function',
  onWait: 'function',
  requestSink: 'object',
  shard: 'object',
  startAt: 'number',
  maxStartLatenessMs: 'number',
  runId: 'string',
  wallClock: 'function',
  onWarmup: 'function',
}

const HEDGE_OPTIONS: Kinds<HedgeRunOptions> = {
  delay: 'any',
  adaptive: 'boolean',
  adaptiveWindow: 'object',
  delayMinMs: 'number',
  delayMaxMs: 'number',
  maxAttempts: 'number',
  budgetPct: 'any',
  nonFatalStatus: 'any',
  deadlineMs: 'number',
  minHedgeWindowMs: 'number',
  parallel: 'boolean',
  tied: 'boolean',
  cancel: 'string',
  header: 'any',
  idempotencyKey: 'boolean',
  unsafeHedge: 'boolean',
}

const TLS_OPTIONS: Kinds<TlsRunOptions> = { ca: 'any', cert: 'any', key: 'any', servername: 'string' }

const fail = (message: string): never => {
  throw new UsageError(`run(options): ${message}`)
}

export function checkRunOptions(options: unknown): asserts options is RunOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) fail('pass an object, at least { urls: ["http://127.0.0.1:8080/"] }')
  const o = options as Record<string, unknown>
  checkKinds(o, RUN_OPTIONS, '')
  if (o.hedge !== undefined) checkKinds(o.hedge as Record<string, unknown>, HEDGE_OPTIONS, 'hedge.')
  if (o.tls !== undefined) checkTls(o.tls as Record<string, unknown>)
  if (!Array.isArray(o.urls) || !o.urls.every((u) => typeof u === 'string')) fail(`urls must be an array of URLs as strings, got ${describe(o.urls)}`)
  if (o.headers !== undefined) checkHeaders(o.headers)
  if (o.body !== undefined && !(o.body instanceof Uint8Array)) fail(`body must be a Buffer, got ${describe(o.body)}`)
  if (o.redact !== undefined && !(Array.isArray(o.redact) && o.redact.every((r) => typeof r === 'string')))
    fail(`redact must be an array of header names, got ${describe(o.redact)}`)
}

function checkKinds(o: Record<string, unknown>, kinds: Readonly<Record<string, Kind>>, prefix: string): void {
  for (const [key, value] of Object.entries(o)) {
    const kind = kinds[key]
    if (kind === undefined) fail(`unknown option ${prefix}${key} (known: ${Object.keys(kinds).join(', ')})`)
    if (value === undefined || kind === 'any') continue
    const actual = typeof value
    if (actual !== kind || (kind === 'object' && value === null))
      fail(`${prefix}${key} must be ${kind === 'object' ? 'an object' : `a ${kind}`}, got ${describe(value)}`)
  }
}

function checkTls(tls: Record<string, unknown>): void {
  checkKinds(tls, TLS_OPTIONS, 'tls.')
  for (const key of ['ca', 'cert', 'key'] as const) {
    const v = tls[key]
    if (v !== undefined && typeof v !== 'string' && !(v instanceof Uint8Array)) fail(`tls.${key} must be PEM text (a string or a Buffer), got ${describe(v)}`)
  }
}

/** Pairs, as the CLI's -H gives them; each checked as -H checks it (a bad name is a 400 or an undici error on every request). */
function checkHeaders(headers: unknown): void {
  if (!Array.isArray(headers) || !headers.every((h) => Array.isArray(h) && h.length === 2 && typeof h[0] === 'string' && typeof h[1] === 'string')) {
    fail(`headers must be an array of [name, value] pairs, got ${describe(headers)}`)
  }
  try {
    for (const [name, value] of headers as Array<[string, string]>) checkHeader(name, value)
  } catch (err) {
    fail((err as Error).message)
  }
}

function describe(v: unknown): string {
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 37)}...` : v)}`
  if (Array.isArray(v)) return 'an array'
  return v === null ? 'null' : typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`
}
