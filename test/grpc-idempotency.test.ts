/**
 * Never hedge a gRPC write: a method is hedged only when its descriptor says
 * `option idempotency_level = NO_SIDE_EFFECTS` or `IDEMPOTENT` (from a
 * .proto or a --protoset), or with --idempotency-key or --unsafe-hedge; the
 * report says which rule allowed it. Against real grpc-js servers on 127.0.0.1.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'
import { renderHtml } from '../src/report/html.js'
import { renderJson } from '../src/results/result-json.js'
import { UsageError } from '../src/core/errors.js'
import { loadGrpcMethod } from '../src/protocol/grpc-method.js'
import { SHOP_PROTO, startGrpcServer, type GrpcTestServer } from './helpers/grpc-server.js'
import { runMain } from './helpers/main-cases.js'

const servers: GrpcTestServer[] = []
let urls: string[] = []
before(async () => {
  // Every call answers after 30 ms: a 5 ms hedge delay hedges each one (no budget).
  for (let i = 0; i < 2; i++) servers.push(await startGrpcServer(() => ({ delayMs: 30 })))
  urls = servers.map((s) => s.url)
})
after(() => servers.forEach((s) => s.close()))

/** Calls of `method` the servers saw since `mark` (servers' call counts from `mark()`). */
const callsTo = (method: string, since: number[] = servers.map(() => 0)) =>
  servers.flatMap((s, i) => s.calls.slice(since[i])).filter((c) => c.method === method)
const mark = () => servers.map((s) => s.calls.length)

function options(method: string, extra: { idempotencyKey?: boolean; unsafeHedge?: boolean } = {}, mode: 'both' | 'plain' | 'hedged' = 'hedged') {
  return {
    urls,
    grpc: { proto: SHOP_PROTO, call: `shop.Inventory/${method}` },
    concurrency: 2,
    requests: 6,
    warmup: 0,
    mode,
    hedge: { delay: 5, budgetPct: null as unknown as number, ...extra },
  }
}

test('a method without idempotency_level is refused for hedging before anything is sent, naming the option to add', async () => {
  const sentBefore = mark()
  await assert.rejects(run(options('Reserve')), (err: Error) => {
    assert.ok(err instanceof UsageError)
    assert.match(
      err.message,
      /^refusing to hedge shop\.Inventory\/Reserve: its proto does not say it is safe to call twice \(add `option idempotency_level = NO_SIDE_EFFECTS;` for a read, or IDEMPOTENT, to rpc Reserve in .*shop\.proto; or pass --idempotency-key .*--unsafe-hedge .*--mode plain\)$/,
    )
    return true
  })
  assert.equal(callsTo('Reserve', sentBefore).length, 0, 'no call reached the server')
  // A plain run of the same write is allowed: nothing is sent twice.
  const plain = await run(options('Reserve', {}, 'plain'))
  assert.equal(plain.phases.plain!.ok, 6)
  assert.equal(plain.config.hedge.allowedBy, null)
})

test('the CLI refuses it in one line, exit 2', async () => {
  const r = await runMain([urls[0]!, urls[1]!, '--proto', SHOP_PROTO, '--call', 'shop.Inventory/Reserve', '-n', '5', '--warmup', '0', '--no-save'])
  assert.equal(r.code, 2)
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
  assert.match(r.stderr, /refusing to hedge shop\.Inventory\/Reserve: .*option idempotency_level = NO_SIDE_EFFECTS/)
})

for (const [method, level] of [
  ['Get', 'NO_SIDE_EFFECTS'],
  ['Put', 'IDEMPOTENT'],
] as const) {
  test(`${level} in the proto allows hedging ${method}, and the report says so`, async () => {
    const result = await run(options(method))
    const h = result.phases.hedged!.hedging!
    assert.ok(h.hedgesSent > 0, `hedges ${h.hedgesSent}`)
    assert.equal(result.config.hedge.allowedBy, `idempotency_level = ${level} in the proto`)
    assert.match(renderText(result), new RegExp(`Allowed by: +idempotency_level = ${level} in the proto`))
    assert.match(renderHtml(result), new RegExp(`hedging allowed by</th><td[^>]*>idempotency_level = ${level} in the proto`))
    assert.equal(JSON.parse(renderJson(result)).config.hedge.allowedBy, `idempotency_level = ${level} in the proto`)
    assert.ok(!result.warnings.some((w) => /unsafe-hedge/.test(w)))
  })
}

test('--idempotency-key allows hedging a write: every copy of a call carries the same key', async () => {
  const seen = mark()
  const result = await run(options('Reserve', { idempotencyKey: true }))
  assert.equal(result.config.hedge.allowedBy, '--idempotency-key')
  const calls = callsTo('Reserve', seen)
  const keyOf = (c: (typeof calls)[number]) => String(c.metadata.get('idempotency-key')[0] ?? '')
  const originals = calls.filter((c) => c.previousAttempts === 0)
  const hedges = calls.filter((c) => c.previousAttempts > 0)
  assert.equal(originals.length, 6)
  assert.ok(hedges.length > 0, 'hedges reached the server')
  assert.equal(new Set(originals.map(keyOf)).size, 6, 'one key per call')
  for (const h of hedges)
    assert.ok(
      originals.some((o) => keyOf(o) === keyOf(h) && keyOf(h) !== ''),
      `hedge key ${keyOf(h)}`,
    )
})

test('--unsafe-hedge allows it too, with a warning that the server may have run it twice', async () => {
  const result = await run(options('Reserve', { unsafeHedge: true }))
  assert.equal(result.config.hedge.allowedBy, '--unsafe-hedge')
  assert.ok(result.phases.hedged!.hedging!.hedgesSent > 0)
  assert.ok(
    result.warnings.some((w) => /^--unsafe-hedge: gRPC shop\.Inventory\/Reserve requests were hedged without idempotency keys/.test(w)),
    result.warnings.join(' | '),
  )
})

test('a --protoset descriptor carries the level as the .proto does', () => {
  const load = createRequire(import.meta.url)
  load('protobufjs/ext/descriptor.js')
  const protobuf = load('protobufjs')
  const root = new protobuf.Root().loadSync(SHOP_PROTO)
  const descriptor = load('protobufjs/ext/descriptor.js')
  const file = join(mkdtempSync(join(tmpdir(), 'hedgebench-protoset-')), 'shop.protoset')
  writeFileSync(file, descriptor.FileDescriptorSet.encode(root.toDescriptor('proto3')).finish())
  assert.equal(loadGrpcMethod({ protoset: file }, 'shop.Inventory/Get').idempotency, 'NO_SIDE_EFFECTS')
  assert.equal(loadGrpcMethod({ protoset: file }, 'shop.Inventory/Put').idempotency, 'IDEMPOTENT')
  assert.equal(loadGrpcMethod({ protoset: file }, 'shop.Inventory/Reserve').idempotency, 'IDEMPOTENCY_UNKNOWN')
})
