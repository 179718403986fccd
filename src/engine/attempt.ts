/**
 * One HTTP attempt of a hedged request: the undici handler that sees it
 * through, and the single place where its life events are counted.
 *
 * It speaks undici's native handler protocol (onConnect, onHeaders, onData,
 * onComplete, onError: what undici's core calls) and is its own
 * DispatchController. A handler with `onRequestStart` would be wrapped by
 * undici in an UnwrapHandler plus an UnwrapController per attempt, and have
 * its response headers and trailers parsed into objects on every attempt;
 * here only the answer the caller receives is parsed (see HedgedRequest).
 * Counting is unchanged: onConnect is the moment undici's
 * onRequestStart would fire, right before it writes the request headers.
 */
import type { Dispatcher } from 'undici'
import type { AttemptOutcome } from '../hedging/observer.js'
import type { ResolvedPolicy } from '../hedging/policy.js'
import type { BodyReader, Protocol } from '../protocol/protocol.js'
import { AbortOnce } from './abort-once.js'
import type { AttemptTimes } from './attempt-timing.js'
import { INTERRUPTED_CODE } from '../core/interruption.js'
import { isOkStatus } from '../core/status.js'
import { localFailureCode } from '../core/local-failure.js'
import { HedgeCancelledError, withoutStackTraces } from '../hedging/errors.js'
import { errorKind } from '../stats/figures.js'

/**
 * What an attempt needs of the logical request it belongs to: its policy
 * and the events it reports. HedgedRequest implements it; naming only this
 * keeps the attempt free of the request's own module (no import cycle).
 */
export interface AttemptOwner {
  readonly policy: ResolvedPolicy
  /** How its answer's status is read (see protocol.ts). */
  readonly protocol: Protocol
  readonly winner: Attempt | null
  readonly decidedAt: number
  attemptStarted(context: unknown): void
  /** Whether an answer with this status needs its raw headers (the caller's, the protocol's or the saturation gate's). */
  wantsHeaders(statusCode: number): boolean
  attemptResponded(attempt: Attempt, statusCode: number, rawHeaders: Buffer[], statusMessage?: string): void
  winnerData(chunk: Buffer): void
  winnerEnded(rawTrailers: Buffer[] | string[] | null): void
  attemptFailed(attempt: Attempt, err: Error): void
}

type Abort = (err?: Error) => void

/**
 * It is also its own AttemptOutcome: at its end the observer is handed the
 * attempt itself, with its latency, error and win filled in (no outcome
 * object per attempt).
 */
export class Attempt extends AbortOnce implements Dispatcher.DispatchHandler, AttemptOutcome, AttemptTimes {
  /** Headers written to a connection. */
  sent = false
  /** undici delivered its last callback (end or error). */
  finished = false
  /** We stopped it (lost the race). */
  cancelled = false
  /** Its answer is being drained and thrown away (non-fatal status, or too late). */
  discarding = false
  status: number | null = null
  /** What its server said with a failed status (protocol.ts failureText), else null. */
  message: string | null = null
  bytes = 0
  // ---- AttemptOutcome, set when it ends ----
  latencyMs = 0
  error: Error | null = null
  won = false
  // ---- AttemptTimes (attempt-timing.ts): the Details breakdown ----
  connectedAt = -1
  requestSentAt = -1
  firstByteAt = -1
  openedConnection = false
  /** Told by the pool before onConnect: the connection about to carry this copy was opened for it. */
  #opening = false
  #unsentCounted = false
  /** How long after its send it was cancelled (loseRace), for a refusal that takes the cancel back. */
  #cancelledAfterMs: number | undefined = undefined
  #abort: Abort | null = null
  #resume: (() => void) | null = null
  #paused = false
  /** The protocol's reader of this answer's body (protocol.ts bodyReader); null: no byte of it is judged (HTTP). */
  #body: BodyReader | null = null

  constructor(
    readonly req: AttemptOwner,
    readonly index: number,
    readonly origin: string,
    readonly launchedAt: number,
  ) {
    super()
  }

  // ---- DispatchController (what the caller's controller acts on) ----

  get paused(): boolean {
    return this.#paused
  }

  protected onAbort(reason: Error): void {
    this.#abort?.(reason)
  }

  pause(): void {
    this.#paused = true
  }

