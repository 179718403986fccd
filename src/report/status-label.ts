/**
 * How a recorded status is shown: HTTP statuses as their number, gRPC
 * codes (0-16, see core/status.ts) as "0 OK", "14 UNAVAILABLE", so a gRPC
 * run's distribution reads as a gRPC user expects.
 */
import { grpcCodeName } from '../protocol/grpc-status.js'

export function statusLabel(status: number): string {
  return status >= 0 && status < 100 ? `${status} ${grpcCodeName(status)}` : String(status)
}

/** A status count record with its keys labelled. */
export function labelledStatuses(counts: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [code, n] of Object.entries(counts)) out[statusLabel(Number(code))] = n
  return out
}
