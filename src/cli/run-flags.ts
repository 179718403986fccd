/**
 * Turns the run command's flags into RunOptions. Numbers arrive as strings
 * so a bad value can be named in the error ("invalid -n abc"), not as NaN.
 */
import { readFile } from 'node:fs/promises'
import { parseDuration } from '../core/duration.js'
import { UsageError } from '../core/errors.js'
import { parseHedgeDelayFlag } from '../core/delay-spec.js'
import { parseHeader } from '../core/header-parse.js'
import { parseByteSize } from '../core/byte-size.js'
import type { HedgeRunOptions, LoadScheduleOptions, RunOptions } from '../run/run-options.js'
import type { CancelMode, Mode, Schedule } from '../results/run-result.js'
import { applyTlsFlags, type TlsFlags } from './tls-flags.js'
import { readTargetsFile } from '../run/targets-file.js'
import { assertNoGrpcFlags, grpcMetadata, grpcRunOptions, isGrpcRun, parseGrpcNonFatal, type GrpcFlags } from './grpc-flags.js'

export interface RunFlags extends GrpcFlags, TlsFlags {
  urls?: string[]
  /** What followed `--`: URLs, never flags. */
  '--'?: string[]
  n?: string
  c?: string
  z?: string
  q?: string
  loadSchedule?: string
  loadStart?: string
  loadStep?: string
  loadEnd?: string
  loadStepDuration?: string
  loadMaxDuration?: string
  concurrencySchedule?: string
  concurrencyStart?: string
  concurrencyStep?: string
  concurrencyEnd?: string
  concurrencyStepDuration?: string
  concurrencyMaxDuration?: string
  skipFirst?: string
  t?: string
  m?: string
  /** One value per -H (yargs gives a string for one, an array for several). */
  H?: string | string[]
  d?: string
  D?: string
  targets?: string
  T?: string
  A?: string
  http2?: boolean
  k?: boolean
  disableKeepalive?: boolean
  label?: string
  slow?: string
  mode?: string
  warmup?: string
  schedule?: string
  fanout?: string
  workers?: string
  connections?: string
  h2MaxHeaderList?: string
  h2MaxContinuations?: string
  h2HeaderTable?: string
  h2MaxOwedFrames?: string
  seed?: string
  redact?: string | string[]
  showSecret?: string | string[]
  serverStats?: string
  crossCheckGrace?: string
  hedgeDelay?: string
  adaptive?: boolean
  adaptiveWindow?: string
  delayMin?: string
  delayMax?: string
  maxAttempts?: string
  hedgeBudget?: string
  nonFatalStatus?: string
  deadline?: string
  minHedgeWindow?: string
  parallel?: boolean
  tied?: boolean
  cancel?: string
  hedgeHeader?: string | boolean
  idempotencyKey?: boolean
  unsafeHedge?: boolean
  eject?: boolean
  ejectAfter?: string
  ejectFor?: string
  suppress?: boolean
  suppressAtErrorRate?: string
  hedgeMaxInflight?: string
}

/** Flags that may be given more than once; any other repeated flag is an error, not a silent pick. */
const REPEATABLE = new Set([
  'urls',
  'files',
  'H',
  'header',
  'redact',
  'show-secret',
  'i',
  'fail-if',
  'failIf',
  'baseline',
  'mark-at',
  'markAt',
  '_',
  '$0',
  '--',
])

/** yargs turns `-n 2 -n 0` into ["2", "0"]: refuse it with the values named. */
export function assertNoRepeats(argv: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(argv)) {
    if (!Array.isArray(value) || REPEATABLE.has(key) || /[A-Z]/.test(key.slice(1))) continue
    const flag = key.length === 1 ? `-${key}` : `--${key}`
    throw new UsageError(`${flag} given more than once (${value.map((v) => JSON.stringify(v)).join(', ')}): give it once`)
  }
}