  resume(): void {
    if (!this.#paused) return
    this.#paused = false
    this.#resume?.()
  }

  /** Still racing: may yet produce the answer. */
  pending(): boolean {
    return !this.finished && !this.cancelled && !this.discarding
  }

  // ---- undici's handler protocol ----

  /** The pool: the connection this copy is about to be written on was opened for it (onConnect follows). */
  onConnectionOpened(): void {
    this.#opening = true
  }

  /** undici is about to write the request headers (where onRequestStart would fire). */
  onConnect(abort: Abort, context?: unknown): void {
    this.#abort = abort
    if (this.cancelled) {
      // Decided while this copy waited for a connection: stop it before
      // undici writes the headers, so no server ever sees it.
      this.#countUnsent()
      this.#cancel('hedge cancelled before it was sent')
      return
    }
    this.sent = true
    this.connectedAt = this.req.policy.now()
    this.openedConnection = this.#opening
    this.#opening = false
    this.req.policy.observer?.attemptSent(this.index, this.origin)
    this.req.attemptStarted(context)
  }

  /** Asked by hedgebench's HTTP/1.1 connection before onHeaders: are the raw header views needed? (undici never asks.) */
  wantsHeaders(statusCode: number): boolean {
    return !this.cancelled && this.req.wantsHeaders(statusCode)
  }

  /** Status and raw headers; false asks undici to pause reading. */
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusMessage?: string): boolean {
    this.#resume = resume
    if (this.cancelled) return true
    this.firstByteAt = this.req.policy.now()
    this.status = this.req.protocol.answerStatus(statusCode, rawHeaders)
    if (!isOkStatus(this.status)) this.message = this.req.protocol.failureText(rawHeaders, null)
    this.#body = this.req.protocol.bodyReader(statusCode, rawHeaders)
    this.req.attemptResponded(this, statusCode, rawHeaders, statusMessage)
    return !this.#paused
  }

  /**
   * The server did not process it (an HTTP/2 GOAWAY or REFUSED_STREAM): no
   * longer on the wire, so no longer counted as sent. It waits for a
   * connection again, as a new attempt does: onConnect counts it once more,
   * or, if the race was decided meanwhile, as never sent. A loser already
   * cancelled (a GOAWAY that came after its reset) was never sent either.
   */
  onRequestRefused(): void {
    if (!this.sent) return
    this.sent = false
    this.req.policy.observer?.attemptRefused?.(this.index, this.origin, this.cancelled, this.#cancelledAfterMs)
    if (this.finished && this.cancelled) this.#countUnsent()
  }

  /** The request was handed to the socket (undici calls it right after the write). */
  onRequestSent(): void {
    this.requestSentAt = this.req.policy.now()
  }

  onData(chunk: Buffer): boolean {
    this.bytes += chunk.length
    if (this.#body !== null && !this.cancelled) {
      const refused = this.#body.read(chunk)
      if (refused !== null) return this.#refuse(refused)
    }
    if (this === this.req.winner) this.req.winnerData(chunk)
    return !this.#paused
  }

  onComplete(rawTrailers: string[] | Buffer[] | null): void {
    this.finished = true
    // A copy cancelled before its headers were read has no status, and its trailers are not read either.
    if (this.status !== null) {
      this.status = this.req.protocol.endStatus(this.status, rawTrailers)
      if (!isOkStatus(this.status)) this.message = this.req.protocol.failureText(null, rawTrailers) ?? this.message
    }
    this.#heardAtEnd(rawTrailers)
    const won = this === this.req.winner
    const elapsed = this.#elapsed()
    this.#report(null, won, elapsed)
    if (this.index === 0) this.req.policy.delay.observe(elapsed)
    if (won) this.req.winnerEnded(rawTrailers)
  }

  /** The end-of-attempt hook: an overload signal in the trailers (gRPC's status and pushback) reaches the saturation gate. */
  #heardAtEnd(rawTrailers: string[] | Buffer[] | null): void {
    const gate = this.req.policy.saturation
    if (!gate) return
    const signal = this.req.protocol.endSignal(rawTrailers)
    if (signal) gate.signal(this.origin, signal)
  }

  onError(err: Error): void {
    this.finished = true
    if (this.cancelled) {
      if (!this.sent) this.#countUnsent()
      else this.#loserFinished()
      this.req.policy.saturation?.settled(this.origin)
      this.req.policy.observer?.attemptSettled(this.index, this.origin)
      return
    }
    this.#report(err, false, this.#elapsed())
    // A discarded answer's failure decides nothing (the winner is never one).
    if (!this.discarding) this.req.attemptFailed(this, err)
  }

