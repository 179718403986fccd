/**
 * HTTP as a Protocol (see protocol.ts): HTTP/1.1, and HTTP/2 (h2 over TLS
 * with ALPN, h2c with prior knowledge on http:// URLs). Both frame a request
 * the same way; they differ in the connections they need.
 */
import type { Dispatcher } from 'undici'
import { rawHeaderLookup, withHeaders, type HeaderLookup } from './request-headers.js'
import type { AnswerClass, Protocol, RequestSpec, Transport } from './protocol.js'
import type { OverloadSignal } from '../hedging/saturation-gate.js'
import { errorKind } from '../stats/figures.js'

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

  answerSignal(status: number, rawHeaders: Buffer[]): OverloadSignal | null {
    return status === 429 || status === 503 ? httpOverloadSignal(status, rawHeaderLookup(rawHeaders)) : null
  }

  endSignal(): null {
    return null
  }

  /** A 5xx: the server failed (a 4xx is the request's fault, a 429 overload, heard by answerSignal). */
  strained(status: number): boolean {
    return status >= 500
  }

  /** An HTTP answer's status says it all: its body is the application's, not counted. */
  failureText(): null {
    return null
  }

  /** An HTTP body is the application's: read by no one here. */
  bodyReader(): null {
    return null
  }

  statusLabel(status: number): string {
    return String(status)
  }

  errorKind(err: Error): string {
    return errorKind(err)
  }
}

const HTTP1: Protocol = new HttpProtocol('HTTP/1.1', { http2: false })
const HTTP2: Protocol = new HttpProtocol('HTTP/2', { http2: true })

/**
 * An HTTP answer that sheds load: 429, or 503 with Retry-After (a bare 503
 * is a failure, not a request to back off), for the time Retry-After (or a
 * grpc-retry-pushback-ms a gRPC proxy added) asks; null for anything else.
 */
export function httpOverloadSignal(status: number, header: HeaderLookup): OverloadSignal | null {
  if (status !== 429 && status !== 503) return null
  const pushback = header('grpc-retry-pushback-ms')
  const retryAfter = header('retry-after')
  if (pushback !== undefined) return { overloadMs: Number(pushback) }
  if (status === 503 && retryAfter === undefined) return null
  return { overloadMs: retryAfter === undefined ? null : retryAfterMs(retryAfter) }
}

/** Retry-After is delay-seconds or an HTTP date (RFC 9110 10.2.3); null when it is neither. */
function retryAfterMs(value: string): number | null {
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return seconds * 1000
  const at = Date.parse(value)
  return Number.isFinite(at) ? at - Date.now() : null
}
