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

/** The counters a stats endpoint must report under `totals`; the last two are optional. */
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
