/**
 * A small real gRPC server (@grpc/grpc-js) for tests, on 127.0.0.1: the
 * `shop.Inventory` service of a proto written to a temp dir, whose methods
 * differ only in what their descriptor says about calling them twice
 * (Get: NO_SIDE_EFFECTS, Put: IDEMPOTENT, Reserve: nothing). Each call is
 * recorded as the server's handler saw it, and answered as the test's
 * behaviour says (a delay, an error with metadata, headers sent first). A
 * request that is no Req (the pre-run check's undecodable call) is refused
 * INTERNAL before any handler runs, as a generated server's deserializer
 * refuses it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Metadata, Server, ServerCredentials } from '@grpc/grpc-js'
import type { sendUnaryData, ServerUnaryCall, ServiceDefinition } from '@grpc/grpc-js'
import protobuf from 'protobufjs'

const dir = mkdtempSync(join(tmpdir(), 'hedgebench-grpc-test-'))
export const SHOP_PROTO = join(dir, 'shop.proto')
writeFileSync(
  SHOP_PROTO,
  `syntax = "proto3";
package shop;
service Inventory {
  rpc Get(Req) returns (Item) { option idempotency_level = NO_SIDE_EFFECTS; }
  rpc Put(Req) returns (Item) { option idempotency_level = IDEMPOTENT; }
  rpc Reserve(Req) returns (Item);
}
message Req { int64 id = 1; uint64 count = 2; string note = 3; repeated int64 ids = 4; }
message Item { int64 id = 1; }
`,
)
export const SHOP_METHODS = ['Get', 'Put', 'Reserve'] as const

export interface SeenCall {
  method: string
  /** The request message as the server received it (encoded). */
  request: Buffer
  metadata: Metadata
  /** Time left before the call's deadline when the handler ran, ms (null: no deadline). */
  deadlineLeftMs: number | null
  /** grpc-previous-rpc-attempts (0 on an original). */
  previousAttempts: number
  /** The client's address and port: which connection carried the call. */
  peer: string
}

export interface Answer {
  delayMs?: number
  /** Send response headers before waiting (a server that commits a call early). */
  headersFirst?: boolean
  error?: { code: number; details?: string; metadata?: Record<string, string> }
}

export interface GrpcTestServer {
  url: string
  calls: SeenCall[]
  close(): void
}

const identity = (b: Buffer): Buffer => b
const Req = protobuf.loadSync(SHOP_PROTO).lookupType('shop.Req')
/** The bytes as they arrived, once they decode as a Req (grpc-js answers INTERNAL when this throws). */
const checked = (b: Buffer): Buffer => (Req.decode(b), b)

/** A server answering every call as `answer` says (it sees each call and its number on this server). */
export async function startGrpcServer(answer: (call: SeenCall, n: number) => Answer = () => ({})): Promise<GrpcTestServer> {
  const server = new Server()
  const calls: SeenCall[] = []
  const definition: Record<string, ServiceDefinition[string]> = {}
  const handlers: Record<string, (c: ServerUnaryCall<Buffer, Buffer>, cb: sendUnaryData<Buffer>) => void> = {}
  for (const name of SHOP_METHODS) {
    definition[name] = {
      path: `/shop.Inventory/${name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: checked,
      responseSerialize: identity,
      responseDeserialize: identity,
    }
    handlers[name] = (c, cb) => {
      const deadline = c.getDeadline()
      const at = deadline instanceof Date ? deadline.getTime() : Number(deadline)
      const seen: SeenCall = {
        method: name,
        request: c.request,
        metadata: c.metadata,
        deadlineLeftMs: Number.isFinite(at) ? at - Date.now() : null,
        previousAttempts: Number(c.metadata.get('grpc-previous-rpc-attempts')[0] ?? 0),
        peer: c.getPeer(),
      }
      calls.push(seen)
      const a = answer(seen, calls.length - 1)
      if (a.headersFirst) c.sendMetadata(new Metadata())
      const reply = () => {
        if (!a.error) return cb(null, Buffer.alloc(0))
        const metadata = new Metadata()
        for (const [k, v] of Object.entries(a.error.metadata ?? {})) metadata.set(k, v)
        cb({ code: a.error.code, details: a.error.details ?? '', metadata })
      }
      if (a.delayMs) setTimeout(reply, a.delayMs)
      else reply()
    }
  }
  server.addService(definition, handlers)
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  )
  return { url: `grpc://127.0.0.1:${port}`, calls, close: () => server.forceShutdown() }
}
