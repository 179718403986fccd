/**
 * The schema read from the server (--reflect, or no --proto/--protoset at
 * all), as ghz and grpcurl read it: real grpc-js servers on 127.0.0.1
 * serving grpc-node's own reflection service (@grpc/reflection) for a small
 * schema whose request imports a second file and a well-known type.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import { UsageError } from '../src/core/errors.js'
import { withReflectedSchema } from '../src/run/grpc-reflection.js'
import { loadGrpcMethod } from '../src/protocol/grpc-method.js'
import { CALL, makeTestPki, startTestServer, writeTestSchema, type TestPki, type TestSchema, type TestServer } from './helpers/grpc-test-server.js'
import { runMain } from './helpers/main-cases.js'
import { skipWithout } from './helpers/required-tool.js'

let schema: TestSchema
let both: TestServer
let alphaOnly: TestServer
let none: TestServer
let fileOnly: TestServer
let tls: TestServer | null = null
const pki: TestPki | null = makeTestPki('replica.test')

before(async () => {
  schema = writeTestSchema()
  ;[both, alphaOnly, none, fileOnly] = await Promise.all([
    startTestServer({ schema, reflection: 'both' }),
    startTestServer({ schema, reflection: 'v1alpha' }),
    startTestServer({ schema, reflection: 'none' }),
    startTestServer({ schema, reflection: 'file-only' }),
  ])
  if (pki) tls = await startTestServer({ schema, reflection: 'both', tls: { key: pki.serverKey, cert: pki.serverCert } })
})

after(async () => {
  await Promise.all([both, alphaOnly, none, fileOnly, tls].map((s) => s?.close()))
  schema?.remove()
  pki?.remove()
})

const PLAIN = { mode: 'plain', warmup: 0, requests: 4, concurrency: 2, seed: 7 } as const
// The nested message (from the imported file) and the well-known type must both be known for this to encode.
const DATA = '{"sku": "a-1", "n": "9007199254740993", "dims": {"x": 3}, "at": "2026-01-02T03:04:05Z"}'

describe('server reflection', () => {
  test('a run with no --proto reads the schema from the server: the messages arrive as -d said', async () => {
    const before = both.seen.length
    const result = await run({ ...PLAIN, urls: [both.url], grpc: { call: CALL, data: DATA } })
    assert.deepEqual([result.phases.plain!.ok, result.phases.plain!.errors], [4, 0])
    const seen = both.seen.slice(before)
    assert.equal(seen.length, 4)
    assert.deepEqual(seen[0]!.request['dims'], { x: 3 })
    assert.equal(seen[0]!.request['sku'], 'a-1')
    assert.deepEqual(seen[0]!.request['at'], { seconds: '1767323045' })
  })

  test('the schema read is the one the proto gives: the same bytes for the same -d', async () => {
    const reflected = await withReflectedSchema({ urls: [both.url], grpc: { call: CALL, reflect: true } })
    const fromServer = loadGrpcMethod(reflected.grpc!, CALL)
    const fromFile = loadGrpcMethod({ proto: schema.proto, importPaths: [schema.importPath] }, CALL)
    assert.equal(fromServer.path, '/shop.v1.Inventory/Get')
    const message = { sku: 'b', dims: { x: 1, y: 2 } }
    assert.deepEqual(
      Buffer.from(fromServer.requestType.encode(fromServer.requestType.fromObject(message)).finish()),
      Buffer.from(fromFile.requestType.encode(fromFile.requestType.fromObject(message)).finish()),
    )
  })

  test("the method's idempotency_level comes with the schema: Get is hedged without a flag, Reserve is refused", async () => {
    const result = await run({ ...PLAIN, mode: 'hedged', hedge: { delay: 50 }, urls: [both.url], grpc: { call: CALL, data: DATA } })
    assert.equal(result.phases.hedged!.ok, 4)
    assert.match(String(result.config.hedge.allowedBy), /idempotency_level = NO_SIDE_EFFECTS/)
    await assert.rejects(
      run({ ...PLAIN, mode: 'hedged', hedge: { delay: 50 }, urls: [both.url], grpc: { call: 'shop.v1.Inventory/Reserve', data: DATA } }),
      (err: Error) => err instanceof UsageError && /^refusing to hedge shop\.v1\.Inventory\/Reserve/.test(err.message),
    )
  })

  test('a server with only v1alpha reflection', async () => {
    const result = await run({ ...PLAIN, urls: [alphaOnly.url], grpc: { call: CALL, data: DATA, reflect: true } })
    assert.deepEqual([result.phases.plain!.ok, result.phases.plain!.errors], [4, 0])
  })

  test('a server that sends each file without its imports: they are asked for by name', async () => {
    const result = await run({ ...PLAIN, urls: [fileOnly.url], grpc: { call: CALL, data: DATA } })
    assert.deepEqual([result.phases.plain!.ok, result.phases.plain!.errors], [4, 0])
    assert.deepEqual(fileOnly.seen.at(-1)!.request['dims'], { x: 3 })
  })

  test("over TLS, with the run's --cacert and --cname", {
    skip: skipWithout(pki !== null, 'openssl', 'openssl not found (apt-get install openssl): cannot make test certificates'),
  }, async () => {
    const result = await run({ ...PLAIN, urls: [tls!.url], grpc: { call: CALL, data: DATA }, tls: { ca: pki!.ca, servername: 'replica.test' } })
    assert.deepEqual([result.phases.plain!.ok, result.phases.plain!.errors], [4, 0])
  })

  test('refusals are one line, before any call', async () => {
    const refused = (o: Parameters<typeof run>[0], pattern: RegExp) =>
      assert.rejects(run({ ...PLAIN, ...o }), (err: Error) => {
        assert.ok(err instanceof UsageError, String(err))
        assert.match(err.message, pattern)
        return true
      })
    const before = none.seen.length + both.seen.length
    await refused(
      { urls: [none.url], grpc: { call: CALL } },
      /^grpc:\/\/127\.0\.0\.1:\d+ has no server reflection \(grpc\.reflection\.v1, grpc\.reflection\.v1alpha: UNIMPLEMENTED\): give the schema with --proto FILE or --protoset FILE$/,
    )
    await refused(
      { urls: [both.url], grpc: { call: 'shop.v1.Nope/Get' } },
      /^grpc:\/\/127\.0\.0\.1:\d+ has no service shop\.v1\.Nope \(reflection: NOT_FOUND.*\): check --call$/,
    )
    await refused(
      { urls: [both.url], grpc: { call: CALL, reflect: true, proto: schema.proto } },
      /^--reflect reads the schema from the server: give it without --proto\/--protoset$/,
    )
    assert.equal(none.seen.length + both.seen.length, before)
  })

  test('from the CLI: no --proto, -d as JSON, exit 0', async () => {
    const before = both.seen.length
    const r = await runMain([both.url, '--call', CALL, '-d', DATA, '-n', '3', '-c', '1', '--mode', 'plain', '--warmup', '0', '--no-save', '-o', 'json'])
    assert.equal(r.code, 0, r.stderr)
    assert.equal(JSON.parse(r.stdout).phases.plain.ok, 3)
    assert.deepEqual(
      both.seen.slice(before).map((c) => c.request['sku']),
      ['a-1', 'a-1', 'a-1'],
    )
  })
})
