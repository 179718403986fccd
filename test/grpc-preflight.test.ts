/**
 * The pre-run call of a gRPC run (run/grpc-probe.ts), against real servers
 * on 127.0.0.1: a node:http2 server that is no gRPC server, and @grpc/grpc-js
 * servers with and without the method. Refusals are one line, exit 2; a good
 * server runs, the check's call never ran its handler (the server decodes its
 * requests, and the check's message is undecodable), and the result says the
 * calls went over h2c. A write (a method its proto does not mark idempotent)
 * is never called by the check, even on a server that runs its handler on
 * the raw bytes: that server receives exactly the run's calls of it.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer as createH2cServer, type Http2Server } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js'
import { loadSync } from '@grpc/proto-loader'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'
import { stderrLines } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'

const dir = mkdtempSync(join(tmpdir(), 'hedgebench-grpc-preflight-'))
const PROTO_TEXT =
  'syntax = "proto3";\npackage shop;\nservice Inventory {\n' +
  '  rpc Get (GetRequest) returns (Item) { option idempotency_level = NO_SIDE_EFFECTS; }\n' +
  '  rpc Reserve (GetRequest) returns (Item) { option idempotency_level = IDEMPOTENT; }\n' +
  '  rpc Cancel (GetRequest) returns (Item);\n' +
  '  rpc Refund (GetRequest) returns (Item);\n}\n' +
  'message GetRequest { string sku = 1; }\nmessage Item { string sku = 1; }\n'
const PROTO = join(dir, 'shop.proto')
writeFileSync(PROTO, PROTO_TEXT)
// Decoded as a generated grpc-js server decodes (proto-loader, on protobufjs 7).
const Inventory = loadSync(PROTO)['shop.Inventory'] as ServiceDefinition

let handled = 0
/** Cancel's calls: its handler runs on whatever bytes arrive, as a server with a raw codec does (a write the check must not call). */
let cancelled = 0
/** Has Get and Cancel, not Reserve nor Refund; decodes Get's requests as every generated server does. */
const grpcServer = new Server()
let grpcUrl = ''
let plain: Http2Server
let plainUrl = ''

before(async () => {
  grpcServer.addService(
    { Get: Inventory['Get']!, Cancel: { ...Inventory['Cancel']!, requestDeserialize: (b: Buffer) => b } },
    {
      Get: (_call: unknown, callback: (err: null, reply: object) => void) => {
        handled++
        callback(null, {})
      },
      Cancel: (_call: unknown, callback: (err: null, reply: object) => void) => {
        cancelled++
        callback(null, {})
      },
    },
  )
  const port = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  )
  grpcUrl = `grpc://127.0.0.1:${port}`
  // h2c, but no gRPC: answers every stream 200 text/plain.
  plain = createH2cServer()
  plain.on('stream', (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'text/plain; charset=utf-8' })
    stream.end('hello')
  })
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve))
  plainUrl = `grpc://127.0.0.1:${(plain.address() as AddressInfo).port}`
})

after(() => {
  grpcServer.forceShutdown()
  plain.close()
  rmSync(dir, { recursive: true, force: true })
})

const options = (url: string, call: string): Parameters<typeof run>[0] => ({
  urls: [url],
  grpc: { proto: PROTO, call, data: '{"sku": "a"}' },
  requests: 3,
  warmup: 0,
  concurrency: 1,
  mode: 'plain',
})

async function refused(url: string, call: string, line: string): Promise<void> {
  await assert.rejects(run(options(url, call)), (err: Error & { exitCode?: number }) => {
    assert.equal(err.message, line)
    assert.equal(err.exitCode, 2)
    return true
  })
}

test('an h2c port that is no gRPC server is refused before the run', async () => {
  await refused(plainUrl, 'shop.Inventory/Get', `${plainUrl} answered HTTP 200 text/plain: not a gRPC server`)
})

test('a method the server does not have is refused before the run (UNIMPLEMENTED)', async () => {
  await refused(grpcUrl, 'shop.Inventory/Reserve', `${grpcUrl} has no method shop.Inventory/Reserve: check --call and the proto's package`)
})

test('the CLI says so in one line and exits 2', async () => {
  const cli = await runMain([grpcUrl, '--proto', PROTO, '--call', 'shop.Inventory/Reserve', '--mode', 'plain', '-n', '2', '--warmup', '0', '--no-save'], {
    timeoutMs: 20_000,
  })
  assert.equal(cli.code, 2, cli.stderr)
  assert.deepEqual(stderrLines(cli), [`hedgebench: ${grpcUrl} has no method shop.Inventory/Reserve: check --call and the proto's package`])
})

test('a gRPC server with the method runs; the check ran no handler, and the calls went over h2c', async () => {
  const before = handled
  const result = await run(options(grpcUrl, 'shop.Inventory/Get'))
  const plainPhase = result.phases.plain!
  assert.equal(plainPhase.ok, 3)
  assert.equal(handled - before, plainPhase.attempts, "the server ran exactly the run's calls")
  assert.deepEqual(result.protocols, [{ url: grpcUrl, protocol: 'h2c' }])
  assert.match(renderText(result).split('\n')[1]!, /· gRPC over HTTP\/2 \(h2c\)$/)
})

test("a write is never called by the check: a server running its handler on raw bytes receives exactly the run's calls of it", {
  timeout: 30_000,
}, async () => {
  const before = cancelled
  const alone = await run(options(grpcUrl, 'shop.Inventory/Cancel'))
  assert.equal(alone.phases.plain!.ok, 3)
  assert.equal(cancelled - before, alone.phases.plain!.attempts)
  // In a mix too: Get is checked (and refused nowhere), Cancel is not called by the check.
  const between = cancelled
  const mix = await run({
    ...options(grpcUrl, 'shop.Inventory/Get'),
    grpc: { proto: PROTO },
    requests: 8,
    targets: [{ call: 'shop.Inventory/Get' }, { call: 'shop.Inventory/Cancel' }],
  })
  const cancel = mix.targets!.find((t) => t.name === 'shop.Inventory/Cancel')!.phases.plain!
  assert.ok(cancel.attempts > 0)
  assert.equal(cancelled - between, cancel.attempts)
})

test('for a write, the check still refuses a port that is no gRPC server, and does not call the write to see if it exists', { timeout: 30_000 }, async () => {
  await refused(plainUrl, 'shop.Inventory/Cancel', `${plainUrl} answered HTTP 200 text/plain: not a gRPC server`)
  // Refund is not on the server: the check cannot know without calling it, so the run goes on and shows UNIMPLEMENTED.
  const result = await run(options(grpcUrl, 'shop.Inventory/Refund'))
  assert.equal(result.phases.plain!.ok, 0)
  assert.equal(result.phases.plain!.requests, 3)
})

test('the invalid-URL message names the gRPC schemes too', async () => {
  await assert.rejects(run({ urls: ['grpc://[::1'], requests: 1, warmup: 0 }), (err: Error & { exitCode?: number }) => {
    assert.equal(err.message, 'invalid URL "grpc://[::1" (expected http://host[:port]/path, https://..., grpc://host:port or grpcs://host:port)')
    assert.equal(err.exitCode, 2)
    return true
  })
})
