/**
 * Reading a gRPC target's counters for the client/server cross-check: the
 * simulated gRPC replicas (and any target implementing the same call)
 * answer `hedgebench.sim.v1.Replica/Stats` with a StatsReply whose one
 * field is the stats JSON, in the outline the HTTP replicas serve.
 */

import { redactUrl } from '../core/redact.js'

export const STATS_SERVICE = 'hedgebench.sim.v1.Replica'
const identity = (b: Buffer) => b

/** grpc://host:port (or host:port) as grpc-js's address. */
export function grpcAddress(url: string): string {
  return url.replace(/^grpcs?:\/\//, '').replace(/\/+$/, '')
}

/** One control call (Stats or Reset) on a fresh channel, closed after it. */
export async function grpcControlCall(url: string, method: 'Stats' | 'Reset', timeoutMs: number): Promise<Buffer> {
  // Loaded on demand: only runs against gRPC targets read their stats this way.
  const { Client, credentials } = await import('@grpc/grpc-js')
  const client = new Client(grpcAddress(url), credentials.createInsecure())
  return new Promise<Buffer>((resolve, reject) => {
    client.makeUnaryRequest(`/${STATS_SERVICE}/${method}`, identity, identity, Buffer.alloc(0), { deadline: Date.now() + timeoutMs }, (err, reply) => {
      if (err) reject(new Error(`${method} call to ${redactUrl(url)} failed: ${err.message}`))
      else resolve(reply ?? Buffer.alloc(0))
    })
  }).finally(() => client.close())
}

/** The stats JSON of a StatsReply (field 1, a string), parsed. */
export async function fetchGrpcStatsJson<T>(url: string, timeoutMs = 5_000): Promise<T> {
  return JSON.parse(stringField1(await grpcControlCall(url, 'Stats', timeoutMs))) as T
}

/** Field 1 (wire type 2) of a message holding only it: tag 0x0a, a varint length, the UTF-8 bytes. */
function stringField1(bytes: Buffer): string {
  if (bytes.length === 0) return ''
  if (bytes[0] !== 0x0a) throw new Error('unexpected Stats reply')
  let length = 0
  let at = 1
  for (let shift = 0; at < bytes.length && shift < 35; shift += 7) {
    const b = bytes[at++]!
    length |= (b & 0x7f) << shift
    if (b < 0x80) break
  }
  return bytes.subarray(at, at + length).toString('utf8')
}