  /** The request was decided by another attempt (or failed): stop this one. */
  loseRace(): void {
    if (this.finished || this.cancelled || this.discarding) return
    if (!this.sent) {
      this.cancelled = true // counted as unsent when undici hands it a connection or fails it
      return
    }
    if (this.req.policy.cancel === 'ignore') {
      this.discarding = true // Envoy-style: let it finish on its connection, discard the answer
      return
    }
    this.cancelled = true
    // How soon after its send: a stream reset that early may be dropped by a server before its handler (run/server-check.ts).
    this.#cancelledAfterMs = this.req.policy.now() - this.connectedAt
    this.req.policy.observer?.attemptCancelled(this.index, this.origin, this.#cancelledAfterMs)
    if (this.index === 0) this.req.policy.delay.observe(this.#elapsed()) // a lower bound: it was at least this slow
    this.#cancel('another attempt answered first')
  }

  /**
   * The protocol refused what its body began with: the attempt ends now, its
   * stream reset (RST_STREAM CANCEL on h2), instead of waiting for a body
   * that may never come; onError counts it under the refusal's code, won by
   * nothing, whether it was racing, the winner or being drained.
   */
  #refuse(err: Error): boolean {
    this.#body = null
    this.abort(err)
    return false
  }

  /** Stops this attempt on its connection as the loser of the race (a control-flow error, without a stack). */
  #cancel(message: string): void {
    withoutStackTraces(() => this.abort(new HedgeCancelledError(message)))
  }

  #countUnsent(): void {
    if (this.#unsentCounted) return
    this.#unsentCounted = true
    if (this.index > 0) this.req.policy.budget.refund()
    this.req.policy.observer?.attemptUnsent(this.index, this.origin)
  }

  #report(error: Error | null, won: boolean, latencyMs: number): void {
    const failure = failureOf(error, this.status, this.req.protocol)
    const policy = this.req.policy
    // A socket this machine could not open (EMFILE) says nothing about the replica or its strain.
    if (localFailureCode(error) === null) {
      policy.health?.record(this.origin, failure)
      policy.saturation?.outcome(isStrainSign(error, this.status, this.req.protocol))
    }
    policy.saturation?.settled(this.origin)
    const observer = policy.observer
    if (!observer) return
    if (!won && this.discarding) this.#loserFinished()
    this.latencyMs = latencyMs
    this.error = error
    this.won = won
    if (error) this.status = null // an outcome has a status or an error, never both
    observer.attemptDone(this)
    observer.attemptSettled(this.index, this.origin)
  }

  /** A loser that reached the wire ends: how long it ran on after the request was decided. */
  #loserFinished(): void {
    const decidedAt = this.req.decidedAt
    if (decidedAt > 0) this.req.policy.observer?.loserFinished(this.req.policy.now() - decidedAt)
  }

  /** Latency so far: from its launch, the wait for a connection included (as the caller waits). */
  #elapsed(): number {
    return this.req.policy.now() - this.launchedAt
  }
}

/**
 * What the saturation gate counts as a sign of strain: a timeout, or a
 * status the protocol calls one (an HTTP 5xx, gRPC UNAVAILABLE or
 * DEADLINE_EXCEEDED, …). A refused or reset connection is a dead replica,
 * not a busy one; ejection deals with it, and hedging it elsewhere costs the
 * dead replica nothing.
 */
function isStrainSign(error: Error | null, status: number | null, protocol: Protocol): boolean {
  if (error) return STRAIN_ERRORS.has((error as { code?: string }).code ?? '')
  return status !== null && protocol.strained(status)
}

const STRAIN_ERRORS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'HEDGE_DEADLINE_EXCEEDED'])

/**
 * What outlier ejection counts as this replica failing: a transport error,
 * or a status the protocol calls strain (Envoy's consecutive_5xx: an HTTP
 * 5xx; for gRPC the codes its HTTP mapping makes a 5xx, UNAVAILABLE among
 * them), named "HTTP/1.1 503", "gRPC UNAVAILABLE".
 */
function failureOf(error: Error | null, status: number | null, protocol: Protocol): string | null {
  if (error) {
    // Our own abort after Ctrl-C says nothing about the replica.
    if (errorKind(error) === INTERRUPTED_CODE) return null
    // Named as the phase's error table names it, so an ejection's cause is one of the errors listed.
    return protocol.errorKind(error)
  }
  return status !== null && protocol.strained(status) ? `${protocol.name} ${protocol.statusLabel(status)}` : null
}
