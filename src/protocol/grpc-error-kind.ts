/**
 * A gRPC run's transport failures named as a gRPC client names them: the
 * status a call ends with (grpc-js, grpc-go), then what happened on the
 * wire, so a gRPC run's error table reads `DEADLINE_EXCEEDED (--deadline)`
 * or `UNAVAILABLE: connection refused`, never undici's codes. HTTP runs keep
 * stats/figures.ts's names; hedgebench's own interruption and the
 * generator's local failures are counted apart and keep theirs.
 *
 * The statuses: a deadline is DEADLINE_EXCEEDED; a connection that could not
 * be made or was lost is UNAVAILABLE; a stream the server reset is what the
 * gRPC spec maps its RST_STREAM code to (http-grpc-status-mapping.md);
 * HTTP/2 broken by the server (a protocol error, a limit of the client's) is
 * INTERNAL. A kind that already starts with a status (a response message the
 * client refused, grpc-body-reader.ts) is kept.
 */
import { isInterruption } from '../core/interruption.js'
import { localFailureCode } from '../core/local-failure.js'
import { GRPC_CODE_NAMES } from '../core/status.js'
import { errorKind } from '../stats/figures.js'

/** Kinds whose gRPC words are fixed. */
const NAMED: Readonly<Record<string, string>> = {
  HEDGE_DEADLINE_EXCEEDED: 'DEADLINE_EXCEEDED (--deadline)',
  UND_ERR_HEADERS_TIMEOUT: 'DEADLINE_EXCEEDED (-t: no response headers in time)',
  UND_ERR_BODY_TIMEOUT: 'DEADLINE_EXCEEDED (-t: the response stalled)',
  UND_ERR_CONNECT_TIMEOUT: 'UNAVAILABLE: connect timeout',
  ECONNREFUSED: 'UNAVAILABLE: connection refused',
  ECONNRESET: 'UNAVAILABLE: connection reset',
  EPIPE: 'UNAVAILABLE: connection reset',
  ETIMEDOUT: 'UNAVAILABLE: connect timeout',
  ENOTFOUND: 'UNAVAILABLE: name not resolved',
  EAI_AGAIN: 'UNAVAILABLE: name not resolved',
  UND_ERR_SOCKET: 'UNAVAILABLE: connection closed',
  UND_ERR_CLOSED: 'UNAVAILABLE: connection closed',
  UND_ERR_DESTROYED: 'UNAVAILABLE: connection closed',
  HTTP2_GOAWAY: 'UNAVAILABLE: the server sent GOAWAY',
  HTTP2_REFUSED_STREAM: 'UNAVAILABLE: stream refused by the server (REFUSED_STREAM)',
  HTTP2_ALPN: 'UNAVAILABLE: the server did not choose h2 (ALPN)',
}

/** The status a stream reset by the server ends a call with (gRPC's http-grpc-status-mapping); INTERNAL otherwise. */
const RST_STREAM_STATUS: Readonly<Record<string, string>> = {
  REFUSED_STREAM: 'UNAVAILABLE',
  CANCEL: 'CANCELLED',
  ENHANCE_YOUR_CALM: 'RESOURCE_EXHAUSTED',
  INADEQUATE_SECURITY: 'PERMISSION_DENIED',
}

const STATUS_PREFIX = new RegExp(`^(?:${GRPC_CODE_NAMES.join('|')})(?:: | \\()`)

/** The error kind of a failed gRPC attempt or call, in gRPC's words. */
export function grpcErrorKind(err: Error): string {
  const kind = errorKind(err)
  if (isInterruption(err) || localFailureCode(err) !== null || STATUS_PREFIX.test(kind)) return kind
  const named = NAMED[kind]
  if (named !== undefined) return named
  if (kind === 'ERR_HTTP2_STREAM_ERROR') {
    const code = /NGHTTP2_([A-Z_]+)/.exec(err.message)?.[1] ?? 'INTERNAL_ERROR'
    return `${RST_STREAM_STATUS[code] ?? 'INTERNAL'}: stream reset by the server (RST_STREAM ${code})`
  }
  // HTTP/2 the server broke: the client's protocol checks and limits (their kind names the rule).
  if (kind.startsWith('HTTP2_') || kind.startsWith('h2: ')) return `INTERNAL: ${kind}`
  // Anything else lost the connection or never made it (a socket error, TLS): what a gRPC client calls UNAVAILABLE.
  return `UNAVAILABLE: ${kind}`
}
