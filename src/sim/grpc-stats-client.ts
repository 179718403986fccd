/**
 * Reading and zeroing a simulated gRPC target's counters over gRPC (its
 * Stats and Reset calls; any replica answers for all of them).
 */
import { Client, credentials } from '@grpc/grpc-js'
import { decodeStats, SIM_SERVICE } from './grpc-replica.js'
import type { GrpcServerStats } from './grpc-replica.js'

const identity = (b: Buffer) => b

/** grpc://host:port (or host:port) as grpc-js's address. */
export function grpcAddress(url: string): string {
  return url.replace(/^grpcs?:\/\//, '').replace(/\/+$/, '')
}

function control(url: string, method: 'Stats' | 'Reset', timeoutMs: number): Promise<Buffer> {
  const client = new Client(grpcAddress(url), credentials.createInsecure())
  return new Promise<Buffer>((resolve, reject) => {
    client.makeUnaryRequest(`/${SIM_SERVICE}/${method}`, identity, identity, Buffer.alloc(0), { deadline: Date.now() + timeoutMs }, (err, reply) => {
      if (err) reject(new Error(`${method} call to ${url} failed: ${err.message}`))
      else resolve(reply ?? Buffer.alloc(0))
    })
  }).finally(() => client.close())
}

export async function fetchGrpcServerStats(url: string, timeoutMs = 5_000): Promise<GrpcServerStats> {
  return decodeStats(await control(url, 'Stats', timeoutMs))
}

export async function resetGrpcServerStats(url: string, timeoutMs = 5_000): Promise<void> {
  await control(url, 'Reset', timeoutMs)
}
