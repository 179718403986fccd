/**
 * Statuses as every layer reads them, and whether a recorded status is a
 * success, for every protocol: HTTP statuses are 100-599 (below 400 is a success), gRPC status codes are 0-16 (only 0,
 * OK, is). The two ranges never overlap, so a status alone says which it is,
 * and the counters need not know the protocol.
 */
export function isOkStatus(status: number): boolean {
  return status === 0 || (status >= 100 && status < 400)
}

/** The gRPC status codes, by number (grpc/doc/statuscodes.md). */
export const GRPC_CODE_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const

export type GrpcCodeName = (typeof GRPC_CODE_NAMES)[number]

export function grpcCodeName(code: number): string {
  return GRPC_CODE_NAMES[code] ?? `CODE_${code}`
}

/**
 * A status as a saved result's key: a gRPC code by its name ("UNAVAILABLE",
 * as gRPC users write it), an HTTP status as its number.
 */
export function statusKey(status: number): string {
  return status >= 0 && status < 100 ? grpcCodeName(status) : String(status)
}

/** The status a saved key stands for: a number as written (results saved before names), a gRPC code's name; NaN for anything else. */
export function statusFromKey(key: string): number {
  if (/^\d+$/.test(key)) return Number(key)
  const code = (GRPC_CODE_NAMES as readonly string[]).indexOf(key)
  return code >= 0 ? code : /^CODE_\d+$/.test(key) ? Number(key.slice(5)) : NaN
}
