/**
 * -d/-D of several messages (issue 48: ghz's -D with a JSON array, and
 * NDJSON): each message encoded once before the run, the calls sending them
 * round-robin or at random with the run's seed; a message that does not fit
 * the type is refused naming its item or line. Against a grpc-js server on
 * 127.0.0.1 that records each call.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '../src/run/run.js'
import type { RunOptions } from '../src/run/run-options.js'
import { CALL, startTestServer, writeTestSchema, type SeenCall, type TestSchema, type TestServer } from './helpers/grpc-test-server.js'

let schema: TestSchema
let server: TestServer
const dir = mkdtempSync(join(tmpdir(), 'hedgebench-data-list-'))

before(async () => {
  schema = writeTestSchema()
  server = await startTestServer({ schema, reflection: 'none', delayMs: () => 0 })
})
after(async () => {
  await server?.close()
  schema?.remove()
  rmSync(dir, { recursive: true, force: true })
})

function file(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

async function calls(grpc: Partial<NonNullable<RunOptions['grpc']>>, seed = 11): Promise<string[]> {
  const before = server.seen.length
  const result = await run({
    urls: [server.url],
    warmup: 0,
    requests: 12,
    concurrency: 3,
    seed,
    mode: 'plain',
    grpc: { call: CALL, proto: schema.proto, importPaths: [schema.importPath], ...grpc },
  })
  assert.equal(result.phases.plain!.errors, 0)
  return server.seen.slice(before).map((c: SeenCall) => String(c.request['sku']))
}

const count = (skus: string[]): Record<string, number> => Object.fromEntries([...new Set(skus)].sort().map((s) => [s, skus.filter((x) => x === s).length]))

test('-D with a JSON array: the messages round-robin, each an equal share', async () => {
  const path = file('three.json', '[{"sku": "a"}, {"sku": "b"}, {"sku": "c"}]')
  assert.deepEqual(count(await calls({ dataFile: path })), { a: 4, b: 4, c: 4 })
})

test('-D as NDJSON, and -d with an array: the same', async () => {
  const path = file('two.ndjson', '{"sku": "x"}\n\n{"sku": "y"}\n')
  assert.deepEqual(count(await calls({ dataFile: path })), { x: 6, y: 6 })
  assert.deepEqual(count(await calls({ data: '[{"sku": "p"}, {"sku": "q"}, {"sku": "r"}, {"sku": "s"}]' })), { p: 3, q: 3, r: 3, s: 3 })
})

test('--data-order random: drawn with the run seed, the same for the same seed', async () => {
  const path = file('four.json', '[{"sku": "a"}, {"sku": "b"}, {"sku": "c"}, {"sku": "d"}]')
  const first = count(await calls({ dataFile: path, dataOrder: 'random' }, 5))
  assert.deepEqual(count(await calls({ dataFile: path, dataOrder: 'random' }, 5)), first)
  assert.notDeepEqual(first, { a: 3, b: 3, c: 3, d: 3 }, 'not the round-robin')
})

test('a message that does not fit, or a line that is not JSON, is refused naming its item or line', async () => {
  const grpc = { call: CALL, proto: schema.proto, importPaths: [schema.importPath] }
  const bad = file('bad.json', '[{"sku": "a"}, {"nope": 1}]')
  await assert.rejects(run({ urls: [server.url], grpc: { ...grpc, dataFile: bad } }), /-D .*bad\.json\[1\] does not fit/)
  const lines = file('bad.ndjson', '{"sku": "a"}\n{"sku": \n')
  await assert.rejects(run({ urls: [server.url], grpc: { ...grpc, dataFile: lines } }), /bad\.ndjson:2: not valid JSON/)
})
