/**
 * What a gRPC client refuses in a response before reading it, judged on the
 * message's 5-byte length prefix (protocol/grpc-body-reader.ts): a length
 * over --max-recv-size (4 MiB by default) ends the call at once as
 * RESOURCE_EXHAUSTED, its stream reset with CANCEL, instead of waiting -t
 * for a body that never comes; the compressed flag without grpc-encoding (or
 * with identity) is INTERNAL; under a named encoding the call counts by its
 * grpc-status. Nothing of such a call is counted OK. Against a raw
 * node:http2 server on 127.0.0.1 sending crafted DATA frames, through run().
 */
import assert from 'node:assert/strict'
import { constants, createSecureServer, createServer, type ServerHttp2Stream } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { after, test } from 'node:test'
import { run } from '../src/run/run.js'
import { renderJson } from '../src/results/result-json.js'
import { COMPRESSED_WITHOUT_ENCODING, DEFAULT_MAX_RECV_BYTES, GrpcBodyReader, tooLargeKind } from '../src/protocol/grpc-body-reader.js'
import type { RunResult } from '../src/results/run-result.js'
import { SHOP_PROTO } from './helpers/grpc-server.js'
import { selfSigned } from './helpers/tls-cert.js'

/** What the server sends on a call: response headers beyond content-type, DATA frames in order, then trailers (OK) or nothing. */
interface Reply {
  headers?: Record<string, string>
  frames: Buffer[]
  /** End with trailers grpc-status 0; otherwise the stream is left open, as a server sending a 4 GB message would. */
  end: boolean
}

interface Server {
  url: string
  /** Calls seen, the pre-run check's left out. */
  calls: number
  /** The codes the client reset streams with while their connection was open (0, a stream that ended, left out). */
  rstCodes: number[]
}

const closers: Array<() => void> = []
after(() => {
  for (const close of closers) close()
})

/** A prefix: the flag byte, then the length big-endian. */
function prefix(flag: number, length: number): Buffer {
  const b = Buffer.alloc(5)
  b[0] = flag
  b.writeUInt32BE(length, 1)
  return b
}

/** The pre-run check's call (run/grpc-probe.ts) carries one undecodable byte: answered INTERNAL, as a real server does. */
const isProbe = (body: Buffer): boolean => body.length === 6 && body[5] === 0x07

/** h2c (grpc://), or TLS with this certificate (grpcs://). */
async function start(reply: Reply, tls: { key: Buffer; cert: Buffer } | null = null): Promise<Server> {
  const h2 = tls ? createSecureServer(tls) : createServer()
  const port = await new Promise<number>((resolve) => h2.listen(0, '127.0.0.1', () => resolve((h2.address() as AddressInfo).port)))
  const server: Server = { url: `${tls ? 'grpcs' : 'grpc'}://127.0.0.1:${port}`, calls: 0, rstCodes: [] }
  h2.on('stream', (stream, headers) => {
    stream.on('error', () => {})
    // Reflection (the --proto schema check, run/grpc-schema-drift.ts) is a service this server does not have.
    if (headers[':path'] !== '/shop.Inventory/Get')
      return stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' }, { endStream: true })
    const body: Buffer[] = []
    stream.on('data', (chunk: Buffer) => body.push(chunk))
    stream.on('end', () => {
      if (isProbe(Buffer.concat(body))) return stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '13' }, { endStream: true })
      server.calls++
      // A stream still open when its session ends closes with CANCEL too, never reset on the wire: not counted.
      const session = stream.session!
      stream.on('close', () => {
        if (stream.rstCode !== constants.NGHTTP2_NO_ERROR && !session.destroyed) server.rstCodes.push(stream.rstCode)
      })
      void answer(stream, reply)
    })
  })
  closers.push(() => h2.close())
  return server
}

/** Each frame written once the one before has left (a write's callback): one DATA frame each. */
async function answer(stream: ServerHttp2Stream, reply: Reply): Promise<void> {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc', ...reply.headers }, { waitForTrailers: true })
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }))
  for (const frame of reply.frames) {
    if (stream.destroyed) return
    await new Promise<void>((resolve) => stream.write(frame, () => resolve()))
  }
  if (reply.end && !stream.destroyed) stream.end()
}

/** -t far above anything the calls take: a call that waited for it would fail the counts (as a timeout), not pass. */
const TIMEOUT_MS = 30_000
const CALLS = 3

function plainRun(server: Server, maxRecvBytes?: number): Promise<RunResult> {
  return run({
    urls: [server.url],
    grpc: { proto: SHOP_PROTO, call: 'shop.Inventory/Get', data: '{}', ...(maxRecvBytes === undefined ? {} : { maxRecvBytes }) },
    concurrency: CALLS,
    requests: CALLS,
    warmup: 0,
    mode: 'plain',
    timeoutMs: TIMEOUT_MS,
    insecure: server.url.startsWith('grpcs:'),
  })
}

/** Every call failed with this error kind, in the phase and at its replica, none OK; the server saw each call. */
function allFailedWith(result: RunResult, server: Server, kind: string): void {
  const plain = result.phases.plain!
  assert.equal(server.calls, CALLS)
  assert.equal(plain.ok, 0)
  assert.equal(plain.errors, CALLS)
  assert.deepEqual(plain.statusCodes, {})
  assert.deepEqual(plain.errorKinds, { [kind]: CALLS })
  const json = JSON.parse(renderJson(result))
  assert.deepEqual(
    json.phases.plain.replicas.map((r: { errorKinds: object }) => r.errorKinds),
    [{ [kind]: CALLS }],
  )
}

