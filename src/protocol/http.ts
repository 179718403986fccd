/**
 * HTTP as a Protocol (see protocol.ts): HTTP/1.1, and HTTP/2 (h2 over TLS
 * with ALPN, h2c with prior knowledge on http:// URLs). Both frame a request
 * the same way; they differ in the connections they need.
 */
import type { Dispatcher } from 'undici'
import { withHeaders } from './request-headers.js'
import type { AnswerClass, Protocol, RequestSpec, Transport } from './protocol.js'

/** HTTP/1.1, or HTTP/2 on every connection (h2c with prior knowledge on http://, ALPN on https://). */
export function httpProtocol(http2: boolean): Protocol {
  return http2 ? HTTP2 : HTTP1
}

class HttpProtocol implements Protocol {
  /** An answer is classified by its status alone. */
  readonly readsHeaders = false

  constructor(
    readonly name: string,
    readonly transport: Transport,
  ) {}

  requestOptions(url: URL, spec: RequestSpec): Dispatcher.DispatchOptions {
    return {
      origin: url.origin,
      path: url.pathname + url.search,
      method: spec.method as Dispatcher.HttpMethod,
      headers: spec.headers as string[],
      body: spec.body,
      headersTimeout: spec.timeoutMs,
      bodyTimeout: spec.timeoutMs,
      reset: !spec.keepAlive,
      // undici serialises requests it does not consider idempotent on an h2
      // session (one POST at a time per connection); a request we may repeat
      // is one it may run concurrently. Harmless on HTTP/1.1 (pipelining 1).
      ...(this.transport.http2 && spec.repeatable ? { idempotent: true } : {}),
    }
  }

  attemptOptions(base: Dispatcher.DispatchOptions, index: number, origin: string, hedgeHeader: string | null): Dispatcher.DispatchOptions {
    if (index === 0) return base
    const headers = hedgeHeader ? withHeaders(base.headers, [hedgeHeader, String(index)]) : base.headers
    return { ...base, origin, headers }
  }

  classify(status: number, _rawHeaders: Buffer[], nonFatal: ReadonlySet<number>): AnswerClass {
    if (nonFatal.has(status)) return 'non-fatal'
    return status >= 400 ? 'fatal' : 'success'
  }

  answerStatus(status: number): number {
    return status
  }

  endStatus(headerStatus: number): number {
    return headerStatus
  }

  statusLabel(status: number): string {
    return String(status)
  }
}

const HTTP1: Protocol = new HttpProtocol('HTTP/1.1', { http2: false })
const HTTP2: Protocol = new HttpProtocol('HTTP/2', { http2: true })
