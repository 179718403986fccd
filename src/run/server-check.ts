/**
 * The client/server cross-check: the target's own count of requests
 * received, beside the client's count of attempts put on the wire. This is
 * how hedgebench shows it does not have the lost-update bug.
 */
import { request } from 'undici'
import type { ServerCrossCheck } from '../results/run-result.js'

interface Totals {
  received: number
  completed: number
  cancelled: number
  hedgeHeader: number
}

/**
 * GETs a stats endpoint's JSON (bounded wait; a fresh connection so no
 * socket lingers). Any target whose stats carry `totals` in this shape can
 * be cross-checked (--server-stats); the simulated replicas are one.
 */
export async function fetchStatsJson<T>(statsUrl: string, timeoutMs = 5_000): Promise<T> {
  const res = await request(statsUrl, { method: 'GET', reset: true, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) })
  const text = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`stats endpoint ${statsUrl} answered ${res.statusCode}`)
  return JSON.parse(text) as T
}

/** How long to wait for the server to see the last requests (a cancelled attempt's headers land just after). */
const SETTLE_MS = 2000

export class ServerCounter {
  constructor(readonly statsUrl: string) {}

  async snapshot(): Promise<Totals | undefined> {
    try {
      const { totals } = await fetchStatsJson<{ totals: Totals }>(this.statsUrl)
      return { received: totals.received, completed: totals.completed, cancelled: totals.cancelled, hedgeHeader: totals.hedgeHeader }
    } catch {
      return undefined
    }
  }

  /** Polls until the server's count reaches the client's (or SETTLE_MS passes), then reports both. */
  async check(before: Totals, clientAttempts: number): Promise<ServerCrossCheck | undefined> {
    const deadline = performance.now() + SETTLE_MS
    let now = await this.snapshot()
    while (now && now.received - before.received < clientAttempts && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20))
      now = await this.snapshot()
    }
    if (!now) return undefined
    const received = now.received - before.received
    return {
      received,
      completed: now.completed - before.completed,
      cancelled: now.cancelled - before.cancelled,
      hedgeHeader: now.hedgeHeader - before.hedgeHeader,
      clientAttempts,
      match: received === clientAttempts,
    }
  }
}
