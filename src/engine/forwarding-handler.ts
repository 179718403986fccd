/**
 * undici's legacy handler protocol (what its core calls on a dispatch
 * handler), and a handler that passes every callback on to another: the base
 * for wrappers that need to see one or two callbacks of an attempt.
 */
export type Abort = (err?: Error) => void

export interface LegacyHandler {
  onConnect(abort: Abort, context?: unknown): void
  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText?: string): boolean
  /**
   * hedgebench's own HTTP/1.1 connection (h1-client.ts) asks before onHeaders
   * whether the raw header views are wanted; absent = yes. undici never asks.
   */
  wantsHeaders?(statusCode: number): boolean
  onData(chunk: Buffer): boolean
  onComplete(trailers: string[] | Buffer[] | null): void
  onError(err: Error): void
  onUpgrade?(statusCode: number, headers: Buffer[] | string[] | null, socket: unknown): void
  onResponseStarted?(): void
  onBodySent?(chunk: unknown): void
  onRequestSent?(): void
  /**
   * hedgebench's HTTP/2 connection (h2-client.ts): the server did not process
   * the request written after onConnect (RFC 9113 8.7: above a GOAWAY's
   * last-stream-id, or REFUSED_STREAM). It is handed a connection again (a
   * second onConnect) or fails; undici never calls it.
   */
  onRequestRefused?(): void
  /**
   * hedgebench's connection pool (connection-pool.ts), just before
   * onConnect: the connection this request is about to be written on was
   * opened for it. undici never calls it.
   */
  onConnectionOpened?(): void
}

/** Whether `handler` wants the raw header views of an answer with this status: yes unless it says otherwise. */
export function wantsHeaders(handler: LegacyHandler, statusCode: number): boolean {
  return handler.wantsHeaders?.(statusCode) ?? true
}

export class ForwardingHandler implements LegacyHandler {
  constructor(readonly inner: LegacyHandler) {}

  onConnect(abort: Abort, context?: unknown): void {
    this.inner.onConnect(abort, context)
  }

  onConnectionOpened(): void {
    this.inner.onConnectionOpened?.()
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText?: string): boolean {
    return this.inner.onHeaders(statusCode, headers, resume, statusText)
  }

  wantsHeaders(statusCode: number): boolean {
    return wantsHeaders(this.inner, statusCode)
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

  onRequestRefused(): void {
    this.inner.onRequestRefused?.()
  }
}
