/**
 * The add/close accumulator behind every `Figures` block (a phase, a
 * replica, the fan-out calls): cheap `add*` calls while the run goes, one
 * `toFigures()` at the end (vegeta's Metrics.Add / Close).
 */
import { createHistogram, encodeHistogram, recordMs, summarize, type Histogram } from './histogram.js'
import { isOkStatus } from '../core/status.js'
import { MAX_MESSAGES, OTHER_MESSAGES, type Figures } from '../results/run-result.js'
import { buildBy, FIGURES_FIELDS, type EveryField } from './phase-algebra.js'
import { isInterruption } from '../core/interruption.js'
import { localFailureCode } from '../core/local-failure.js'
import { round3 } from '../core/round.js'

export class FiguresAccumulator {
  requests = 0
  attempts = 0
  ok = 0
  errors = 0
  bytes = 0
  slowCount = 0
  /** Requests hedgebench aborted itself after an interruption: outside every other figure. */
  interrupted = 0
  interruptedSlow = 0
  interruptedMaxMs = 0
  /** Counts by status: HTTP's and gRPC's (0-999) in an array indexed by it, any other in a map (a Map update per request cost as much as the histogram's). */
  readonly #statusArray = new Float64Array(STATUS_ARRAY)
  readonly #statusMap = new Map<number, number>()
  readonly errorKinds = new Map<string, number>()
  readonly errorMessages = new Map<string, number>()
  /** Requests that failed on this machine (EMFILE, ...) before reaching the target: outside every other figure. */
  readonly localFailures = new Map<string, number>()
  readonly histogram: Histogram = createHistogram()

  /** `kindOf`: the name a transport error is counted under (the run's protocol's: gRPC names its own, protocol/grpc-error-kind.ts). */
  constructor(
    readonly slowMs: number,
    readonly kindOf: (err: Error) => string = errorKind,
  ) {}

  /** A finished request (or attempt): a status (and the message a failed answer carried), or a transport error. */
  add(latencyMs: number, status: number | null, error: Error | null, bytes: number, message: string | null = null): void {
    if (error && isInterruption(error)) {
      this.interrupted++
      if (latencyMs > this.slowMs) this.interruptedSlow++
      if (latencyMs > this.interruptedMaxMs) this.interruptedMaxMs = latencyMs
      return
    }
    const local = error ? localFailureCode(error) : null
    if (local !== null) return increment(this.localFailures, local)
    this.requests++
    this.bytes += bytes
    recordMs(this.histogram, latencyMs)
    if (latencyMs > this.slowMs) this.slowCount++
    if (status !== null) this.#countStatus(status)
    if (error) increment(this.errorKinds, this.kindOf(error))
    if (message !== null) this.#message(message)
    if (status !== null && isOkStatus(status)) this.ok++
    else this.errors++
  }

  #countStatus(status: number): void {
    if (Number.isInteger(status) && status >= 0 && status < STATUS_ARRAY) this.#statusArray[status]!++
    else increment(this.#statusMap, status)
  }

  /** Every status counted, with its count. */
  statusCodes(): Map<number, number> {
    const all = new Map(this.#statusMap)
    this.#statusArray.forEach((count, status) => {
      if (count > 0) all.set(status, count)
    })
    return all
  }

  /** Counted under its own text while there are few distinct ones, else under OTHER_MESSAGES. */
  #message(text: string): void {
    const known = this.errorMessages.has(text) || this.errorMessages.size < MAX_MESSAGES - (this.errorMessages.has(OTHER_MESSAGES) ? 0 : 1)
    increment(this.errorMessages, known ? text : OTHER_MESSAGES)
  }

  toFigures(): Figures {
    return buildBy(FIGURES_FIELDS, this.fields())
  }

  /** Every field of the figures (the interrupted ones undefined when none was). */
  fields(): EveryField<Figures> {
    const interrupted = this.interrupted > 0
    return {
      requests: this.requests,
      attempts: this.attempts,
      ok: this.ok,
      errors: this.errors,
      statusCodes: toRecord(this.statusCodes()),
      errorKinds: toRecord(this.errorKinds),
      errorMessages: this.errorMessages.size > 0 ? toRecord(this.errorMessages) : undefined,
      bytes: this.bytes,
      latencyMs: summarize(this.histogram),
      slow: { thresholdMs: this.slowMs, count: this.slowCount },
      histogram: encodeHistogram(this.histogram),
      generatorFailures: this.localFailures.size > 0 ? toRecord(this.localFailures) : undefined,
      interrupted: interrupted ? this.interrupted : undefined,
      interruptedSlow: interrupted ? this.interruptedSlow : undefined,
      interruptedMaxMs: interrupted ? round3(this.interruptedMaxMs) : undefined,
    }
  }
}

/**
 * A stable name for an error kind, as reports, JSON `errorKinds` and the
 * per-request log count it: its code (ECONNREFUSED, UND_ERR_SOCKET) or its
 * class name, and the reason of an HTTP/1.1 parser error. Ejection causes
 * are named by it too, so a cause is always one of the errors listed.
 */
export function errorKind(err: Error): string {
  const code = (err as { code?: unknown }).code
  // undici fails every stream in flight on a session its server sends GOAWAY on, even a graceful one (code 0,
  // connection rotation) that promised to finish them: named for what happened, not as a generic socket error.
  if (code === 'UND_ERR_SOCKET' && GOAWAY.test(err.message)) return 'HTTP2_GOAWAY'
  if (typeof code === 'string' && code !== '') return code
  // hedgebench's own HTTP/1.1 parser raises it without a code, its message one reason of a closed set
  // (engine/h1-response-parser.ts ParseReason): kept, as ghz keeps grpc-message, and bounded in count.
  if (err.name === 'HTTPParserError' && err.message !== '') return `HTTPParserError (${err.message})`
  return err.name || 'Error'
}

const GOAWAY = /"GOAWAY" frame received/

const STATUS_ARRAY = 1000

function increment<K>(map: Map<K, number>, key: K, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by)
}

function toRecord<K extends string | number>(map: Map<K, number>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const key of [...map.keys()].sort()) out[String(key)] = map.get(key)!
  return out
}
