/**
 * What a gRPC call carries each way: an int64 above 2^53 in -d reaches the
 * server with every digit, and the grpc-message of a failed call is shown in
 * the error breakdown (`UNAVAILABLE: simulated unavailable`, as ghz shows
 * it), bounded in length and in distinct messages. Against real grpc-js
 * servers on 127.0.0.1.
 */
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { after, test } from 'node:test'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'
import { renderCsvSummary } from '../src/report/csv.js'
import { parseKeepingIntegers } from '../src/protocol/grpc-message.js'
import { MAX_MESSAGES, MAX_MESSAGE_CHARS, OTHER_MESSAGES } from '../src/results/run-result.js'
import { SHOP_PROTO, startGrpcServer, type Answer, type GrpcTestServer } from './helpers/grpc-server.js'
import { parseCsv } from './helpers/csv.js'

const servers: GrpcTestServer[] = []
after(() => servers.forEach((s) => s.close()))

async function server(answer?: (n: number) => Answer): Promise<GrpcTestServer> {
  const s = await startGrpcServer(answer && ((_, n) => answer(n)))
  servers.push(s)
  return s
}

const plainRun = (urls: string[], data: string, requests = 4) =>
  run({ urls, grpc: { proto: SHOP_PROTO, call: 'shop.Inventory/Reserve', data }, concurrency: 1, requests, warmup: 0, mode: 'plain' })

test('int64 and uint64 above 2^53 in -d reach the server with every digit', async () => {
  const s = await server()
  await plainRun(
    [s.url],
    '{"id": 9007199254740993, "count": 18446744073709551615, "note": "9007199254740993 \\" 12345678901234567890", "ids": [-9007199254740993, 7]}',
    1,
  )
  const load = createRequire(import.meta.url)
  const protobuf = load('protobufjs')
  const Req = protobuf.loadSync(SHOP_PROTO).lookupType('shop.Req')
  const seen = Req.toObject(Req.decode(s.calls[0]!.request), { longs: String })
  assert.deepEqual(seen, {
    id: '9007199254740993',
    count: '18446744073709551615',
    note: '9007199254740993 " 12345678901234567890',
    ids: ['-9007199254740993', '7'],
  })
})

test('-d is read as JSON with big integers kept as their digits, everything else as JSON.parse reads it', () => {
  assert.deepEqual(parseKeepingIntegers('{"a": 9007199254740993, "b": 9007199254740991, "c": 1.5e300, "d": "9007199254740993", "e": [-9007199254740993]}'), {
    a: '9007199254740993',
    b: 9007199254740991,
    c: 1.5e300,
    d: '9007199254740993',
    e: ['-9007199254740993'],
  })
  assert.deepEqual(parseKeepingIntegers('{"s": "\\\\", "n": 99999999999999999999}'), { s: '\\', n: '99999999999999999999' })
  assert.throws(() => parseKeepingIntegers('{"a": 9007199254740993,}'), SyntaxError, "an error is JSON.parse's own, at the position the user wrote")
})

for (const headersFirst of [false, true]) {
  test(`grpc-message of a failed call (${headersFirst ? 'in trailers' : 'trailers-only'}) shows in the error breakdown`, async () => {
    const failing = await server(() => ({ headersFirst, error: { code: 14, details: 'simulated unavailable: 100% überlastet' } }))
    const ok = await server()
    const result = await plainRun([failing.url, ok.url], '{}', 6)
    const plain = result.phases.plain!
    assert.deepEqual(plain.statusCodes, { '0': 3, '14': 3 })
    assert.deepEqual(plain.errorMessages, { 'UNAVAILABLE: simulated unavailable: 100% überlastet': 3 })
    assert.match(renderText(result), /Error distribution:\n {2}\[3\] UNAVAILABLE: simulated unavailable: 100% überlastet/)
    const [header, ...rows] = parseCsv(renderCsvSummary(result))
    const phaseRow = rows.find((r) => r[header!.indexOf('scope')] === 'phase')!
    assert.equal(phaseRow[header!.indexOf('error_messages')], '[3] UNAVAILABLE: simulated unavailable: 100% überlastet')
  })
}

test('messages are bounded: each one cut to its length, distinct ones counted up to a limit and the rest together', async () => {
  const n = MAX_MESSAGES + 10
  const s = await server((i) => ({ error: { code: 13, details: `request ${i} failed ${'x'.repeat(i === 0 ? 1000 : 0)}` } }))
  const result = await plainRun([s.url], '{}', n)
  const messages = result.phases.plain!.errorMessages!
  assert.equal(Object.keys(messages).length, MAX_MESSAGES)
  assert.equal(
    Object.values(messages).reduce((a, b) => a + b, 0),
    n,
    'every failed call is counted once',
  )
  assert.equal(messages[OTHER_MESSAGES], n - (MAX_MESSAGES - 1))
  for (const key of Object.keys(messages)) assert.ok(key.length <= 'INTERNAL: '.length + MAX_MESSAGE_CHARS, `${key.length} characters`)
})
