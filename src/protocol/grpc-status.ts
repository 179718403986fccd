/**
 * How a gRPC answer is classified: its status code (from the trailers, or
 * from the headers of a trailers-only answer), its percent-encoded message,
 * and the code names a user reads and writes (`--non-fatal-status UNAVAILABLE`).
 * Also the `grpc-timeout` header a deadline is sent as.
 */
import { UsageError } from '../core/errors.js'
import type { HeaderLookup } from './request-headers.js'
import type { OverloadSignal } from '../hedging/saturation-gate.js'

export type { HeaderLookup }

export { GRPC_CODE_NAMES, grpcCodeName, type GrpcCodeName } from '../core/status.js'
import { GRPC_CODE_NAMES } from '../core/status.js'

export const GRPC_OK = 0
export const GRPC_UNKNOWN = 2
export const GRPC_RESOURCE_EXHAUSTED = 8
export const GRPC_UNAVAILABLE = 14

/** What hedging treats as "try another replica" when the user did not say: UNAVAILABLE, as gRPC's own default. */
export const DEFAULT_GRPC_NON_FATAL: readonly number[] = [GRPC_UNAVAILABLE]

/** A code from its name (any case, `UNAVAILABLE` or `Unavailable`) or its number 0-16. */
export function parseGrpcCode(raw: string, flag: string): number {
  const text = raw.trim()
  if (/^\d+$/.test(text) && Number(text) < GRPC_CODE_NAMES.length) return Number(text)
  const upper = text.toUpperCase().replace(/-/g, '_')
  const code = (GRPC_CODE_NAMES as readonly string[]).indexOf(upper)
  if (code < 0) throw new UsageError(`${flag}: "${raw}" is not a gRPC status (use a name such as UNAVAILABLE or a number 0-16)`)
  return code
}

/** `--non-fatal-status` for a gRPC target: a comma list of code names or numbers; OK is not allowed. */
export function parseGrpcNonFatal(raw: string | undefined): number[] {
  if (raw === undefined) return [...DEFAULT_GRPC_NON_FATAL]
  if (raw.trim() === '') return []
  const codes = raw.split(',').map((part) => parseGrpcCode(part, '--non-fatal-status'))
  if (codes.includes(GRPC_OK)) throw new UsageError('--non-fatal-status: OK is a success, it cannot be non-fatal')
  return [...new Set(codes)]
}

export interface GrpcOutcome {
  code: number
  /** grpc-message, percent-decoded ('' when absent). */
  message: string
}

/**
 * The outcome of a finished call: grpc-status from the trailers, else from
 * the headers (a trailers-only answer). No grpc-status anywhere: the HTTP
 * status mapped as the gRPC spec says (http-grpc-status-mapping.md), UNKNOWN
 * for a 200 that never said how the call ended.
 */
export function classifyGrpcAnswer(httpStatus: number, headers: HeaderLookup, trailers: HeaderLookup | null): GrpcOutcome {
  const fromTrailers = trailers?.('grpc-status')
  const raw = fromTrailers ?? headers('grpc-status')
  const source = fromTrailers !== undefined ? trailers! : headers
  if (raw !== undefined && /^\d+$/.test(raw.trim())) {
    return { code: Number(raw.trim()), message: decodeGrpcMessage(source('grpc-message')) }
  }
  return { code: grpcCodeForHttpStatus(httpStatus), message: httpStatus === 200 ? 'no grpc-status in the answer' : `HTTP ${httpStatus}` }
}

/**
 * What a finished call asks of the client's hedging (gRPC A6), from the
 * headers of a trailers-only answer or from the trailers: RESOURCE_EXHAUSTED
 * is load shed (every hedge waits, for the pushback when one is given); a
 * grpc-retry-pushback-ms on any failed call holds hedges to that replica for
 * that long, and a negative or unreadable one stops them. null for an OK
 * call or one without a status there.
 */
export function grpcOverloadSignal(header: HeaderLookup): OverloadSignal | null {
  const status = header('grpc-status')?.trim()
  if (status === undefined || status === '0') return null
  const raw = header('grpc-retry-pushback-ms')
  const pushbackMs = raw === undefined ? undefined : /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : -1
  if (status === String(GRPC_RESOURCE_EXHAUSTED)) {
    return {
      overloadMs: pushbackMs !== undefined && pushbackMs >= 0 ? pushbackMs : null,
      ...(pushbackMs !== undefined && pushbackMs < 0 ? { pushbackMs } : {}),
    }
  }
  return pushbackMs === undefined ? null : { pushbackMs }
}

/**
 * The codes that show a server failing or under strain, for the saturation
 * gate's error rate as an HTTP 5xx is: those a gRPC-to-HTTP mapping (Envoy's,
 * grpc-gateway's) turns into a 5xx. UNKNOWN and INTERNAL (500),
 * UNIMPLEMENTED (501), UNAVAILABLE (503), DEADLINE_EXCEEDED (504),
 * DATA_LOSS (500). RESOURCE_EXHAUSTED is overload (429), heard as such;
 * the others are the caller's own mistakes (400-409).
 */
const GRPC_STRAIN_CODES: ReadonlySet<number> = new Set([2, 4, 12, 13, 14, 15])

export function isGrpcStrainCode(code: number): boolean {
  return GRPC_STRAIN_CODES.has(code)
}

/** The gRPC code an HTTP status maps to (the gRPC spec's http-grpc-status-mapping). */
export function grpcCodeForHttpStatus(status: number): number {
  switch (status) {
    case 400:
      return 13 // INTERNAL
    case 401:
      return 16 // UNAUTHENTICATED
    case 403:
      return 7 // PERMISSION_DENIED
    case 404:
      return 12 // UNIMPLEMENTED
    case 429:
    case 502:
    case 503:
    case 504:
      return GRPC_UNAVAILABLE
    default:
      return GRPC_UNKNOWN
  }
}

/** grpc-message is percent-encoded UTF-8; a malformed escape is shown as sent. */
export function decodeGrpcMessage(raw: string | undefined): string {
  if (raw === undefined) return ''
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

/**
 * `grpc-timeout` for the time that remains: at most 8 digits and a unit
 * (gRPC over HTTP/2 spec). Rounded up, so a server never sees a deadline
 * earlier than the client's; the coarsest unit that keeps milliseconds exact
 * below 100000 s.
 */
export function grpcTimeoutHeader(remainingMs: number): string {
  const ms = Math.max(1, Math.ceil(remainingMs))
  if (ms < 1e8) return `${ms}m`
  const s = Math.ceil(ms / 1000)
  if (s < 1e8) return `${s}S`
  return `${Math.min(99_999_999, Math.ceil(s / 3600))}H`
}

/** Milliseconds a `grpc-timeout` value asks for (what a server reads), or null if malformed. */
export function parseGrpcTimeout(value: string): number | null {
  const m = /^(\d{1,8})([HMSmun])$/.exec(value.trim())
  if (!m) return null
  const unitMs = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 }[m[2] as 'H' | 'M' | 'S' | 'm' | 'u' | 'n']
  return Number(m[1]) * unitMs
}
