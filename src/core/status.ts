/**
 * Whether a recorded status is a success, for every protocol: HTTP statuses
 * are 100-599 (below 400 is a success), gRPC status codes are 0-16 (only 0,
 * OK, is). The two ranges never overlap, so a status alone says which it is,
 * and the counters need not know the protocol.
 */
export function isOkStatus(status: number): boolean {
  return status === 0 || (status >= 100 && status < 400)
}
