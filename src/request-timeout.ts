/**
 * A precise per-attempt timeout (-t). undici's headersTimeout/bodyTimeout
 * run on its coarse "fast timers" (ticks of ~500 ms), so `-t 300ms` fired
 * after about a second. This wraps a dispatch function so each attempt gets
 * a native timer from the moment it is dispatched: if the response has not
 * ended by then, the attempt is aborted with undici's own
 * HeadersTimeoutError (no headers yet) or BodyTimeoutError (headers, but the
 * body did not finish), so error kinds keep undici's names. undici's own
 * timeouts stay as a backstop.
 */
import { errors, type Dispatcher } from 'undici'

type Abort = (err?: Error) => void

/** undici's legacy handler protocol (onConnect, onHeaders, ...). */
interface LegacyHandler {
  onConnect?(abort: Abort, context?: unknown): void
  onHeaders?(statusCode: number, headers: Buffer[], resume: () => void, statusText: string): boolean
  onData?(chunk: Buffer): boolean
  onComplete?(trailers: string[] | null): void
  onError?(err: Error): void
  onUpgrade?(statusCode: number, headers: Buffer[] | string[] | null, socket: unknown): void
  onResponseStarted?(): void
  onBodySent?(chunkSize: number, totalBytesSent: number): void
}

export function withAttemptTimeout(dispatch: Dispatcher.Dispatch, timeoutMs: number): Dispatcher.Dispatch {
  return (opts, handler) => {
    const h = handler as LegacyHandler & Dispatcher.DispatchHandler
    if (typeof h.onRequestStart === 'function') return dispatch(opts, new TimedControllerHandler(h, timeoutMs))
    return dispatch(opts, new TimedHandler(h, timeoutMs) as unknown as Dispatcher.DispatchHandler)
  }
}

class TimedHandler implements LegacyHandler {
  #abort: Abort | null = null
  #headers = false
  #expired: Error | null = null
  #timer: NodeJS.Timeout | null

  constructor(
    readonly inner: LegacyHandler,
    timeoutMs: number,
  ) {
    this.#timer = setTimeout(expire, timeoutMs, this)
  }

  expire(): void {
    this.#timer = null
    this.#expired = this.#headers
      ? new errors.BodyTimeoutError('Body Timeout Error')
      : new errors.HeadersTimeoutError('Headers Timeout Error')
    this.#abort?.(this.#expired)
  }

  #done(): void {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
  }

  onConnect(abort: Abort, context?: unknown): void {
    this.#abort = abort
    this.inner.onConnect?.(abort, context)
    // Expired while waiting for a connection: stop before the headers are written.
    if (this.#expired) abort(this.#expired)
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText: string): boolean {
    if (statusCode >= 200) this.#headers = true
    return this.inner.onHeaders ? this.inner.onHeaders(statusCode, headers, resume, statusText) : true
  }

  onData(chunk: Buffer): boolean {
    return this.inner.onData ? this.inner.onData(chunk) : true
  }

  onComplete(trailers: string[] | null): void {
    this.#done()
    this.inner.onComplete?.(trailers)
  }

  onError(err: Error): void {
    this.#done()
    this.inner.onError?.(err)
  }

  onUpgrade(statusCode: number, headers: Buffer[] | string[] | null, socket: unknown): void {
    this.#done()
    this.inner.onUpgrade?.(statusCode, headers, socket)
  }

  onResponseStarted(): void {
    this.inner.onResponseStarted?.()
  }

  onBodySent(chunkSize: number, totalBytesSent: number): void {
    this.inner.onBodySent?.(chunkSize, totalBytesSent)
  }
}

/** The same for a handler speaking undici's controller protocol (onRequestStart ...). */
class TimedControllerHandler implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | null = null
  #headers = false
  #expired: Error | null = null
  #timer: NodeJS.Timeout | null

  constructor(
    readonly inner: Dispatcher.DispatchHandler,
    timeoutMs: number,
  ) {
    this.#timer = setTimeout(expire, timeoutMs, this)
  }

  expire(): void {
    this.#timer = null
    this.#expired = this.#headers
      ? new errors.BodyTimeoutError('Body Timeout Error')
      : new errors.HeadersTimeoutError('Headers Timeout Error')
    this.#controller?.abort(this.#expired)
  }

  #done(): void {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
  }

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.#controller = controller
    this.inner.onRequestStart?.(controller, context)
    if (this.#expired && !controller.aborted) controller.abort(this.#expired)
  }

  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>[2], socket: Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestUpgrade']>>[3]): void {
    this.#done()
    this.inner.onRequestUpgrade?.(controller, statusCode, headers, socket)
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[2], statusMessage?: string): void {
    if (statusCode >= 200) this.#headers = true
    this.inner.onResponseStart?.(controller, statusCode, headers, statusMessage)
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.inner.onResponseData?.(controller, chunk)
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseEnd']>>[1]): void {
    this.#done()
    this.inner.onResponseEnd?.(controller, trailers)
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    this.#done()
    this.inner.onResponseError?.(controller, error)
  }
}

function expire(handler: TimedHandler | TimedControllerHandler): void {
  handler.expire()
}