export async function flagsToOptions(f: RunFlags): Promise<RunOptions> {
  const o: RunOptions = { urls: [...list(f.urls), ...list(f['--'])] }
  setIf(o, 'requests', f.n, (v) => integer(v, '-n'))
  setIf(o, 'concurrency', f.c, (v) => integer(v, '-c'))
  setIf(o, 'durationMs', f.z, (v) => parseDuration(v, '-z', 's'))
  setIf(o, 'rate', f.q, (v) => number(v, '-q'))
  const schedule = scheduleFlags('--load', [f.loadSchedule, f.loadStart, f.loadStep, f.loadEnd, f.loadStepDuration, f.loadMaxDuration])
  if (schedule) o.loadSchedule = schedule
  const inFlight = scheduleFlags('--concurrency', [
    f.concurrencySchedule,
    f.concurrencyStart,
    f.concurrencyStep,
    f.concurrencyEnd,
    f.concurrencyStepDuration,
    f.concurrencyMaxDuration,
  ])
  if (inFlight) o.concurrencySchedule = inFlight
  setIf(o, 'skipFirst', f.skipFirst, (v) => integer(v, '--skip-first'))
  // A bare number is seconds, as hey's -t: `-t 5` is five seconds, not five milliseconds.
  setIf(o, 'timeoutMs', f.t, (v) => parseDuration(v, '-t', 's'))
  const grpc = isGrpcRun(f.grpc === true, o.urls)
  if (!grpc) setIf(o, 'method', f.m, (v) => v.toUpperCase())
  setIf(o, 'slowMs', f.slow, (v) => parseDuration(v, '--slow'))
  setIf(o, 'mode', f.mode, (v) => v as Mode)
  setIf(o, 'warmup', f.warmup, (v) => integer(v, '--warmup'))
  setIf(o, 'schedule', f.schedule, (v) => v as Schedule)
  setIf(o, 'fanout', f.fanout, (v) => integer(v, '--fanout'))
  setIf(o, 'workers', f.workers, (v) => integer(v, '--workers'))
  setIf(o, 'connections', f.connections, (v) => integer(v, '--connections'))
  setIf(o, 'seed', f.seed, (v) => integer(v, '--seed'))
  setIf(o, 'label', f.label, (v) => v)
  setIf(o, 'serverStatsUrl', f.serverStats, (v) => v)
  setIf(o, 'crossCheckGraceMs', f.crossCheckGrace, (v) => parseDuration(v, '--cross-check-grace'))
  if (f.http2) o.http2 = true
  if (f.k) o.insecure = true
  if (f.disableKeepalive) o.keepAlive = false
  const redact = list(f.redact)
  if (redact.length) o.redact = redact
  const shown = list(f.showSecret)
  if (shown.length) o.showSecret = shown
  o.headers = grpc ? [...headers(f), ...grpcMetadata(f.m)] : headers(f)
  // A gRPC call's content-type is the protocol's own: another one makes the server refuse every call (HTTP 415),
  // which the pre-run check would report as "not a gRPC server".
  if (grpc && o.headers.some(([name]) => name.toLowerCase() === 'content-type'))
    throw new UsageError(
      `${f.T !== undefined ? '-T' : 'a content-type header'}: a gRPC call is always application/grpc (for a grpc:// target, -H and -m add metadata)`,
    )
  if (grpc) o.grpc = grpcRunOptions(f)
  else {
    assertNoGrpcFlags(f)
    const body = await bodyOf(f)
    if (body) o.body = body
  }
  if (f.targets !== undefined) o.targets = targetsOf(f, o.urls, grpc)
  applyTlsFlags(o, f)
  const h2Limits = h2LimitOptions(f)
  if (Object.keys(h2Limits).length > 0) o.h2Limits = h2Limits
  const hedge = hedgeOptions(f, grpc)
  if (Object.keys(hedge).length > 0) o.hedge = hedge
  const eject = ejectOptions(f)
  if (eject !== undefined) o.eject = eject
  const saturation = saturationOptions(f)
  if (saturation !== undefined) o.saturation = saturation
  return o
}

