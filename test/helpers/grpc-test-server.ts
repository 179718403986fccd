/**
 * A real @grpc/grpc-js server on 127.0.0.1 for the tests of what a ghz user
 * reaches for first: a small schema written to a temporary directory
 * (shop.v1.Inventory/Get, its request importing a second file and a
 * well-known type, so that reflection has dependencies to resolve), served
 * with server reflection (@grpc/reflection, grpc-node's own: v1 and
 * v1alpha, v1alpha only, files without their imports, or none), over h2c or TLS (optionally requiring
 * a client certificate). Every call's raw request bytes, :authority and
 * client certificate subject are recorded, in arrival order.
 */
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import { ReflectionService } from '@grpc/reflection'
import type * as Protobuf from 'protobufjs'
import { descriptorTypes } from '../../src/protocol/protobuf-lazy.js'

export const CALL = 'shop.v1.Inventory/Get'

const COMMON_PROTO = `syntax = "proto3";
package shop.v1;
message Dims { int32 x = 1; int32 y = 2; }
`

const SHOP_PROTO = `syntax = "proto3";
package shop.v1;
import "shop/v1/common.proto";
import "google/protobuf/timestamp.proto";
message GetRequest {
  string sku = 1;
  int64 n = 2;
  string id = 3;
  int32 qty = 4;
  Dims dims = 5;
  google.protobuf.Timestamp at = 6;
}
message Item { string sku = 1; }
service Inventory {
  rpc Get(GetRequest) returns (Item) { option idempotency_level = NO_SIDE_EFFECTS; }
  rpc Reserve(GetRequest) returns (Item);
}
`

/** The schema on disk: `proto` is the file to pass as --proto, `importPath` as -i. */
export interface TestSchema {
  dir: string
  importPath: string
  proto: string
  remove(): void
}

export function writeTestSchema(): TestSchema {
  const dir = mkdtempSync(join(tmpdir(), 'hedgebench-shop-'))
  mkdirSync(join(dir, 'shop', 'v1'), { recursive: true })
  writeFileSync(join(dir, 'shop', 'v1', 'common.proto'), COMMON_PROTO)
  writeFileSync(join(dir, 'shop', 'v1', 'shop.proto'), SHOP_PROTO)
  return { dir, importPath: dir, proto: 'shop/v1/shop.proto', remove: () => rmSync(dir, { recursive: true, force: true }) }
}

export interface SeenCall {
  /** The request message as it arrived (protobuf bytes). */
  raw: Buffer
  request: Record<string, unknown>
  authority: string
  /** grpc-previous-rpc-attempts, 0 for an original. */
  attempt: number
  /** The client certificate's subject CN, when the client sent one. */
  clientCn: string | null
}

export interface TestServerOptions {
  schema: TestSchema
  /** 'both' (v1 and v1alpha, the default), 'v1alpha' only, 'file-only' (v1, each file sent without its imports), or 'none'. */
  reflection?: 'both' | 'v1alpha' | 'file-only' | 'none'
  tls?: { key: Buffer; cert: Buffer; ca?: Buffer; requireClientCert?: boolean }
  /** Delay before answering a call (the `n`th to arrive, 0-based), ms. */
  delayMs?: (n: number, call: SeenCall) => number
}

export interface TestServer {
  url: string
  seen: SeenCall[]
  close(): Promise<void>
}

