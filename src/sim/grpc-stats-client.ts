/**
 * Reading and zeroing a simulated gRPC target's counters over gRPC (its
 * Stats and Reset calls; any replica answers for all of them).
 */
import { fetchGrpcStatsJson, grpcControlCall } from '../wire/grpc-stats.js'
import type { GrpcServerStats } from './grpc-replica.js'

export { grpcAddress } from '../wire/grpc-stats.js'

export function fetchGrpcServerStats(url: string, timeoutMs = 5_000): Promise<GrpcServerStats> {
  return fetchGrpcStatsJson<GrpcServerStats>(url, timeoutMs)
}

export async function resetGrpcServerStats(url: string, timeoutMs = 5_000): Promise<void> {
  await grpcControlCall(url, 'Reset', timeoutMs)
}
