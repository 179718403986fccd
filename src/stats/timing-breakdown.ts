/**
 * hey's "Details" for one attempt number: connection setup (for attempts
 * that opened a connection), request write, wait for the response headers,
 * response read, each as a histogram of completed attempts. Attempts that
 * failed or were cancelled are left out: their stages would mix times cut
 * short with whole ones.
 */
import type { AttemptOutcome } from '../hedging/observer.js'
import type { AttemptDetails, StageSummary } from '../results/run-result.js'
import { createHistogram, decodeHistogram, encodeHistogram, mergeHistograms, percentileMs, recordMs, type Histogram } from './histogram.js'

const STAGES = ['connect', 'write', 'wait', 'read'] as const

export class TimingBreakdown {
  readonly #connect = createHistogram()
  readonly #write = createHistogram()
  readonly #wait = createHistogram()
  readonly #read = createHistogram()

  /** Records a finished attempt's stages; returns false (and records nothing) when it has no complete set. */
  add(o: AttemptOutcome): boolean {
    const { launchedAt, connectedAt, requestSentAt, firstByteAt } = o
    if (o.error !== null || launchedAt === undefined || connectedAt === undefined || requestSentAt === undefined || firstByteAt === undefined) return false
    if (connectedAt < 0 || requestSentAt < 0 || firstByteAt < 0) return false
    if (o.openedConnection) recordMs(this.#connect, connectedAt - launchedAt)
    recordMs(this.#write, requestSentAt - connectedAt)
    recordMs(this.#wait, firstByteAt - requestSentAt)
    recordMs(this.#read, launchedAt + o.latencyMs - firstByteAt)
    return true
  }

  get count(): number {
    return this.#write.totalCount
  }

  toDetails(attempt: number): AttemptDetails {
    return { attempt, connect: stage(this.#connect), write: stage(this.#write), wait: stage(this.#wait), read: stage(this.#read) }
  }
}

function stage(h: Histogram): StageSummary {
  return { count: h.totalCount, p50: percentileMs(h, 50), p99: percentileMs(h, 99), max: percentileMs(h, 100), histogram: encodeHistogram(h) }
}

/** Worker threads' details of one phase, merged exactly per attempt number and stage (histograms added). */
export function mergeDetails(lists: AttemptDetails[][]): AttemptDetails[] {
  const byAttempt = new Map<number, AttemptDetails[]>()
  for (const list of lists) for (const d of list) byAttempt.set(d.attempt, [...(byAttempt.get(d.attempt) ?? []), d])
  return [...byAttempt.keys()]
    .sort((a, b) => a - b)
    .map((attempt) => {
      const parts = byAttempt.get(attempt)!
      const merged = Object.fromEntries(STAGES.map((s) => [s, stage(mergeHistograms(parts.map((p) => decodeHistogram(p[s].histogram))))]))
      return { attempt, ...merged } as AttemptDetails
    })
}
