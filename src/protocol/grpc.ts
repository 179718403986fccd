/**
 * gRPC unary calls as a Protocol (see protocol.ts), on the engine's own
 * HTTP/2 transport (h2c with prior knowledge for grpc://, ALPN for
 * grpcs://): the hedging, counting and reports are the HTTP code's.
 *
 * Framing: POST to /package.Service/Method with content-type
 * application/grpc and te: trailers; the body is the message encoded once
 * before the run (grpc-message.ts). A hedge carries
 * `grpc-previous-rpc-attempts: N`, the gRPC convention (A6), instead of an
 * HTTP hedge header; a deadline travels as `grpc-timeout`, the time that
 * remains for that attempt.
 *
 * Classification: the status is grpc-status, from the headers of a
 * trailers-only answer or from the trailers. An answer whose headers carry
 * no status is provisionally UNKNOWN and takes the trailers' status when
 * they come (a 200 that ends without one stays UNKNOWN, as in grpc-js).
 * Its headers still commit the race, as a gRPC client commits on headers.
 *
 * Its body is read only for the message prefixes a gRPC client refuses
 * (grpc-body-reader.ts): such an answer ends at once, as an error named for
 * the status a gRPC client would end the call with.
 */
import type { Dispatcher } from 'undici'
import { transportOrigin } from '../core/target-url.js'
import { MAX_MESSAGE_CHARS } from '../results/run-result.js'
import {
  classifyGrpcAnswer,
  decodeGrpcMessage,
  grpcCodeName,
  grpcOverloadSignal,
  grpcTimeoutHeader,
  GRPC_OK,
  GRPC_UNKNOWN,
  isGrpcStrainCode,
} from './grpc-status.js'
import type { AnswerClass, BodyReader, Protocol, RequestSpec, Transport } from './protocol.js'
import { DEFAULT_MAX_RECV_BYTES, GrpcBodyReader } from './grpc-body-reader.js'
import { grpcErrorKind } from './grpc-error-kind.js'
import { rawHeaderLookup as rawLookup, withHeaders, type HeaderLookup } from './request-headers.js'
import { httpOverloadSignal } from './http.js'
import type { OverloadSignal } from '../hedging/saturation-gate.js'

export const PREVIOUS_ATTEMPTS_HEADER = 'grpc-previous-rpc-attempts'

/** The Protocol for one method (`path` = `/package.Service/Method`); a response message longer than `maxRecvBytes` is refused. */
export function grpcProtocol(path: string, maxRecvBytes = DEFAULT_MAX_RECV_BYTES): Protocol {
  return new GrpcProtocol(path, maxRecvBytes)
}

class GrpcProtocol implements Protocol {
  readonly name = 'gRPC'
  readonly readsHeaders = true
  readonly transport: Transport = { http2: true }

  constructor(
    readonly path: string,
    readonly maxRecvBytes: number,
  ) {}

  /** `url`: a replica (grpc://host:port), or with a mix's target's method as its path (grpc://host:port/package.Service/Method), which it then calls. */
  requestOptions(url: URL, spec: RequestSpec): Dispatcher.DispatchOptions {
    return {
      origin: transportOrigin(url.href),
      path: url.pathname.length > 1 ? url.pathname : this.path,
      method: 'POST',
      headers: withHeaders(spec.headers as string[], ['content-type', 'application/grpc', 'te', 'trailers']),
      body: spec.body,
      headersTimeout: spec.timeoutMs,
      bodyTimeout: spec.timeoutMs,
      reset: false,
      // Whether the call may be sent twice (the hedging engine reads it): its
      // method's idempotency_level, or the user's opt-in; a mix of methods
      // sends such a write once and hedges the others. (The pool's own h2
      // client runs calls side by side either way.)
      idempotent: spec.repeatable,
    }
  }

  attemptOptions(
    base: Dispatcher.DispatchOptions,
    index: number,
    origin: string,
    _hedgeHeader: string | null,
    remainingMs: number | null,
  ): Dispatcher.DispatchOptions {
    if (index === 0 && remainingMs === null) return base
    const extra: string[] = []
    if (index > 0) extra.push(PREVIOUS_ATTEMPTS_HEADER, String(index))
    if (remainingMs !== null) extra.push('grpc-timeout', grpcTimeoutHeader(remainingMs))
    return { ...base, origin, headers: withHeaders(base.headers, extra) }
  }