function allOk(result: RunResult, server: Server): void {
  const plain = result.phases.plain!
  assert.equal(server.calls, CALLS)
  assert.deepEqual(plain.errorKinds, {})
  assert.deepEqual(plain.statusCodes, { '0': CALLS })
  assert.equal(plain.ok, CALLS)
}

/** The client's resets reach the server a moment after the run ends: waited for, bounded. */
async function resetsSeen(server: Server, count: number): Promise<number[]> {
  for (let i = 0; i < 200 && server.rstCodes.length < count; i++) await new Promise((r) => setTimeout(r, 10))
  return server.rstCodes
}

test('a 4 GB length prefix fails each call at once as RESOURCE_EXHAUSTED, its stream reset with CANCEL, -t never reached', async () => {
  const server = await start({ frames: [prefix(0, 0xffff_ffff)], end: false })
  const result = await plainRun(server)
  allFailedWith(result, server, tooLargeKind(DEFAULT_MAX_RECV_BYTES))
  assert.equal(tooLargeKind(DEFAULT_MAX_RECV_BYTES), 'RESOURCE_EXHAUSTED: received message larger than --max-recv-size (4194304 bytes)')
  assert.deepEqual(await resetsSeen(server, CALLS), Array(CALLS).fill(constants.NGHTTP2_CANCEL))
})

const cert = selfSigned()
test('over TLS (grpcs://) too: a 4 GB prefix fails each call at once as RESOURCE_EXHAUSTED, its stream reset with CANCEL', {
  skip: cert === null && 'no openssl',
}, async () => {
  const server = await start({ frames: [prefix(0, 0xffff_ffff)], end: false }, cert)
  allFailedWith(await plainRun(server), server, tooLargeKind(DEFAULT_MAX_RECV_BYTES))
  assert.deepEqual(await resetsSeen(server, CALLS), Array(CALLS).fill(constants.NGHTTP2_CANCEL))
})

test('a prefix split across DATA frames (1 byte, then 4) is judged once its 5 bytes are in', async () => {
  const over = prefix(0, DEFAULT_MAX_RECV_BYTES + 1)
  const server = await start({ frames: [over.subarray(0, 1), over.subarray(1)], end: false })
  allFailedWith(await plainRun(server), server, tooLargeKind(DEFAULT_MAX_RECV_BYTES))
})

test('a message of exactly 4 MiB passes by default; with --max-recv-size 100, 100 bytes pass and 101 fail', async () => {
  const atLimit = await start({ frames: [prefix(0, DEFAULT_MAX_RECV_BYTES), Buffer.alloc(DEFAULT_MAX_RECV_BYTES)], end: true })
  allOk(await plainRun(atLimit), atLimit)
  const hundred = await start({ frames: [prefix(0, 100).subarray(0, 3), Buffer.concat([prefix(0, 100).subarray(3), Buffer.alloc(100)])], end: true })
  allOk(await plainRun(hundred, 100), hundred)
  const oneMore = await start({ frames: [prefix(0, 101), Buffer.alloc(101)], end: true })
  allFailedWith(await plainRun(oneMore, 100), oneMore, tooLargeKind(100))
})

test('the compressed flag without grpc-encoding, or with identity, is INTERNAL; under gzip the call counts by its grpc-status', async () => {
  const message = [prefix(1, 3), Buffer.from([1, 2, 3])]
  const bare = await start({ frames: message, end: true })
  allFailedWith(await plainRun(bare), bare, COMPRESSED_WITHOUT_ENCODING)
  const identity = await start({ headers: { 'grpc-encoding': 'identity' }, frames: message, end: true })
  allFailedWith(await plainRun(identity), identity, COMPRESSED_WITHOUT_ENCODING)
  const gzip = await start({ headers: { 'grpc-encoding': 'gzip' }, frames: message, end: true })
  allOk(await plainRun(gzip), gzip)
})

test('the reader judges every prefix of a body, wherever the chunks cut it, and skips the messages between', () => {
  const body = Buffer.concat([prefix(0, 3), Buffer.from([9, 9, 9]), prefix(0, 2), Buffer.from([9, 9]), prefix(0, 11)])
  for (let cut = 0; cut <= body.length; cut++) {
    for (const second of [cut, Math.min(body.length, cut + 1)]) {
      const reader = new GrpcBodyReader(10, false)
      const results = [body.subarray(0, cut), body.subarray(cut, second), body.subarray(second)].map((chunk) => reader.read(chunk))
      const refused = results.filter((r) => r !== null)
      assert.equal(refused.length, 1, `cut at ${cut}/${second}`)
      assert.equal((refused[0] as Error & { code: string }).code, tooLargeKind(10))
      assert.equal(refused[0]!.message, 'received message larger than max (11 vs. 10)')
      // Refused by the chunk holding the last byte of the third prefix, not before.
      const last = body.length - 1
      assert.equal(results.indexOf(refused[0]!), last >= second ? 2 : last >= cut ? 1 : 0, `cut at ${cut}/${second}`)
    }
  }
})

test('run() refuses a limit a length prefix cannot be judged by, before anything is sent', async () => {
  for (const maxRecvBytes of [1.5, -1, 2 ** 32 + 1]) {
    await assert.rejects(
      run({ urls: ['grpc://127.0.0.1:9'], grpc: { proto: SHOP_PROTO, call: 'shop.Inventory/Get', data: '{}', maxRecvBytes } }),
      new RegExp(`^UsageError: invalid --max-recv-size ${maxRecvBytes} \\(a whole number of bytes, 0 to 4294967296\\)$`),
    )
  }
})
