/**
 * Reads the Date header of the few responses the clock-offset estimator
 * asks for (stats/clock-offset.ts), by wrapping only their handlers: every
 * other request goes to the connections untouched, so the hot path pays one
 * clock read and a modulo.
 */
import type { Dispatcher } from 'undici'
import { dateHeaderMs, type ClockOffsetEstimator } from '../stats/clock-offset.js'
import { ForwardingHandler, type Abort, type LegacyHandler } from './forwarding-handler.js'

export function sampleDates(dispatch: Dispatcher.Dispatch, estimator: ClockOffsetEstimator): Dispatcher.Dispatch {
  return (opts, handler) => {
    if (!estimator.wants(estimator.clock())) return dispatch(opts, handler)
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
