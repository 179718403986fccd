/**
 * One logical request under a hedging policy: the original attempt, the
 * hedges that follow it one delay apart (or at once after a non-fatal
 * failure), the first acceptable answer delivered to the caller, and every
 * other attempt cancelled. Modelled on undici's RetryHandler, but attempts
 * overlap instead of following each other.
 *
 * Counting happens in its attempts (attempt.ts), synchronously at the
 * moment each event happens (see HedgeObserver): an attempt is "sent" in
 * onConnect, which the connection calls right before it writes the request
 * headers; aborting there means the headers are never written ("unsent").
 * An HTTP/2 stream the server refused (GOAWAY, REFUSED_STREAM) is taken
 * back (onRequestRefused) and heard in onConnect again when resent.
 */
import { util, type Dispatcher } from 'undici'
import type { HedgeOutcome } from '../hedging/observer.js'
import type { ResolvedPolicy } from '../hedging/policy.js'
import { isIdempotentMethod, TIE_HEADER } from '../hedging/policy.js'
import { pickHedgeTarget } from '../hedging/replica-picker.js'
import { hasHeader, withHeaders } from '../protocol/request-headers.js'
import type { Protocol } from '../protocol/protocol.js'
import { httpProtocol } from '../protocol/http.js'
import { AbortOnce } from './abort-once.js'
import { stillEarly } from './early-timer.js'
import { Attempt, type AttemptOwner } from './attempt.js'
import { DeadlineExceededError } from '../hedging/errors.js'

export type HedgeCaller = Dispatcher.DispatchHandler & {
  onHedgeOutcome?(outcome: HedgeOutcome): void
  /** The winner's final status, in the protocol's numbers, right before onResponseEnd (gRPC: from its trailers), and what a failed answer's server said with it (protocol.ts failureText). */
  onFinalStatus?(status: number, message: string | null): void
  /** The caller never reads response headers or trailers: skip parsing them (it gets an empty object). */
  readonly ignoresHeaders?: boolean
}

/** What a caller that ignores headers receives instead of them. */
const NO_HEADERS: Record<string, string | string[]> = Object.freeze({}) as Record<string, string | string[]>

/** The protocol when none is given: HTTP/1.1 framing (the interceptor's historical behaviour). */
const HTTP = httpProtocol(false)

type Trigger = 'timer' | 'nonfatal' | 'parallel'

/**
 * The request is also the controller its caller holds (as each Attempt is
 * its own): pausing and resuming act on the winning attempt, aborting stops
 * every attempt. One object per logical request, not two.
 */
export class HedgedRequest extends AbortOnce implements AttemptOwner {
  readonly attempts: Attempt[] = []
  readonly startedAt: number
  readonly delayMs: number
  winner: Attempt | null = null
  /** The answer (or failure) for the caller is chosen: no new attempts. */
  decided = false
  /** The caller got its last callback. */
  finished = false
  /** policy.now() when the request was decided, if it had other attempts to stop; else 0. */
  decidedAt = 0
  #callerStarted = false
  #opts: Dispatcher.DispatchOptions
  #hedgeable: boolean
  #timer: NodeJS.Timeout | null = null
  #deadlineTimer: NodeJS.Timeout | null = null
  #intendedFireAt = 0
  /** Times the armed hedge timer fired before its delay and was armed again for the rest (see fireTimer). */
  #rearms = 0
  #hedgeFiredAt: number | null = null
  /** The budget refused a hedge this request wanted (reported with the outcome). */
  #budgetDenied = false

  constructor(
    readonly dispatch: Dispatcher.Dispatch,
    opts: Dispatcher.DispatchOptions,
    readonly handler: HedgeCaller,
    readonly policy: ResolvedPolicy,
    /** How each attempt is framed and its answer classified (see protocol.ts). */
    readonly protocol: Protocol = HTTP,
  ) {
    super()
    this.startedAt = policy.now()
    this.delayMs = policy.parallel ? 0 : policy.delay.current()
    this.#opts = this.#withKey(opts)
    this.#hedgeable = policy.maxAttempts > 1 && isResendable(opts.body) && this.#safeToRepeat(this.#opts)
  }

