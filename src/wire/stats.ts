/**
 * The wire contract between hedgebench and a target that counts what it
 * received (--server-stats; the simulated replicas serve it): the stats JSON
 * and how it is fetched, the control paths, and the header names the target
 * counts. The client (run/server-check.ts) and the simulated target (sim/)
 * both import it and neither imports the other.
 */
import { request } from 'undici'
import { redactUrl } from '../core/redact.js'

/** Where the simulated replicas answer control requests (stats, reset, kill). */
export const CONTROL_PREFIX = '/__hedgebench/'

/** The header that numbers a hedge (`x-hedge-attempt: 1`), which a target may count. */
export const DEFAULT_HEDGE_HEADER = 'x-hedge-attempt'

/** Every copy of a tied request carries one id in it (--tied), so the target runs one copy. */
export const TIE_HEADER = 'x-hedgebench-tie'

/**
 * A sweep's lane on each of its attempts (`x-hedgebench-lane: plain`, `1`,
 * `2`, ...: the setting's place in the sweep's list), sent when the sweep
 * reads --server-stats, so that a counting target can count each setting
 * apart (as gRPC metadata on a gRPC call: the same h2 header).
 */
export const LANE_HEADER = 'x-hedgebench-lane'

/** What a target keeps per lane value: enough for a sweep of MAX_SWEEP_SETTINGS settings and its plain lane; values past it, or too long to be a lane, are not counted per lane. */
export const MAX_LANES = 64
const LANE_VALUE = /^[A-Za-z0-9._-]{1,16}$/

/** One lane's counts, under `totals.lanes[value]`: the counters of `totals` a target keeps per lane (received, completed and cancelled required). */
export interface LaneTotals {
  received: number
  completed: number
  cancelled: number
  /** Requests of the lane that began executing. */
  started?: number
  /** Time workers spent on the lane's requests, ms. */
  busyMs?: number
}

/**
 * The lane a request's header names, or null (no header, or not a lane
 * value): a target counts with it. `lanes` is the map it keeps, refused past
 * MAX_LANES new values so that a client's stray values cannot grow it.
 */
export function laneOf(raw: unknown, lanes: Readonly<Record<string, unknown>>): string | null {
  const value: unknown = Array.isArray(raw) ? raw[0] : raw
  if (typeof value !== 'string' || !LANE_VALUE.test(value)) return null
  return value in lanes || Object.keys(lanes).length < MAX_LANES ? value : null
}

/** Adds `by` to one counter of a lane (created at zero). */
export function countLane(lanes: Record<string, LaneTotals>, lane: string | null, key: keyof LaneTotals, by = 1): void {
  if (lane === null) return
  lanes[lane] ??= { received: 0, completed: 0, cancelled: 0 }
  const counts = lanes[lane]
  counts[key] = (counts[key] ?? 0) + by
}

/** Sums lane maps (replicas' into the totals). */
export function addLanes(into: Record<string, LaneTotals>, from: Readonly<Record<string, LaneTotals>>): void {
  for (const [lane, counts] of Object.entries(from)) for (const [key, n] of Object.entries(counts)) countLane(into, lane, key as keyof LaneTotals, n)
}

/** What a target keeps per path: enough for a mix of targets (--targets); paths past it are not counted per path. */
export const MAX_PATHS = 256

/** Counts one request under its request-target (path and query, as received), bounded by MAX_PATHS. */
export function countPath(paths: Record<string, number>, path: string): void {
  if (path in paths || Object.keys(paths).length < MAX_PATHS) paths[path] = (paths[path] ?? 0) + 1
}

/** Sums path counts (replicas' into the totals). */
export function addPaths(into: Record<string, number>, from: Readonly<Record<string, number>>): void {
  for (const [path, n] of Object.entries(from)) into[path] = (into[path] ?? 0) + n
}

/** The counters a stats endpoint must report under `totals`; the last four are optional. */
export interface StatsTotals {
  received: number
  completed: number
  cancelled: number
  /** Requests carrying the hedge header (any value). */
  hedgeHeader: number
  /** Requests that began executing: the work actually done, copies included. */
  started?: number
  /** Tied copies dropped before they started because their twin started first. */
  tiedDropped?: number
  /** Started requests a simulated target stalled on purpose: slow whatever the client, so a run's slow count is at least this. */
  stalled?: number
  /** Per sweep lane (the LANE_HEADER value): a target that reports it lets a sweep show each setting's server work. */
  lanes?: Record<string, LaneTotals>
  /** Requests received per request-target (path and query): a target that reports it lets a mix (--targets) check each target's attempts. */
  paths?: Record<string, number>
}

/** What a stats endpoint answers; only `totals` is required. */
export interface StatsJson {
  totals: StatsTotals
  replicas?: Array<{ url: string; busyMs?: number }>
}

/**
 * GETs a stats endpoint's JSON (bounded wait; a fresh connection so no
 * socket lingers). Any target whose stats carry `totals` in this shape can
 * be cross-checked (--server-stats); the simulated replicas are one.
 */
export async function fetchStatsJson<T>(statsUrl: string, timeoutMs = 5_000): Promise<T> {
  const res = await request(statsUrl, { method: 'GET', reset: true, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) })
  const text = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`stats endpoint ${redactUrl(statsUrl)} answered ${res.statusCode}`)
  return JSON.parse(text) as T
}
