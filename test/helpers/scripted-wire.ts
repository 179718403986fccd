/**
 * A scripted wire for one hedged request (test/attempt-lifecycle, test/hedged-request): the dispatcher keeps
 * each attempt's handler, and the test makes undici's calls on it (onConnect, onHeaders, onData,
 * onComplete, onError, onRequestRefused) in the order under test, on a clock it sets. The observer
 * and the caller write down what they heard, one line per event.
 */
import type { Dispatcher } from 'undici'
import { HedgedRequest, type HedgeCaller } from '../../src/engine/hedged-request.js'
import type { Attempt } from '../../src/engine/attempt.js'
import { resolvePolicy, type HedgePolicy } from '../../src/hedging/policy.js'
import type { AttemptOutcome, HedgeObserver, HedgeOutcome } from '../../src/hedging/observer.js'
import type { DelaySource } from '../../src/hedging/delay-source.js'
import { httpProtocol } from '../../src/protocol/http.js'
import { grpcProtocol } from '../../src/protocol/grpc.js'
import type { Protocol } from '../../src/protocol/protocol.js'

export const A = 'http://127.0.0.1:1001'
export const B = 'http://127.0.0.1:1002'
export const HTTP1 = httpProtocol(false)
export const GRPC = grpcProtocol('/pkg.Svc/Call')

/** Raw headers as undici hands them to a handler. */
export function raw(...pairs: string[]): Buffer[] {
  return pairs.map((p) => Buffer.from(p, 'latin1'))
}

export function codeError(code: string): Error {
  return Object.assign(new Error(code), { code })
}

/** What the observer heard, one line per event, with the attempt's own outcome fields copied at attemptDone. */
export class Log implements HedgeObserver {
  readonly events: string[] = []
  readonly outcomes: AttemptOutcome[] = []
  attemptLaunched(i: number, o: string): void {
    this.events.push(`launched ${i} ${o}`)
  }
  attemptSettled(i: number): void {
    this.events.push(`settled ${i}`)
  }
  attemptSent(i: number): void {
    this.events.push(`sent ${i}`)
  }
  attemptRefused(i: number, _o: string, cancelled: boolean): void {
    this.events.push(`refused ${i}${cancelled ? ' cancelled' : ''}`)
  }
  attemptUnsent(i: number): void {
    this.events.push(`unsent ${i}`)
  }
  attemptCancelled(i: number): void {
    this.events.push(`cancelled ${i}`)
  }
  attemptDone(o: AttemptOutcome): void {
    this.events.push(`done ${o.index}`)
    this.outcomes.push({ ...o })
  }
  lateDiscarded(i: number): void {
    this.events.push(`late ${i}`)
  }
  budgetDenied(): void {
    this.events.push('budget denied')
  }
  saturationSuppressed(reason: string): void {
    this.events.push(`suppressed ${reason}`)
  }
  deadlineSuppressed(): void {
    this.events.push('deadline suppressed')
  }
  nonFatalTriggered(): void {
    this.events.push('non-fatal')
  }
  loserFinished(ms: number): void {
    this.events.push(`loser finished ${ms}`)
  }
  timerLateness(ms: number): void {
    this.events.push(`timer late ${ms}`)
  }
  /** The events since the last call. */
  #read = 0
  since(): string[] {
    const out = this.events.slice(this.#read)
    this.#read = this.events.length
    return out
  }
}

/** What the caller received. */
export class Caller implements HedgeCaller {
  readonly got: string[] = []
  outcome: HedgeOutcome | null = null
  final: { status: number; message: string | null } | null = null
  constructor(readonly ignoresHeaders = false) {}
  onRequestStart(): void {
    this.got.push('start')
  }
  onResponseStart(_c: Dispatcher.DispatchController, status: number, headers: Record<string, unknown>): void {
    this.got.push(`response ${status}${headers['x-from'] ? ` from ${headers['x-from']}` : ''}`)
  }
  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.got.push(`data ${chunk.toString()}`)
  }
  onResponseEnd(_c: Dispatcher.DispatchController, trailers: Record<string, unknown>): void {
    this.got.push(`end ${JSON.stringify(trailers)}`)
  }
  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.got.push(`error ${(err as { code?: string }).code ?? err.message}`)
    this.#failed(err)
  }
  #failed: (err: Error) => void = () => {}
  /** Its error, when it comes (a timer's doing: the deadline). */
  readonly failed = new Promise<Error>((resolve) => {
    this.#failed = resolve
  })
  onFinalStatus(status: number, message: string | null): void {
    this.final = { status, message }
  }
  onHedgeOutcome(outcome: HedgeOutcome): void {
    this.outcome = outcome
  }
}

