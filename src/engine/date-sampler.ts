/**
 * Reads the Date header of the few responses the clock-offset estimator
 * asks for (stats/clock-offset.ts), by wrapping only their handlers: every
 * other request goes to the connections untouched, so the hot path pays a
 * comparison (the wall clock is read only when the estimator may want one).
 */
import type { Dispatcher } from 'undici'
import { dateHeaderMs, type ClockOffsetEstimator } from '../stats/clock-offset.js'
import { eventNow } from '../core/event-clock.js'
import { ForwardingHandler, type Abort, type LegacyHandler } from './forwarding-handler.js'

export function sampleDates(dispatch: Dispatcher.Dispatch, estimator: ClockOffsetEstimator): Dispatcher.Dispatch {
  // Until this (eventNow), the estimator wants no Date: the wall clock is not read (a read costs as much as a request's other work).
  let quietUntil = 0
  return (opts, handler) => {
    const now = eventNow()
    if (now < quietUntil) return dispatch(opts, handler)
    const wait = estimator.quietFor(estimator.clock())
    if (wait > 0) {
      quietUntil = now + wait
      return dispatch(opts, handler)
    }
    return dispatch(opts, new DateReader(handler as unknown as LegacyHandler, estimator) as unknown as Dispatcher.DispatchHandler)
  }
}

class DateReader extends ForwardingHandler {
  #sentAt = 0

  constructor(
    inner: LegacyHandler,
    readonly estimator: ClockOffsetEstimator,
  ) {
    super(inner)
  }

  override onConnect(abort: Abort, context?: unknown): void {
    // The request headers are written right after this: the earliest the server can see it.
    this.#sentAt = this.estimator.clock()
    super.onConnect(abort, context)
  }

  override wantsHeaders(): boolean {
    return true // its Date
  }

  override onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText?: string): boolean {
    const receivedAt = this.estimator.clock()
    const date = dateHeaderMs(headers)
    if (date !== null && this.#sentAt > 0) this.estimator.observe(this.#sentAt, receivedAt, date)
    return super.onHeaders(statusCode, headers, resume, statusText)
  }
}