  start(): void {
    const policy = this.policy
    policy.budget.deposit()
    if (policy.deadlineMs !== null) this.#deadlineTimer = setTimeout(onDeadline, policy.deadlineMs, this)
    this.#launch(0, this.#opts.origin as string, this.startedAt)
    if (!this.#hedgeable || this.decided) return
    // Until the attempts allowed are out, or the budget, the deadline or the gate refuses one.
    if (policy.parallel) while (this.#tryHedge('parallel'));
    else this.#schedule()
  }

  // ---- DispatchController (what the caller holds) ----

  get paused(): boolean {
    return this.winner?.paused ?? false
  }

  protected onAbort(reason: Error): void {
    this.abortAll(reason)
  }

  pause(): void {
    this.winner?.pause()
  }

  resume(): void {
    this.winner?.resume()
  }

  // ---- what the attempts report ----

  /** An attempt reached the wire: the caller's request has started. */
  attemptStarted(context: unknown): void {
    if (this.#callerStarted) return
    this.#callerStarted = true
    this.handler.onRequestStart?.(this, context)
  }

  wantsHeaders(status: number): boolean {
    // A 429 or 503 may carry the Retry-After the saturation gate is told of.
    return !this.handler.ignoresHeaders || this.protocol.readsHeaders || ((status === 429 || status === 503) && this.policy.saturation != null)
  }

  /** First bytes of an answer (raw headers as undici read them). Returns nothing; decides or discards. */
  attemptResponded(a: Attempt, status: number, rawHeaders: Buffer[], message?: string): void {
    const gate = this.policy.saturation
    if (gate) {
      const signal = this.protocol.answerSignal(status, rawHeaders)
      if (signal) gate.signal(a.origin, signal)
    }
    if (this.decided) {
      // Too late: drain it (keeps the connection reusable) and count it.
      a.discarding = true
      this.policy.observer?.lateDiscarded(a.index, a.origin)
      return
    }
    if (
      this.protocol.classify(status, rawHeaders, this.policy.nonFatal) === 'non-fatal' &&
      this.#hedgeable &&
      (this.#tryHedge('nonfatal') || this.#othersPending(a))
    ) {
      a.discarding = true // drained quietly; another attempt will answer
      return
    }
    this.#commit(a)
    // Only the answer the caller receives has its headers parsed.
    const handler = this.handler
    if (handler.onResponseStart) handler.onResponseStart(this, a.status ?? status, handler.ignoresHeaders ? NO_HEADERS : util.parseHeaders(rawHeaders), message)
  }

  winnerData(chunk: Buffer): void {
    this.handler.onResponseData?.(this, chunk)
  }

  winnerEnded(rawTrailers: string[] | Buffer[] | null): void {
    this.#finish(this.winner!.index)
    const handler = this.handler
    handler.onFinalStatus?.(this.winner!.status!, this.winner!.message)
    if (!handler.onResponseEnd) return
    handler.onResponseEnd(this, handler.ignoresHeaders ? NO_HEADERS : rawTrailers && rawTrailers.length > 0 ? util.parseHeaders(rawTrailers) : {})
  }

  /** An attempt failed with a transport error (not one we caused). */
  attemptFailed(a: Attempt, err: Error): void {
    if (a === this.winner) return this.#fail(err)
    if (this.decided) return
    if (this.#hedgeable && (this.#tryHedge('nonfatal') || this.#othersPending(a))) return
    this.#fail(err)
  }

  /** Caller (or deadline) aborts the whole request. */
  abortAll(reason: Error): void {
    if (this.winner && !this.winner.finished) {
      this.winner.abort(reason) // on its connection (a winner has had onConnect): its error reaches attemptFailed -> #fail
      return
    }
    this.#fail(reason)
  }

  /** Every attempt's replica, in launch order, whether it is still in flight or not. */
  triedOrigins(): string[] {
    return this.attempts.map((a) => a.origin)
  }

  busyOrigins(): string[] {
    const busy: string[] = []
    for (const a of this.attempts) if (a.pending()) busy.push(a.origin)
    return busy
  }

  fireTimer(): void {
    this.#timer = null
    const now = this.policy.now()
    // A hedge does not leave before its delay (early-timer.ts).
    const rest = stillEarly(now, this.#intendedFireAt, this.#rearms)
    if (rest > 0) {
      this.#rearms++
      this.#timer = setTimeout(onHedgeTimer, rest, this)
      return
    }
    this.policy.observer?.timerLateness(Math.max(0, now - this.#intendedFireAt))
    this.#tryHedge('timer')
  }

  #tryHedge(trigger: Trigger): boolean {
    const policy = this.policy
    if (this.decided || this.attempts.length >= policy.maxAttempts) return false
    if (policy.deadlineMs !== null && policy.deadlineMs - this.elapsed() < policy.minHedgeWindowMs) {
      policy.observer?.deadlineSuppressed()
      return false
    }
    const origin = policy.replicas
      ? pickHedgeTarget(policy.replicas, this.busyOrigins(), policy.random, policy.health, this.triedOrigins())
      : (this.#opts.origin as string)
    const saturated = policy.saturation?.refuse(origin, trigger !== 'nonfatal')
    if (saturated) {
      policy.observer?.saturationSuppressed(saturated)
      return false
    }
    if (!policy.budget.trySpend()) {
      policy.observer?.budgetDenied()
      this.#budgetDenied = true
      return false
    }
    if (trigger === 'nonfatal') policy.observer?.nonFatalTriggered()
    this.#hedgeFiredAt ??= this.elapsed()
    this.#launch(this.attempts.length, origin, policy.now())
    if (trigger !== 'parallel') this.#schedule()
    return true
  }

  #schedule(): void {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
    if (this.decided || this.attempts.length >= this.policy.maxAttempts) return
    this.#intendedFireAt = this.policy.now() + this.delayMs
    this.#rearms = 0
    this.#timer = setTimeout(onHedgeTimer, this.delayMs, this)
  }

  #launch(index: number, origin: string, now: number): void {
    const a = new Attempt(this, index, origin, now)
    this.attempts.push(a)
    this.policy.saturation?.launched(origin)
    this.policy.observer?.attemptLaunched(index, origin)
    const deadline = this.policy.deadlineMs
    const opts = this.protocol.attemptOptions(this.#opts, index, origin, this.policy.header, deadline === null ? null : deadline - this.elapsed())
    try {
      this.dispatch(opts, a)
    } catch (err) {
      a.onError(err as Error)
    }
  }

  #commit(a: Attempt): void {
    this.winner = a
    this.#decide()
  }

  #decide(): void {
    this.decided = true
    // Read the clock only when there are losers to time (the loser runtime the 'Controlled Duplication' article asks for).
    if (this.attempts.length > 1) this.decidedAt = this.policy.now()
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
    for (const other of this.attempts) if (other !== this.winner) other.loseRace()
  }

  #fail(err: Error): void {
    if (this.finished) return
    if (!this.decided) this.#decide()
    this.#finish(-1)
    this.handler.onResponseError?.(this, err)
  }

  #finish(winner: number): void {
    this.finished = true
    if (this.#deadlineTimer) clearTimeout(this.#deadlineTimer)
    this.#deadlineTimer = null
    this.handler.onHedgeOutcome?.({
      launched: this.attempts.length,
      winner,
      origin: (this.attempts[winner] ?? this.attempts[this.attempts.length - 1])!.origin,
      hedgeFiredMs: this.#hedgeFiredAt,
      delayMs: this.delayMs,
      budgetDenied: this.#budgetDenied,
    })
  }

  #othersPending(a: Attempt): boolean {
    for (const other of this.attempts) if (other !== a && other.pending()) return true
    return false
  }

  elapsed(): number {
    return this.policy.now() - this.startedAt
  }

  /** Headers every copy of this request shares: its Idempotency-Key, its tie id (--tied). */
  #withKey(opts: Dispatcher.DispatchOptions): Dispatcher.DispatchOptions {
    const { makeKey, makeTie } = this.policy
    const extra: string[] = []
    // Keyed even when it cannot be hedged (a plain phase): the key belongs to the logical request.
    if (makeKey && !hasHeader(opts.headers, 'idempotency-key')) extra.push('idempotency-key', makeKey())
    if (makeTie) extra.push(TIE_HEADER, makeTie())
    return extra.length === 0 ? opts : { ...opts, headers: withHeaders(opts.headers, extra) }
  }

  /** Never hedge a plain write: only idempotent methods, or writes carrying a key, or an explicit opt-out. */
  #safeToRepeat(opts: Dispatcher.DispatchOptions): boolean {
    if (opts.upgrade) return false
    const method = opts.method
    // `idempotent`: the run's protocol marked the request repeatable (see protocol.ts requestOptions).
    return isIdempotentMethod(method) || this.policy.unsafeHedge || hasHeader(opts.headers, 'idempotency-key') || opts.idempotent === true
  }
}

function onHedgeTimer(req: HedgedRequest): void {
  req.fireTimer()
}

function onDeadline(req: HedgedRequest): void {
  req.abortAll(new DeadlineExceededError(`deadline of ${req.policy.deadlineMs} ms exceeded`))
}

/** A body we can send again: none, a string or bytes. Streams are consumed once. */
function isResendable(body: unknown): boolean {
  return body == null || typeof body === 'string' || body instanceof Uint8Array
}
