/**
 * The client/server cross-check: the target's own count of requests
 * received, beside the client's count of attempts put on the wire. This is
 * how hedgebench shows it does not have the lost-update bug.
 */
import type { EarlyCancels, PhaseResult, ServerCrossCheck } from '../results/run-result.js'
import type { LaneServerCount } from '../results/sweep-result.js'
import { isGrpcUrl } from '../core/target-url.js'
import { fetchGrpcStatsJson } from '../wire/grpc-stats.js'
import { fetchStatsJson, type LaneTotals, type StatsJson, type StatsTotals } from '../wire/stats.js'

/** One read of the target's counters, and when it was taken. */
export interface ServerSnapshot {
  totals: StatsTotals
  busyMs: Map<string, number>
  at: number
}

const COUNTERS = ['received', 'completed', 'cancelled', 'hedgeHeader'] as const

class StatsShapeError extends Error {
  constructor() {
    super(`its JSON has no "totals" with numbers ${COUNTERS.join(', ')}`)
  }
}

/** "nothing listening (ECONNREFUSED)", "it answered something that is not JSON", ... */
function describeFailure(err: unknown): string {
  if (err instanceof SyntaxError) return 'it answered something that is not JSON'
  const code = (err as { code?: unknown }).code
  if (code === 'ECONNREFUSED') return 'nothing listening (ECONNREFUSED)'
  const message = err instanceof Error ? err.message : String(err)
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message
}

/** How long to wait for the server to see the last requests (a cancelled attempt's headers land just after). */
const SETTLE_MS = 2000

export class ServerCounter {
  #failure: string | null = null

  constructor(readonly statsUrl: string) {}

  /** Why the stats could not be read (the first failure), or null: the run reports it instead of dropping the cross-check silently. */
  get failure(): string | null {
    return this.#failure
  }

  async snapshot(): Promise<ServerSnapshot | undefined> {
    try {
      // A gRPC target answers a Stats call (grpc-stats.ts); an HTTP one a GET.
      const read = isGrpcUrl(this.statsUrl) ? fetchGrpcStatsJson : fetchStatsJson
      const { totals, replicas } = await read<Partial<StatsJson>>(this.statsUrl)
      if (!totals || !COUNTERS.every((k) => typeof totals[k] === 'number')) throw new StatsShapeError()
      const busyMs = new Map<string, number>()
      for (const r of replicas ?? []) if (typeof r.busyMs === 'number') busyMs.set(r.url, r.busyMs)
      return { totals, busyMs, at: performance.now() }
    } catch (err) {
      this.#failure ??= describeFailure(err)
      return undefined
    }
  }

  /**
   * Polls until the server's counts reach the client's (or SETTLE_MS passes),
   * then reports both: every attempt received, and every loser the client
   * cancelled seen closing (its close can land a moment after its answer's
   * race was decided).
   */
  async check(before: ServerSnapshot, clientAttempts: number, clientCancelled = 0, early?: EarlyCancels): Promise<ServerCrossCheck | undefined> {
    return (await this.checkLanes(before, clientAttempts, clientCancelled, [], early))?.window
  }

  /**
   * check(), and each lane's count (`lanes`: each lane's LANE_HEADER value
   * and its attempts) beside it, in the order given; `lanes` null when the
   * target does not count per lane (no `totals.lanes`).
   */
  async checkLanes(
    before: ServerSnapshot,
    clientAttempts: number,
    clientCancelled: number,
    lanes: ReadonlyArray<{ tag: string; attempts: number }>,
    early?: EarlyCancels,
  ): Promise<{ window: ServerCrossCheck; lanes: LaneServerCount[] | null } | undefined> {
    const deadline = performance.now() + SETTLE_MS
    const behind = (s: ServerSnapshot): boolean =>
      s.totals.received - before.totals.received < clientAttempts || s.totals.cancelled - before.totals.cancelled < clientCancelled
    let now = await this.snapshot()
    while (now && behind(now) && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20))
      now = await this.snapshot()
    }
    if (!now) return undefined
    const delta = (key: Exclude<keyof StatsTotals, 'lanes' | 'paths'>): number => (now.totals[key] ?? 0) - (before.totals[key] ?? 0)
    const received = delta('received')
    const check: ServerCrossCheck = {
      received,
      completed: delta('completed'),
      cancelled: delta('cancelled'),
      hedgeHeader: delta('hedgeHeader'),
      clientAttempts,
      match: received === clientAttempts,
    }
    if (now.totals.started !== undefined) check.started = delta('started')
    if (now.totals.tiedDropped !== undefined) check.tiedDropped = delta('tiedDropped')
    if (now.totals.stalled !== undefined) check.stalled = delta('stalled')
    if (now.busyMs.size > 0) check.utilisation = utilisation(before, now)
    if (early) check.earlyCancels = early
    const counted = isLaneMap(now.totals.lanes) ? now.totals.lanes : null
    const was = isLaneMap(before.totals.lanes) ? before.totals.lanes : {}
    // A lane with nothing started has no `started` yet: 0 when the target counts starts per lane at all (another lane has it).
    const perLane = (key: 'started' | 'busyMs'): boolean => Object.values(counted ?? {}).some((l) => l[key] !== undefined)
    const reports = { started: perLane('started'), busyMs: perLane('busyMs') }
    return { window: check, lanes: counted && lanes.map((l) => laneCount(counted[l.tag], was[l.tag], l.attempts, reports)) }
  }
}

/**
 * Gives a window's server count to its phases: to the phase alone, or, for
 * an interleaved window, once, to the last phase, naming every phase it
 * covers (the server saw one stream of requests and cannot split it; a
 * copy on each phase read as +100 % work in the plain one).
 */
export function attachServerCheck(results: readonly PhaseResult[], server: ServerCrossCheck | undefined): void {
  const last = results[results.length - 1]
  if (!server || !last) return
  last.server = results.length === 1 ? server : { ...server, phases: results.map((r) => r.name) }
}

/** A lane's counts between two reads (none before: from zero), against the client's attempts of it. */
function laneCount(
  now: LaneTotals | undefined,
  before: LaneTotals | undefined,
  clientAttempts: number,
  reports: { started: boolean; busyMs: boolean },
): LaneServerCount {
  const delta = (key: keyof LaneTotals): number => number(now?.[key]) - number(before?.[key])
  const received = delta('received')
  const out: LaneServerCount = { received, completed: delta('completed'), cancelled: delta('cancelled'), clientAttempts, match: received === clientAttempts }
  if (reports.started) out.started = delta('started')
  if (reports.busyMs) out.busyMs = Math.round(delta('busyMs') * 1000) / 1000
  return out
}

function number(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0
}

/** `totals.lanes` as the contract has it: an object of lane objects (a target that does not count lanes has none). */
function isLaneMap(v: unknown): v is Record<string, LaneTotals> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((l) => typeof l === 'object' && l !== null)
}

/** Busy time over the wall time between the two reads: the mean number of requests each replica was executing. */
function utilisation(before: ServerSnapshot, now: ServerSnapshot): Array<{ url: string; busy: number }> {
  const wallMs = Math.max(1, now.at - before.at)
  return [...now.busyMs].map(([url, busyMs]) => ({ url, busy: Math.round(((busyMs - (before.busyMs.get(url) ?? 0)) / wallMs) * 1000) / 1000 }))
}
