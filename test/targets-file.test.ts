/**
 * The targets file's gRPC targets and directives (issue 48): `CALL
 * package.Service/Method` with its metadata and message (an `@file` or one
 * JSON line), JSON lines `{"call", "data" | "dataFile", "metadata"}`, and
 * the `# weight:` / `# hedge-delay:` directive lines of the HTTP format,
 * other comments staying comments. Every fault is one line naming
 * file:line; each target remembers its line for the refusals that come
 * once the schema is loaded (target-spec.ts). A mix's default warm-up is
 * enough for every target's own delay.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readTargetsFile } from '../src/run/targets-file.js'
import { resolveTargets, type GrpcTargetCall } from '../src/run/target-spec.js'
import { UsageError } from '../src/core/errors.js'
import { resolveOptions } from '../src/run/resolve-options.js'
import type { RunOptions } from '../src/run/run-options.js'
import { requestsNeeded } from '../src/stats/noise.js'
import { planRun } from '../src/run/run-plan.js'

const dir = mkdtempSync(join(tmpdir(), 'hedgebench-targets-file-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function file(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

const REPLICAS = ['http://127.0.0.1:9001', 'http://127.0.0.1:9002']
const GRPC = ['grpc://127.0.0.1:9001']

test('HTTP format: "# weight:" and "# hedge-delay:" after the request line set them; other comments stay comments', () => {
  const path = file(
    'directives.txt',
    [
      '# the mix (a comment)',
      'GET /a',
      '# weight: 3',
      '# hedge-delay: p90',
      'Accept: text/plain',
      '# just a note',
      '',
      'GET /b',
      '# hedge-delay: 15ms',
      '# Weight:0.5',
    ].join('\n'),
  )
  assert.deepEqual(readTargetsFile(path, REPLICAS), [
    { method: 'GET', path: '/a', weight: 3, hedgeDelay: 'p90', headers: [['Accept', 'text/plain']], at: `${path}:2` },
    { method: 'GET', path: '/b', hedgeDelay: 15, weight: 0.5, at: `${path}:8` },
  ])
})

test('CALL lines: metadata, then the message as one JSON line or an @file relative to the targets file', () => {
  file('reserve.json', '{"id": "9", "note": "r"}\n')
  const path = file(
    'calls.txt',
    [
      'CALL shop.Inventory/Get',
      '# weight: 3',
      '{"id": 7, "ids": [1, 2]}',
      '',
      'CALL shop.Inventory/Reserve',
      'x-tenant: a',
      '@reserve.json',
      '',
      'CALL shop.Inventory/Put',
    ].join('\n'),
  )
  assert.deepEqual(readTargetsFile(path, GRPC), [
    { call: 'shop.Inventory/Get', weight: 3, message: { id: 7, ids: [1, 2] }, at: `${path}:1` },
    { call: 'shop.Inventory/Reserve', headers: [['x-tenant', 'a']], message: { id: '9', note: 'r' }, at: `${path}:5` },
    { call: 'shop.Inventory/Put', at: `${path}:9` },
  ])
})

test('JSON lines: {"call", "data" | "dataFile", "metadata", "weight", "hedgeDelay"}, beside HTTP lines', () => {
  file('get.json', '{"id": 1}')
  const path = file(
    'calls.jsonl',
    [
      '{"call": "shop.Inventory/Get", "data": {"id": 12345678901234567890}, "metadata": {"x-a": ["1", "2"]}, "weight": 2}',
      '{"call": "shop.Inventory/Get", "dataFile": "get.json", "hedgeDelay": "p75"}',
    ].join('\n'),
  )
  assert.deepEqual(readTargetsFile(path, GRPC), [
    {
      call: 'shop.Inventory/Get',
      message: { id: '12345678901234567890' },
      headers: [
        ['x-a', '1'],
        ['x-a', '2'],
      ],
      weight: 2,
      at: `${path}:1`,
    },
    { call: 'shop.Inventory/Get', message: { id: 1 }, hedgeDelay: 'p75', at: `${path}:2` },
  ])
})

test('a message holding template actions is kept as its text, to be rendered per call; an HTTP body keeps its {{ as given', () => {
  file('tpl.json', '{"id": {{.RequestNumber}}}\n')
  file('page.json', '{"name": "{{.UUID}}"}')
  const grpc = file(
    'tpl.txt',
    ['CALL shop.Inventory/Get', '{"id": {{.RequestNumber}}, "note": "{{.UUID}}"}', '', 'CALL shop.Inventory/Put', '@tpl.json'].join('\n'),
  )
  assert.deepEqual(readTargetsFile(grpc, GRPC), [
    { call: 'shop.Inventory/Get', messageText: '{"id": {{.RequestNumber}}, "note": "{{.UUID}}"}', at: `${grpc}:1` },
    { call: 'shop.Inventory/Put', messageText: '{"id": {{.RequestNumber}}}', at: `${grpc}:4` },
  ])
  const lines = file('tpl.jsonl', '{"call": "shop.Inventory/Get", "data": {"note": "{{.UUID}}"}}\n{"call": "shop.Inventory/Put", "dataFile": "tpl.json"}\n')
  assert.deepEqual(readTargetsFile(lines, GRPC), [
    { call: 'shop.Inventory/Get', message: { note: '{{.UUID}}' }, at: `${lines}:1` },
    { call: 'shop.Inventory/Put', messageText: '{"id": {{.RequestNumber}}}', at: `${lines}:2` },
  ])
  const http = file('tpl-http.txt', 'POST /pages\n@page.json\n')
  assert.equal(Buffer.from(readTargetsFile(http, REPLICAS)[0]!.body!).toString(), '{"name": "{{.UUID}}"}')
})

test('each fault of a gRPC target or a directive is one line naming file:line', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['GET /a\n# weight: lots\n', 'x.txt', /x\.txt:2: # weight: "lots" is not a number above 0/],
    ['GET /a\n# weight: 0\n', 'x.txt', /x\.txt:2: # weight: "0" is not a number above 0/],
    ['GET /a\n# hedge-delay: soon\n', 'x.txt', /x\.txt:2: # hedge-delay: "soon" is neither a duration \(15ms\) nor a percentile \(p90\)/],
    // A repeated directive is refused as a second @body is, not last-wins.
    ['GET /a\n# weight: 2\nx-a: 1\n# Weight: 3\n', 'x.txt', /x\.txt:4: a second # weight: line for one target$/],
    ['CALL shop.Inventory/Get\n# hedge-delay: p90\n#hedge-delay: 5ms\n', 'x.txt', /x\.txt:3: a second # hedge-delay: line for one target$/],
    ['CALL shop.Inventory/Get\n{"id": \n', 'x.txt', /x\.txt:2: the message is not valid JSON/],
    ['CALL shop.Inventory/Get\n{"id": 1}\n{"id": 2}\n', 'x.txt', /x\.txt:3: a second message line for one target/],
    ['CALL shop.Inventory/Get\n@nothing.json\n', 'x.txt', /x\.txt:2: message file nothing\.json cannot be read \(ENOENT\)/],
    ['CALL Inventory\n', 'x.txt', /x\.txt:1: call must be package\.Service\/Method/],
    ['CALL\n', 'x.txt', /x\.txt:1: expected "METHOD path-or-URL" or "CALL package\.Service\/Method"/],
    ['{"call": "shop.Inventory/Get", "data": {}, "dataFile": "get.json"}\n', 'y.jsonl', /y\.jsonl:1: give "data" or "dataFile", not both/],
    [
      '{"call": "shop.Inventory/Get", "body": "x"}\n',
      'y.jsonl',
      /y\.jsonl:1: body is not a known field \(expected one of: call, data, dataFile, metadata, weight, hedgeDelay\)/,
    ],
    ['{"method": "CALL", "path": "/x"}\n', 'y.jsonl', /y\.jsonl:1: a gRPC target is \{"call": "package\.Service\/Method", \.\.\.\}/],
  ]
  for (const [text, name, expected] of cases) {
    const path = file(name, text)
    assert.throws(
      () => readTargetsFile(path, GRPC),
      (err: Error) => err instanceof UsageError && expected.test(err.message) && !err.message.includes('\n'),
      `${JSON.stringify(text)} -> ${expected}`,
    )
  }
})

test('a CALL against http:// replicas, or an HTTP request against grpc:// ones: one line naming the target', () => {
  const optIn = { idempotencyKey: false, unsafeHedge: false }
  const calls: GrpcTargetCall = (t) => ({ call: t.call, path: `/${t.call}`, body: Buffer.alloc(0), safe: false, template: null })
  assert.throws(
    () => resolveTargets([{ call: 'shop.Inventory/Get', at: 'mix.txt:4' }], [], optIn, null),
    /^UsageError: mix\.txt:4: CALL shop\.Inventory\/Get is a gRPC call, and the replicas are http:\/\/ \(give grpc:\/\/host:port replicas, or METHOD path\)$/,
  )
  assert.throws(
    () => resolveTargets([{ method: 'GET', path: '/a' }], [], optIn, calls),
    /^UsageError: targets\[0\]: GET \/a is an HTTP request, and the replicas are grpc:\/\/ \(give CALL package\.Service\/Method\)$/,
  )
  assert.throws(() => resolveTargets([{ call: 'a.B/C', path: '/x' }], [], optIn, calls), /targets\[0\] a gRPC target \(call\) takes no path/)
  const [reserve, keyed] = resolveTargets(
    [{ call: 'shop.Inventory/Reserve' }, { call: 'shop.Inventory/Reserve', headers: [['idempotency-key', 'k']] }],
    [],
    optIn,
    calls,
  )!
  assert.deepEqual(
    [reserve!.name, reserve!.method, reserve!.path, reserve!.repeatable, keyed!.repeatable],
    ['shop.Inventory/Reserve', 'CALL', '/shop.Inventory/Reserve', false, true],
  )
})

test("a mix's default warm-up gives every target enough to place its delay's percentile: N x 2 x what it needs; a given --warmup is kept", () => {
  const targets = (...delays: Array<string | number | undefined>) =>
    delays.map((d, i) => ({ method: 'GET' as const, path: `/${i}`, ...(d === undefined ? {} : { hedgeDelay: d as `p${number}` }) }))
  const warmup = (o: Partial<RunOptions>) => resolveOptions({ urls: REPLICAS, requests: 40, ...o }, 0).warmup
  // p95 (auto) needs 72 requests, measured on the second half of each target's share.
  assert.equal(requestsNeeded(95), 72)
  assert.equal(warmup({ targets: targets(undefined, undefined, undefined) }), 3 * 2 * 72)
  // The highest percentile any target's delay follows; a fixed delay needs none.
  assert.equal(warmup({ targets: targets('p99', undefined) }), 2 * 2 * requestsNeeded(99))
  assert.equal(warmup({ targets: targets(5, 10), hedge: { delay: 20 } }), 40)
  // As before: without targets min(n, 1000); a plain run measures no delay; a --warmup given is the user's.
  assert.equal(warmup({}), 40)
  assert.equal(warmup({ targets: targets(undefined, undefined), mode: 'plain' }), 40)
  assert.equal(warmup({ targets: targets(undefined, undefined), warmup: 10 }), 10)
  assert.equal(warmup({ targets: targets(undefined), requests: 5000 }), 1000)
  // The plan gives each target its share and measures the delay on the second half of it: 72 requests each.
  const plan = planRun({
    warmup: 3 * 2 * 72,
    warmupMinMs: 0,
    requests: 40,
    durationMs: null,
    mode: 'both',
    schedule: 'sequential',
    targets: resolveTargets(targets(undefined, undefined, undefined), [], { idempotencyKey: false, unsafeHedge: false }),
  })
  assert.deepEqual(
    plan.windows[0]!.lanes.map((l) => l.steadyAfter),
    [72, 72, 72],
  )
})
