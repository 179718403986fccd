/**
 * Per-call data: -d holding ghz-style template actions ({{.RequestNumber}},
 * {{.UUID}}, {{randomInt MIN MAX}}, {{randomString N}}) renders a message
 * per logical call, and a hedge carries exactly its original's bytes.
 * Against a grpc-js server on 127.0.0.1 that records each call's raw bytes.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import { UsageError } from '../src/core/errors.js'
import { resolveOptions } from '../src/run/resolve-options.js'
import { compileTemplate } from '../src/protocol/grpc-template.js'
import { seededRandom } from '../src/core/random.js'
import type { RunOptions } from '../src/run/run-options.js'
import { CALL, startTestServer, writeTestSchema, type SeenCall, type TestSchema, type TestServer } from './helpers/grpc-test-server.js'

const TEMPLATE = '{"sku": "s-{{.RequestNumber}}", "n": "{{.RequestNumber}}", "id": "{{.UUID}}", "qty": {{randomInt 1 1000}}}'
/** Originals of every third call answer late, so that they are hedged; hedges answer at once. */
const SLOW_MS = 300

let schema: TestSchema
let server: TestServer

before(async () => {
  schema = writeTestSchema()
  server = await startTestServer({ schema, reflection: 'none', delayMs: (_n, call) => (call.attempt === 0 && num(call) % 3 === 1 ? SLOW_MS : 0) })
})

after(async () => {
  await server?.close()
  schema?.remove()
})

/** The call's number as the server decoded it (proto3 leaves a 0 out). */
function num(c: SeenCall): number {
  return Number(c.request['n'] ?? 0)
}

function grpc(data: string): NonNullable<RunOptions['grpc']> {
  return { call: CALL, proto: schema.proto, importPaths: [schema.importPath], data }
}

async function calls(o: Partial<RunOptions>): Promise<SeenCall[]> {
  const before = server.seen.length
  const result = await run({ urls: [server.url], warmup: 0, requests: 12, concurrency: 3, seed: 11, mode: 'plain', grpc: grpc(TEMPLATE), ...o })
  for (const phase of Object.values(result.phases)) assert.equal(phase!.errors, 0)
  return server.seen.slice(before)
}

describe('per-call data (-d templates)', () => {
  test("each call has its own number, UUID and random value; a hedge carries its original's bytes exactly", async () => {
    const seen = await calls({ mode: 'hedged', hedge: { delay: 40, budgetPct: 100, unsafeHedge: true } })
    const originals = seen.filter((c) => c.attempt === 0)
    const hedges = seen.filter((c) => c.attempt > 0)
    assert.deepEqual(
      originals.map((c) => num(c)).sort((a, b) => a - b),
      [...Array(12).keys()],
      'calls 0..11, once each',
    )
    assert.equal(new Set(originals.map((c) => c.request['id'])).size, 12, 'distinct UUIDs')
    for (const c of originals) {
      assert.match(String(c.request['id']), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      assert.ok(Number(c.request['qty']) >= 1 && Number(c.request['qty']) < 1000)
      assert.equal(c.request['sku'], `s-${num(c)}`)
    }
    // Calls 1, 4, 7, 10 answer after SLOW_MS: each was hedged at 40 ms.
    assert.ok(hedges.length >= 1, 'hedges were sent')
    for (const h of hedges) {
      const original = originals.find((c) => c.request['n'] === h.request['n'])
      assert.ok(original, `hedge of call ${num(h)} has an original`)
      assert.deepEqual(h.raw, original.raw, `call ${num(h)}: the hedge's bytes are the original's`)
    }
  })

  test('the same seed sends the same messages; worker threads number their calls apart', async () => {
    const byNumber = (seen: SeenCall[]) => new Map(seen.map((c) => [num(c), c.raw.toString('hex')]))
    const first = byNumber(await calls({}))
    const again = byNumber(await calls({}))
    assert.deepEqual(again, first)
    const threads = await calls({ workers: 2 })
    assert.equal(new Set(threads.map(num)).size, 12, 'no number sent twice')
    assert.equal(new Set(threads.map((c) => c.request['id'])).size, 12)
  })

  test('a template is rendered and checked before the run; plain -d has no per-call work', () => {
    const resolve = (data: string) => resolveOptions({ urls: [server.url], mode: 'plain', grpc: grpc(data) }, 1)
    assert.equal(resolve('{"sku": "fixed"}').grpc!.template, null)
    assert.ok(resolve(TEMPLATE).grpc!.template)
    const refused = (data: string, pattern: RegExp) =>
      assert.throws(
        () => resolve(data),
        (err: Error) => err instanceof UsageError && pattern.test(err.message),
      )
    refused('{"sku": "{{.Nope}}"}', /^-d: unknown template action \{\{\.Nope\}\} \(known: /)
    refused('{"qty": {{randomInt 5 5}}}', /needs MIN below MAX/)
    refused('{"qty": "{{randomString 4}}"}', /^-d does not fit shop\.v1\.GetRequest/)
    refused('{"sku": "{{.UUID"}', /not closed/)
  })

  test('the renderer: values replayed by the seed, ranges kept', () => {
    const render = compileTemplate('{{.RequestNumber}} {{randomInt 10 13}} {{randomString 5}}', '-d')
    const random = seededRandom(3)
    const out = Array.from({ length: 200 }, (_, n) => render({ requestNumber: n, random }).split(' '))
    assert.deepEqual(
      out.map((p) => Number(p[0])),
      [...Array(200).keys()],
    )
    assert.deepEqual(new Set(out.map((p) => Number(p[1]))), new Set([10, 11, 12]))
    assert.ok(out.every((p) => /^[A-Za-z0-9]{5}$/.test(p[2]!)))
    const again = seededRandom(3)
    assert.deepEqual(
      Array.from({ length: 200 }, (_, n) => render({ requestNumber: n, random: again }).split(' ')),
      out,
    )
  })
})
