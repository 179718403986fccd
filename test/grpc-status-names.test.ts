/**
 * gRPC status codes by name wherever a user reads them: the JSON's phase
 * statusCodes ("UNAVAILABLE", as grpcClient.statusCodes) and the CSV
 * ("14 UNAVAILABLE", number and name), the per-request log's status column
 * (UNAVAILABLE); results saved before, keyed by
 * number, still read; HTTP statuses stay numbers. A run against real
 * grpc-js servers on 127.0.0.1.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { run } from '../src/run/run.js'
import { parseResult, renderJson } from '../src/results/result-json.js'
import { renderCsvSummary } from '../src/report/csv.js'
import { renderText } from '../src/report/text.js'
import { statusFromKey, statusKey } from '../src/core/status.js'
import type { RunResult } from '../src/results/run-result.js'
import { SHOP_PROTO, startGrpcServer, type GrpcTestServer } from './helpers/grpc-server.js'
import { parseCsv, parseCsvObjects } from './helpers/csv.js'
import { createRequestLog } from '../src/results/request-log.js'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const servers: GrpcTestServer[] = []
let result: RunResult
let dir: string
let requestRows: Array<Record<string, string>>
before(async () => {
  servers.push(await startGrpcServer(() => ({ error: { code: 14, details: 'down' } })), await startGrpcServer())
  dir = await mkdtemp(join(tmpdir(), 'hedgebench-grpc-names-'))
  const log = await createRequestLog(join(dir, 'requests.csv'))
  result = await run({
    urls: servers.map((s) => s.url),
    grpc: { proto: SHOP_PROTO, call: 'shop.Inventory/Get' },
    concurrency: 1,
    requests: 6,
    warmup: 0,
    mode: 'plain',
    requestSink: log,
  })
  await log.close()
  requestRows = parseCsvObjects(await readFile(join(dir, 'requests.csv'), 'utf8'))
})
after(async () => {
  servers.forEach((s) => s.close())
  await rm(dir, { recursive: true, force: true })
})

test('JSON keys gRPC codes by name in the phase, its replicas and beside grpcClient; the engine still counts by number', () => {
  assert.deepEqual(result.phases.plain!.statusCodes, { '0': 3, '14': 3 })
  const json = JSON.parse(renderJson(result))
  assert.deepEqual(json.phases.plain.statusCodes, { OK: 3, UNAVAILABLE: 3 })
  assert.deepEqual(
    json.phases.plain.replicas.map((r: { statusCodes: object }) => r.statusCodes),
    [{ UNAVAILABLE: 3 }, { OK: 3 }],
  )
})

test('a saved result reads back to the same counts and renders byte for byte; one saved by number still reads', () => {
  const text = renderJson(result)
  const read = parseResult(text, 'saved.json')
  assert.deepEqual(read.phases.plain!.statusCodes, { '0': 3, '14': 3 })
  assert.equal(renderJson(read), text)
  assert.equal(renderText(read), renderText(result))
  const old = parseResult(JSON.stringify(result), 'old.json')
  assert.deepEqual(old.phases.plain!.statusCodes, { '0': 3, '14': 3 })
  assert.equal(renderJson(old), text)
})

test('CSV shows the number and the name', () => {
  const [header, ...rows] = parseCsv(renderCsvSummary(result))
  const phase = rows.find((r) => r[header!.indexOf('scope')] === 'phase')!
  assert.equal(phase[header!.indexOf('status_codes')], '0 OK:3 14 UNAVAILABLE:3')
})

test('--csv-requests names the gRPC status of each request, as the text report does', () => {
  assert.equal(requestRows.length, 6)
  // The replica column is the connection's origin (http://127.0.0.1:PORT): matched by port.
  const byReplica = new Map(servers.map((s) => [new URL(s.url).port, [] as string[]]))
  for (const row of requestRows) byReplica.get(new URL(row.replica!).port)!.push(row.status!)
  assert.deepEqual(
    [...byReplica.values()],
    [
      ['UNAVAILABLE', 'UNAVAILABLE', 'UNAVAILABLE'],
      ['OK', 'OK', 'OK'],
    ],
  )
})

test('keys: gRPC codes by name, HTTP statuses by number, both read back', () => {
  assert.equal(statusKey(14), 'UNAVAILABLE')
  assert.equal(statusKey(200), '200')
  assert.equal(statusKey(42), 'CODE_42')
  for (const status of [0, 14, 16, 42, 200, 503]) assert.equal(statusFromKey(statusKey(status)), status)
  assert.equal(statusFromKey('14'), 14)
  assert.ok(Number.isNaN(statusFromKey('weird')))
})