  classify(status: number, rawHeaders: Buffer[], nonFatal: ReadonlySet<number>): AnswerClass {
    const code = this.answerStatus(status, rawHeaders)
    if (code === GRPC_OK || code === PENDING) return 'success'
    return nonFatal.has(code) ? 'non-fatal' : 'fatal'
  }

  answerStatus(status: number, rawHeaders: Buffer[]): number {
    if (status === 200 && !hasRawHeader(rawHeaders, 'grpc-status')) return PENDING
    return classifyGrpcAnswer(status, rawLookup(rawHeaders), null).code
  }

  endStatus(headerStatus: number, trailers: unknown): number {
    const code = trailers == null ? undefined : trailerLookup(trailers)('grpc-status')
    if (code === undefined) return headerStatus
    return classifyGrpcAnswer(200, () => undefined, trailerLookup(trailers)).code
  }

  /** A trailers-only answer carries its status, and any pushback, in these headers; a proxy's 429 / 503 is read as HTTP's. */
  answerSignal(status: number, rawHeaders: Buffer[]): OverloadSignal | null {
    if (status !== 200) return httpOverloadSignal(status, rawLookup(rawHeaders))
    return hasRawHeader(rawHeaders, 'grpc-status') ? grpcOverloadSignal(rawLookup(rawHeaders)) : null
  }

  endSignal(trailers: unknown): OverloadSignal | null {
    return trailers == null ? null : grpcOverloadSignal(trailerLookup(trailers))
  }

  /** The codes an HTTP mapping makes a 5xx (grpc-status.ts); a proxy's own 502-504 is recorded as UNAVAILABLE already. */
  strained(status: number): boolean {
    return isGrpcStrainCode(status)
  }

  failureText(rawHeaders: Buffer[] | null, trailers: unknown): string | null {
    const lookup = trailers != null ? trailerLookup(trailers) : rawHeaders ? rawLookup(rawHeaders) : null
    const code = lookup?.('grpc-status')
    if (!lookup || code === undefined || !/^\d+$/.test(code.trim())) return null
    const message = decodeGrpcMessage(lookup('grpc-message')).trim()
    return message === '' ? null : `${grpcCodeName(Number(code))}: ${bounded(message)}`
  }

  /** A 200 whose status is still to come carries messages; a trailers-only answer or a proxy's error page none to judge. */
  bodyReader(status: number, rawHeaders: Buffer[]): BodyReader | null {
    if (status !== 200 || hasRawHeader(rawHeaders, 'grpc-status')) return null
    const encoding = rawLookup(rawHeaders)('grpc-encoding')?.trim().toLowerCase()
    return new GrpcBodyReader(this.maxRecvBytes, encoding !== undefined && encoding !== '' && encoding !== 'identity')
  }

  statusLabel(status: number): string {
    return grpcCodeName(status)
  }

  errorKind(err: Error): string {
    return grpcErrorKind(err)
  }
}

/** One line, at most MAX_MESSAGE_CHARS: a message is shown in a list, and a stack trace in it is not. */
function bounded(message: string): string {
  const line = message.replace(/\s+/g, ' ')
  return line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS - 1)}…` : line
}

/** The status of an answer whose trailers are still to come: UNKNOWN unless they say otherwise. */
const PENDING = GRPC_UNKNOWN

function hasRawHeader(raw: Buffer[], name: string): boolean {
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === name.length && raw[i]!.toString('latin1').toLowerCase() === name) return true
  return false
}

/** undici hands h2 trailers over as Node's header object; HTTP/1.1 ones as a raw array. */
export function trailerLookup(trailers: unknown): HeaderLookup {
  if (Array.isArray(trailers)) return rawLookup(trailers.map((t) => (Buffer.isBuffer(t) ? t : Buffer.from(String(t), 'latin1'))))
  const record = trailers as Record<string, string | string[] | undefined>
  return (name) => {
    const value = record[name]
    return Array.isArray(value) ? value[0] : value
  }
}