/** An HTTP/2 SETTINGS value is 32 bits. */
const MAX_SETTING = 2 ** 32 - 1

/** --h2-max-header-list and the other HTTP/2 limits given. */
function h2LimitOptions(f: RunFlags): NonNullable<RunOptions['h2Limits']> {
  const l: NonNullable<RunOptions['h2Limits']> = {}
  setIf(l, 'maxHeaderList', f.h2MaxHeaderList, (v) => parseByteSize(v, '--h2-max-header-list', MAX_SETTING))
  setIf(l, 'maxContinuations', f.h2MaxContinuations, (v) => integer(v, '--h2-max-continuations'))
  setIf(l, 'headerTable', f.h2HeaderTable, (v) => parseByteSize(v, '--h2-header-table', MAX_SETTING))
  setIf(l, 'maxOwedFrames', f.h2MaxOwedFrames, (v) => integer(v, '--h2-max-owed-frames'))
  return l
}

/** --no-suppress, or the saturation gate's knobs; undefined leaves the defaults. */
function saturationOptions(f: RunFlags): RunOptions['saturation'] {
  if (f.suppress === false) return false
  const s: Exclude<RunOptions['saturation'], false | undefined> = {}
  setIf(s, 'maxErrorRate', f.suppressAtErrorRate, (v) => (v === 'off' ? null : number(v.replace(/%$/, ''), '--suppress-at-error-rate') / 100))
  setIf(s, 'maxInflight', f.hedgeMaxInflight, (v) => integer(v, '--hedge-max-inflight'))
  return Object.keys(s).length > 0 ? s : undefined
}

/** --no-eject, or the ejection knobs; undefined leaves the default (on with several replicas). */
function ejectOptions(f: RunFlags): RunOptions['eject'] {
  if (f.eject === false) return false
  const e: Exclude<RunOptions['eject'], false | undefined> = {}
  setIf(e, 'consecutiveFailures', f.ejectAfter, (v) => integer(v, '--eject-after'))
  setIf(e, 'baseEjectionMs', f.ejectFor, (v) => parseDuration(v, '--eject-for'))
  return Object.keys(e).length > 0 ? e : undefined
}

function headers(f: RunFlags): Array<[string, string]> {
  const parsed = list(f.H).map(parseHeader)
  if (f.T) parsed.push(['content-type', f.T])
  if (f.A) parsed.push(['accept', f.A])
  return parsed
}

async function bodyOf(f: RunFlags): Promise<Buffer | null> {
  if (f.d !== undefined && f.D !== undefined) throw new UsageError('give the body with -d or -D, not both')
  if (f.d !== undefined) return Buffer.from(f.d)
  if (f.D === undefined) return null
  try {
    return await readFile(f.D)
  } catch (err) {
    throw new UsageError(
      `cannot read -D file "${f.D}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message} (give a readable file holding the request body)`,
    )
  }
}

/** --targets FILE, read and checked whole before anything is sent; the request's own shape comes from the file (a gRPC run's -m metadata, as -H, goes on every target). */
function targetsOf(f: RunFlags, urls: readonly string[], grpc: boolean): RunOptions['targets'] {
  const clash = [
    !grpc && f.m !== undefined && '-m',
    f.d !== undefined && '-d',
    f.D !== undefined && '-D',
    f.B !== undefined && '-B',
    f.call !== undefined && '--call',
    f.dataOrder !== undefined && '--data-order',
  ].filter(Boolean)
  const what = grpc ? 'call and message' : 'method and body'
  if (clash.length > 0) throw new UsageError(`${clash.join(', ')} with --targets: each target gives its own ${what} in the file`)
  return readTargetsFile(f.targets!, urls)
}

