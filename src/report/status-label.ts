/**
 * How a recorded status is shown: HTTP statuses as their number, gRPC
 * codes (0-16, see core/status.ts) as "0 OK", "14 UNAVAILABLE", so a gRPC
 * run's distribution reads as a gRPC user expects.
 */
import { grpcCodeName, statusFromKey } from '../core/status.js'

export function statusLabel(status: number): string {
  return status >= 0 && status < 100 ? `${status} ${grpcCodeName(status)}` : String(status)
}

/** A status count record (keyed by number, or by gRPC name as grpcClient's) with its keys labelled. */
export function labelledStatuses(counts: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [key, n] of Object.entries(counts)) {
    const status = statusFromKey(key)
    out[Number.isNaN(status) ? key : statusLabel(status)] = n
  }
  return out
}