export async function startTestServer(o: TestServerOptions): Promise<TestServer> {
  const definition = protoLoader.loadSync(o.schema.proto, { includeDirs: [o.schema.importPath], longs: String, defaults: false })
  const method = (definition['shop.v1.Inventory'] as grpc.ServiceDefinition)['Get']!
  const seen: SeenCall[] = []
  // Keep the bytes as they arrived beside the decoded message.
  const service = { Get: { ...method, requestDeserialize: (b: Buffer) => ({ raw: Buffer.from(b), request: method.requestDeserialize(b) }) } }
  const server = new grpc.Server()
  server.addService(service as unknown as grpc.ServiceDefinition, {
    Get: (call: grpc.ServerUnaryCall<{ raw: Buffer; request: Record<string, unknown> }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const n = seen.length
      const cert = call.getAuthContext().sslPeerCertificate
      const one: SeenCall = {
        raw: call.request.raw,
        request: call.request.request,
        authority: call.getHost(),
        attempt: Number(call.metadata.get('grpc-previous-rpc-attempts')[0] ?? 0),
        clientCn: cert?.subject?.CN === undefined ? null : String(cert.subject.CN),
      }
      seen.push(one)
      const reply = () => callback(null, { sku: String(call.request.request['sku'] ?? '') })
      const delay = o.delayMs?.(n, one) ?? 0
      if (delay > 0) setTimeout(reply, delay)
      else reply()
    },
  })
  const reflection = o.reflection ?? 'both'
  if (reflection !== 'none') {
    const r = new ReflectionService(definition)
    const versions = r as unknown as Record<'v1' | 'v1Alpha', { addToServer(s: grpc.Server): void; getFileDependencies(file: unknown): unknown[] }>
    if (reflection === 'both') r.addToServer(server)
    else if (reflection === 'v1alpha') versions.v1Alpha.addToServer(server)
    else {
      // A server that leaves the imports for the client to ask for by name (grpc-go does, for files already sent on the stream).
      versions.v1.getFileDependencies = () => []
      declareImports(versions.v1 as unknown as ReflectionInternals)
      versions.v1.addToServer(server)
    }
  }
  const creds = o.tls
    ? grpc.ServerCredentials.createSsl(o.tls.ca ?? null, [{ private_key: o.tls.key, cert_chain: o.tls.cert }], o.tls.requireClientCert ?? false)
    : grpc.ServerCredentials.createInsecure()
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (err, p) => (err ? reject(err) : resolve(p))))
  return {
    url: `${o.tls ? 'grpcs' : 'grpc'}://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  }
}

interface ReflectionInternals {
  files: Record<string, unknown>
  fileEncodings: Map<unknown, Uint8Array>
}

/**
 * proto-loader's descriptors are one file per package with no `dependency`
 * list (grpc-node's reflection computes the imports itself); a server built
 * by protoc declares them. Declare them here, so that a client can follow them.
 */
function declareImports(v1: ReflectionInternals): void {
  const FileDescriptorProto = descriptorTypes().lookupType('FileDescriptorProto')
  const names = Object.keys(v1.files).filter((n) => n !== 'shop_v1.proto' && !n.startsWith('grpc_reflection'))
  const shop = v1.files['shop_v1.proto']!
  const file = FileDescriptorProto.decode(v1.fileEncodings.get(shop)!) as unknown as { dependency: string[] }
  file.dependency = names
  v1.fileEncodings.set(shop, FileDescriptorProto.encode(file as unknown as Protobuf.Message).finish())
}

/** A throwaway CA, a server certificate for `serverName` (DNS SAN only) and a client certificate, made by openssl; null without openssl. */
export interface TestPki {
  dir: string
  files: { ca: string; serverCert: string; serverKey: string; clientCert: string; clientKey: string }
  ca: Buffer
  serverCert: Buffer
  serverKey: Buffer
  remove(): void
}

export function makeTestPki(serverName: string): TestPki | null {
  const dir = mkdtempSync(join(tmpdir(), 'hedgebench-pki-'))
  const f = (name: string) => join(dir, name)
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore', timeout: 10_000 })
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  try {
    ssl('req', '-x509', ...ec, '-days', '1', '-subj', '/CN=hedgebench test CA', '-keyout', f('ca.key'), '-out', f('ca.pem'))
    const issue = (name: string, cn: string, ext: string) => {
      writeFileSync(f(`${name}.ext`), ext)
      ssl('req', ...ec, '-subj', `/CN=${cn}`, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`))
      ssl(
        'x509',
        '-req',
        '-in',
        f(`${name}.csr`),
        '-CA',
        f('ca.pem'),
        '-CAkey',
        f('ca.key'),
        '-CAcreateserial',
        '-days',
        '1',
        '-extfile',
        f(`${name}.ext`),
        '-out',
        f(`${name}.pem`),
      )
    }
    issue('server', serverName, `subjectAltName=DNS:${serverName}\nextendedKeyUsage=serverAuth\n`)
    issue('client', 'hedgebench-client', 'extendedKeyUsage=clientAuth\n')
  } catch {
    rmSync(dir, { recursive: true, force: true })
    return null
  }
  return {
    dir,
    files: { ca: f('ca.pem'), serverCert: f('server.pem'), serverKey: f('server.key'), clientCert: f('client.pem'), clientKey: f('client.key') },
    ca: readFileSync(f('ca.pem')),
    serverCert: readFileSync(f('server.pem')),
    serverKey: readFileSync(f('server.key')),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}