/** One attempt on the scripted wire: its handler, and what the handler asked of the wire. */
export interface Copy {
  readonly opts: Dispatcher.DispatchOptions
  readonly handler: Attempt
  aborted: Error | null
  /** Resolves with the reason of the abort, when it comes (a timer's doing: the deadline). */
  readonly whenAborted: Promise<Error>
  readonly onAbort: (err: Error) => void
  resumed: number
}

/** A script's request beside its policy, protocol and caller: its own fields, the delay in force, a copy the dispatcher refuses. */
export interface ScriptOptions {
  request?: Partial<Dispatcher.DispatchOptions>
  delayMs?: number
  /** The dispatcher throws for this copy (as undici does for options it refuses). */
  throwsFor?: number
  /** A policy without an observer (the interceptor's, when its user gives none): nothing is logged. */
  unobserved?: boolean
}

export class Script<C extends HedgeCaller = Caller> {
  readonly copies: Copy[] = []
  readonly log = new Log()
  readonly caller: C
  readonly delays: number[] = []
  t = 0
  readonly req: HedgedRequest

  /** `protocol`: by default HedgedRequest's own (HTTP/1.1). */
  constructor(policy: Partial<HedgePolicy> = {}, protocol?: Protocol, caller: C = new Caller() as HedgeCaller as C, options: ScriptOptions = {}) {
    this.caller = caller
    const delayMs = options.delayMs ?? 50
    const delay: DelaySource = { current: () => delayMs, observe: (ms) => void this.delays.push(ms) }
    const resolved = resolvePolicy({
      delay,
      parallel: true,
      budgetPct: null,
      replicas: [A, B],
      random: () => 0,
      ...policy,
      observer: options.unobserved ? undefined : this.log,
      now: () => this.t,
    })
    const dispatch = (opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean => {
      let onAbort: (err: Error) => void = () => {}
      const whenAborted = new Promise<Error>((resolve) => {
        onAbort = resolve
      })
      const index = this.copies.push({ opts, handler: handler as Attempt, aborted: null, resumed: 0, whenAborted, onAbort }) - 1
      if (index === options.throwsFor) throw codeError('UND_ERR_INVALID_ARG')
      return true
    }
    const request = { origin: A, path: '/', method: 'GET', ...options.request } as Dispatcher.DispatchOptions
    this.req = new HedgedRequest(dispatch, request, this.caller, resolved, protocol)
    this.req.start()
  }

  /** undici hands copy `i` a connection and is about to write its headers. */
  connect(i: number, t = this.t): void {
    this.t = t
    const copy = this.copies[i]!
    copy.handler.onConnect((err?: Error) => {
      copy.aborted = err ?? new Error('aborted')
      copy.onAbort(copy.aborted)
    })
  }

  /** Copy `i` answers 200 and ends (connected first if it was not), with these trailers. */
  answer(i: number, trailers: Buffer[] | null = null): void {
    if (!this.copies[i]!.handler.sent) this.connect(i)
    this.headers(i, 200)
    this.copies[i]!.handler.onComplete(trailers as never)
  }

  /** Its answer's headers arrive; what the handler returned (false: pause reading). */
  headers(i: number, status: number, rawHeaders: Buffer[] = [], t = this.t): boolean {
    this.t = t
    const copy = this.copies[i]!
    return copy.handler.onHeaders!(status, rawHeaders, () => copy.resumed++, '')
  }
}