/** `grpc`: --non-fatal-status takes gRPC code names. */
function hedgeOptions(f: RunFlags, grpc: boolean): HedgeRunOptions {
  const h: HedgeRunOptions = {}
  setIf(h, 'delay', f.hedgeDelay, parseHedgeDelayFlag)
  if (f.adaptive) h.adaptive = true
  setIf(h, 'adaptiveWindow', f.adaptiveWindow, parseWindow)
  setIf(h, 'delayMinMs', f.delayMin, (v) => parseDuration(v, '--delay-min'))
  setIf(h, 'delayMaxMs', f.delayMax, (v) => parseDuration(v, '--delay-max'))
  setIf(h, 'maxAttempts', f.maxAttempts, (v) => integer(v, '--max-attempts'))
  setIf(h, 'budgetPct', f.hedgeBudget, (v) => (v === 'off' ? (null as unknown as number) : number(v.replace(/%$/, ''), '--hedge-budget')))
  setIf(h, 'nonFatalStatus', f.nonFatalStatus, grpc ? parseGrpcNonFatal : parseStatusList)
  setIf(h, 'deadlineMs', f.deadline, (v) => parseDuration(v, '--deadline'))
  setIf(h, 'minHedgeWindowMs', f.minHedgeWindow, (v) => parseDuration(v, '--min-hedge-window'))
  if (f.parallel) h.parallel = true
  if (f.tied) h.tied = true
  setIf(h, 'cancel', f.cancel, (v) => v as CancelMode)
  if (f.hedgeHeader === false) h.header = null
  else if (typeof f.hedgeHeader === 'string') h.header = f.hedgeHeader
  if (f.idempotencyKey) h.idempotencyKey = true
  if (f.unsafeHedge) h.unsafeHedge = true
  return h
}

function parseWindow(v: string): { requests: number } | { ms: number } {
  if (/^\d+$/.test(v)) return { requests: integer(v, '--adaptive-window') }
  return { ms: parseDuration(v, '--adaptive-window') }
}

function parseStatusList(v: string): number[] {
  if (v.trim() === '') return []
  return v.split(',').map((s) => {
    const code = Number(s.trim())
    if (!Number.isInteger(code) || code < 100 || code > 599)
      throw new UsageError(`invalid status "${s.trim()}" in --non-fatal-status (use codes like 502,503,504)`)
    return code
  })
}

/**
 * --load-schedule or --concurrency-schedule and their flags (ghz's), as
 * they were given (`prefix`: --load, --concurrency; the values of
 * -schedule, -start, -step, -end, -step-duration, -max-duration):
 * load-schedule-options.ts checks them together.
 */
function scheduleFlags(prefix: string, [kind, start, step, end, stepDuration, maxDuration]: Array<string | undefined>): LoadScheduleOptions | undefined {
  const s: LoadScheduleOptions = {}
  setIf(s, 'kind', kind, (v) => v as LoadScheduleOptions['kind'])
  setIf(s, 'start', start, (v) => number(v, `${prefix}-start`))
  setIf(s, 'step', step, (v) => number(v, `${prefix}-step`))
  setIf(s, 'end', end, (v) => number(v, `${prefix}-end`))
  setIf(s, 'stepDurationMs', stepDuration, (v) => parseDuration(v, `${prefix}-step-duration`, 's'))
  setIf(s, 'maxDurationMs', maxDuration, (v) => parseDuration(v, `${prefix}-max-duration`, 's'))
  return Object.keys(s).length > 0 ? s : undefined
}

export function integer(v: string, flag: string): number {
  const n = Number(v)
  if (!/^-?\d+$/.test(String(v).trim()) || !Number.isSafeInteger(n)) throw new UsageError(`invalid ${flag} "${v}" (expected a whole number)`)
  return n
}

function number(v: string, flag: string): number {
  const n = Number(v)
  if (String(v).trim() === '' || !Number.isFinite(n)) throw new UsageError(`invalid ${flag} "${v}" (expected a number)`)
  return n
}

/** A repeatable flag's values: none, one (a string) or several. */
const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)])

function setIf<T extends object, K extends keyof T>(target: T, key: K, raw: string | undefined, parse: (v: string) => T[K]): void {
  if (raw === undefined) return
  target[key] = parse(String(raw))
}
