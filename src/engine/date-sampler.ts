/**
 * Reads the Date header of the few responses the clock-offset estimator
 * asks for (stats/clock-offset.ts), by wrapping only their handlers: every
 * other request goes to the connections untouched, so the hot path pays one
 * clock read and a modulo.
 */
import type { Dispatcher } from 'undici'
import { dateHeaderMs, type ClockOffsetEstimator } from '../stats/clock-offset.js'

type Abort = (err?: Error) => void

/** undici's legacy handler protocol, as the attempts speak it (see attempt.ts). */
interface LegacyHandler {
  onConnect(abort: Abort, context?: unknown): void
  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText?: string): boolean
  onData(chunk: Buffer): boolean
  onComplete(trailers: string[] | Buffer[] | null): void
  onError(err: Error): void
  onUpgrade?(statusCode: number, headers: Buffer[] | string[] | null, socket: unknown): void
  onResponseStarted?(): void
  onBodySent?(chunk: unknown): void
  onRequestSent?(): void
}

export function sampleDates(dispatch: Dispatcher.Dispatch, estimator: ClockOffsetEstimator): Dispatcher.Dispatch {
  return (opts, handler) => {
    if (!estimator.wants(estimator.clock())) return dispatch(opts, handler)
    return dispatch(opts, new DateReader(handler as unknown as LegacyHandler, estimator) as unknown as Dispatcher.DispatchHandler)
  }
}

class DateReader implements LegacyHandler {
  #sentAt = 0

  constructor(
    readonly inner: LegacyHandler,
    readonly estimator: ClockOffsetEstimator,
  ) {}

  onConnect(abort: Abort, context?: unknown): void {
    // The request headers are written right after this: the earliest the server can see it.
    this.#sentAt = this.estimator.clock()
    this.inner.onConnect(abort, context)
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText?: string): boolean {
    const receivedAt = this.estimator.clock()
    const date = dateHeaderMs(headers)
    if (date !== null && this.#sentAt > 0) this.estimator.observe(this.#sentAt, receivedAt, date)
    return this.inner.onHeaders(statusCode, headers, resume, statusText)
  }

  onData(chunk: Buffer): boolean {
    return this.inner.onData(chunk)
  }

  onComplete(trailers: string[] | Buffer[] | null): void {
    this.inner.onComplete(trailers)
  }

  onError(err: Error): void {
    this.inner.onError(err)
  }

  onUpgrade(statusCode: number, headers: Buffer[] | string[] | null, socket: unknown): void {
    this.inner.onUpgrade?.(statusCode, headers, socket)
  }

  onResponseStarted(): void {
    this.inner.onResponseStarted?.()
  }

  onBodySent(chunk: unknown): void {
    this.inner.onBodySent?.(chunk)
  }

  onRequestSent(): void {
    this.inner.onRequestSent?.()
  }
}
