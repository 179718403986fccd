/**
 * A --proto that differs from the schema the server serves by reflection,
 * for the called method's messages (a field number, a field type, a nested
 * message's field, a field one side lacks), is warned once before the run:
 * in the result's warnings and on stderr. The same schema, or a server
 * without reflection, says nothing. Real grpc-js servers on 127.0.0.1 with
 * grpc-node's reflection service.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '../src/run/run.js'
import type { RunOptions } from '../src/run/run-options.js'
import { CALL, startTestServer, writeTestSchema, type TestSchema, type TestServer } from './helpers/grpc-test-server.js'
import { runMain } from './helpers/main-cases.js'
import { stderrLines } from './helpers/cli.js'

let schema: TestSchema
let served: TestServer
let unreflected: TestServer
/** The test schema with its request changed: n moved to 7, qty a string, id gone, gift added, Dims.y an int64. */
let drifted: string

before(async () => {
  schema = writeTestSchema()
  ;[served, unreflected] = await Promise.all([startTestServer({ schema, reflection: 'both' }), startTestServer({ schema, reflection: 'none' })])
  drifted = mkdtempSync(join(tmpdir(), 'hedgebench-drift-'))
  mkdirSync(join(drifted, 'shop', 'v1'), { recursive: true })
  const file = (name: string) => readFileSync(join(schema.dir, 'shop', 'v1', name), 'utf8')
  writeFileSync(join(drifted, 'shop', 'v1', 'common.proto'), file('common.proto').replace('int32 y = 2;', 'int64 y = 2;'))
  writeFileSync(
    join(drifted, 'shop', 'v1', 'shop.proto'),
    file('shop.proto')
      .replace('int64 n = 2;', 'int64 n = 7;')
      .replace('string id = 3;', '')
      .replace('int32 qty = 4;', 'string qty = 4;')
      .replace('google.protobuf.Timestamp at = 6;', 'google.protobuf.Timestamp at = 6;\n  bool gift = 8;'),
  )
})

after(async () => {
  await Promise.all([served?.close(), unreflected?.close()])
  schema?.remove()
  if (drifted) rmSync(drifted, { recursive: true, force: true })
})

function options(url: string, dir: string, onWarning?: (w: string) => void): RunOptions {
  return {
    urls: [url],
    grpc: { call: CALL, proto: 'shop/v1/shop.proto', importPaths: [dir], data: '{"sku": "a"}' },
    requests: 2,
    concurrency: 1,
    warmup: 0,
    mode: 'plain',
    ...(onWarning ? { onWarning } : {}),
  }
}

const DRIFT =
  "--proto shop/v1/shop.proto differs from the schema grpc://127.0.0.1:PORT serves by reflection for shop.v1.Inventory/Get: GetRequest.n is field 7 in the file, 2 on the server; GetRequest.qty is string in the file, int32 on the server; GetRequest.dims.y is int64 in the file, int32 on the server; 2 more (a message one encodes, the other reads otherwise: update the file, or leave it out to use the server's)"

describe('a --proto that differs from the server reflection', () => {
  test('is warned once, before the run (onWarning) and in the result, naming what differs', async () => {
    const said: string[] = []
    const result = await run(options(served.url, drifted, (w) => said.push(w)))
    const expected = DRIFT.replace('PORT', new URL(served.url).port)
    assert.deepEqual(said, [expected])
    assert.deepEqual(
      result.warnings.filter((w) => w.includes('serves by reflection')),
      [expected],
    )
    assert.equal(result.phases.plain!.ok, 2, 'the run goes on with the schema given')
  })

  test('the same schema, or a server without reflection: nothing said', async () => {
    for (const [url, dir] of [
      [served.url, schema.dir],
      [unreflected.url, drifted],
    ] as const) {
      const said: string[] = []
      const result = await run(options(url, dir, (w) => said.push(w)))
      assert.deepEqual(said, [])
      assert.deepEqual(
        result.warnings.filter((w) => w.includes('reflection')),
        [],
      )
    }
  })

  test('from the CLI: one stderr line before the run, exit 0', async () => {
    const cli = await runMain([
      served.url,
      '--proto',
      'shop/v1/shop.proto',
      '-i',
      drifted,
      '--call',
      CALL,
      '-d',
      '{"sku": "a"}',
      '-n',
      '2',
      '--warmup',
      '0',
      '--mode',
      'plain',
      '--no-save',
    ])
    assert.equal(cli.code, 0, cli.stderr)
    const lines = stderrLines(cli).filter((l) => l.includes('serves by reflection'))
    assert.deepEqual(lines, [`hedgebench: warning: ${DRIFT.replace('PORT', new URL(served.url).port)}`])
  })
})
