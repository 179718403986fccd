/**
 * A mix of gRPC methods in one run (issue 48): `CALL package.Service/Method`
 * targets against grpc:// replicas, each method its own lane, rows and hedge
 * delay, a method its proto does not mark safe to repeat sent once, and each
 * method's attempts equal to what the servers received of it. Bad input is
 * one line, exit 2, before anything is sent. --csv-requests names each
 * request's target. A message holding template actions ({{.UUID}}, ...) is
 * rendered per logical call, as -d's: each target numbers its own calls,
 * and every attempt of a call sends its bytes. Against real grpc-js servers on
 * 127.0.0.1 (test/helpers/grpc-server.ts: shop.Inventory's Get is
 * NO_SIDE_EFFECTS, Put IDEMPOTENT, Reserve neither).
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RunResult } from '../src/results/run-result.js'
import protobuf from 'protobufjs'
import { SHOP_PROTO, startGrpcServer, type GrpcTestServer, type SeenCall } from './helpers/grpc-server.js'
import { runMain } from './helpers/main-cases.js'
import { parseCsvObjects } from './helpers/csv.js'
import { protoDuration } from '../src/report/deploy-config.js'
import { CALL, startTestServer, writeTestSchema } from './helpers/grpc-test-server.js'
import { startTarget, type Target } from '../src/sim/target.js'
import { parseProfile } from '../src/sim/profile.js'

/** Get answers after 100 ms, so a 5 ms hedge delay hedges every call; Reserve and Put after 10 ms. */
const SERVER_MS: Record<string, number> = { Get: 100, Reserve: 10, Put: 10 }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const Req = protobuf.loadSync(SHOP_PROTO).lookupType('shop.Req')

const servers: GrpcTestServer[] = []
let urls: string[] = []
const dir = mkdtempSync(join(tmpdir(), 'hedgebench-targets-grpc-'))
before(async () => {
  for (let i = 0; i < 2; i++) servers.push(await startGrpcServer((call) => ({ delayMs: SERVER_MS[call.method] ?? 0 })))
  urls = servers.map((s) => s.url)
})
after(() => {
  for (const s of servers) s.close()
  rmSync(dir, { recursive: true, force: true })
})

function file(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

/** The servers' calls of each method since `from` (the servers' call counts then). */
function received(from: number[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const [i, s] of servers.entries()) for (const c of s.calls.slice(from[i])) out[c.method] = (out[c.method] ?? 0) + 1
  return out
}
const mark = (): number[] => servers.map((s) => s.calls.length)

/** A run of the mix through main(), two attempts at most and no budget (every hedge the delay fires is sent), its JSON result. */
async function runMix(args: string[]): Promise<RunResult> {
  const r = await runMain([...urls, '--proto', SHOP_PROTO, ...args, '--max-attempts', '2', '--hedge-budget', 'off', '--no-save', '-o', 'json'], {
    timeoutMs: 100_000,
  })
  assert.equal(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as RunResult
}

const attempts = (t: NonNullable<RunResult['targets']>[number]): number => Object.values(t.phases).reduce((sum, p) => sum + (p?.attempts ?? 0), 0)

test('a mix of methods: each its rows and its own delay, a method not marked safe sent once, each attempts equal to the servers count of it', {
  timeout: 120_000,
}, async () => {
  file('reserve.json', '{"id": "9", "note": "r"}\n')
  const mix = file(
    'mix.txt',
    [
      '# Get is hedged at a fixed 5 ms (its server takes 100 ms); Reserve is a write: never hedged without the opt-in',
      'CALL shop.Inventory/Get',
      '# weight: 2',
      '# hedge-delay: 5ms',
      '{"id": 7}',
      '',
      'CALL shop.Inventory/Reserve',
      'x-tenant: a',
      '@reserve.json',
      '',
      'CALL shop.Inventory/Put',
    ].join('\n'),
  )
  const from = mark()
  const log = join(dir, 'requests.csv')
  const result = await runMix(['--targets', mix, '--csv-requests', log, '-n', '24', '-c', '4', '--warmup', '24', '--seed', '3'])
  const targets = result.targets!
  assert.deepEqual(
    targets.map((t) => [t.name, t.method, t.path, t.weight]),
    [
      ['shop.Inventory/Get', 'CALL', '/shop.Inventory/Get', 2],
      ['shop.Inventory/Reserve', 'CALL', '/shop.Inventory/Reserve', 1],
      ['shop.Inventory/Put', 'CALL', '/shop.Inventory/Put', 1],
    ],
  )
  assert.equal(result.config.grpc?.call, 'shop.Inventory/Get, shop.Inventory/Reserve, shop.Inventory/Put')
  // Each method's attempts, every phase, are what the servers received of it (the pre-run check's call never reaches a handler).
  const seen = received(from)
  assert.deepEqual(Object.fromEntries(targets.map((t) => [t.path.split('/')[2], attempts(t)])), seen)
  const [get, reserve, put] = targets.map((t) => t.phases.hedged!)
  // Get: every call hedged at its file's 5 ms (the server holds each 100 ms), two attempts each.
  assert.equal(get!.hedging?.delayMs, 5)
  assert.equal(get!.attempts, 2 * get!.requests)
  // Reserve: not hedged (its proto gives no idempotency_level); Put (IDEMPOTENT) is, at the p95 of its own warm-up,
  // which its server's 10 ms bounds from below.
  assert.equal(reserve!.attempts, reserve!.requests)
  assert.ok(put!.hedging!.delayMs >= SERVER_MS.Put!, `Put's delay ${put!.hedging!.delayMs}`)
  assert.match(put!.hedging!.delaySource, /^p95 of the last \d+ of \d+ warm-up requests/)
  // --csv-requests: a target column after the phase, each target's rows its requests of each phase.
  const rows = parseCsvObjects(readFileSync(log, 'utf8'))
  assert.deepEqual(Object.keys(rows[0]!).slice(0, 3), ['phase', 'target', 'seq'])
  for (const t of targets)
    for (const [phase, p] of Object.entries(t.phases))
      assert.equal(rows.filter((row) => row.target === t.name && row.phase === phase).length, p!.requests, `${t.name} ${phase}`)
  // The metadata and message of each target reached the server as given.
  const reserveCall = servers.flatMap((s) => s.calls).find((c) => c.method === 'Reserve')!
  assert.deepEqual(reserveCall.metadata.get('x-tenant'), ['a'])
  assert.ok(reserveCall.request.length > 0)
})

test("--idempotency-key: the write in the mix is hedged too, each copy with its call's key", { timeout: 120_000 }, async () => {
  const mix = file('keyed.jsonl', '{"call": "shop.Inventory/Reserve", "hedgeDelay": 1}\n{"call": "shop.Inventory/Get", "data": {"id": 1}}\n')
  const from = mark()
  const result = await runMix(['--targets', mix, '-n', '12', '-c', '2', '--warmup', '0', '--mode', 'hedged', '--hedge-delay', '5ms', '--idempotency-key'])
  const reserve = result.targets![0]!.phases.hedged!
  assert.ok(reserve.attempts > reserve.requests, `Reserve: ${reserve.attempts} attempts for ${reserve.requests} requests`)
  const keys = servers
    .flatMap((s, i) => s.calls.slice(from[i]))
    .filter((c) => c.method === 'Reserve')
    .map((c) => c.metadata.get('idempotency-key')[0])
  assert.ok(keys.every((k) => typeof k === 'string' && k !== ''))
  assert.equal(new Set(keys).size, reserve.requests, 'one key per logical call, on every copy of it')
})

test('bad input: an unknown method names its file:line, a CALL in an HTTP run or an HTTP request in a gRPC run is one line; exit 2, nothing sent', {
  timeout: 60_000,
}, async () => {
  const profile = parseProfile({ name: 'http', description: 'quick', replicas: 1, model: { base: { type: 'uniform', min: 1, max: 2 } } }, 'http')
  const http: Target = await startTarget({ profile, seed: 1 })
  try {
    const from = mark()
    const unknown = file('unknown.txt', 'CALL shop.Inventory/Get\n\n# a typo\nCALL shop.Inventory/Gett\n')
    const cases: Array<[string[], RegExp]> = [
      [
        [...urls, '--proto', SHOP_PROTO, '--targets', unknown],
        /^hedgebench: .*unknown\.txt:4: method "Gett" is not in service shop\.Inventory \(methods: Get, Put, Reserve\)$/,
      ],
      [
        [...urls, '--proto', SHOP_PROTO, '--targets', file('nosvc.jsonl', '{"call": "shop.Shelf/Get"}\n')],
        /^hedgebench: .*nosvc\.jsonl:1: service "shop\.Shelf" is not in the schema/,
      ],
      [
        [...urls, '--proto', SHOP_PROTO, '--targets', file('http-in-grpc.txt', 'CALL shop.Inventory/Get\n\nGET /a\n')],
        /^hedgebench: .*http-in-grpc\.txt:3: GET \/a is an HTTP request, and the replicas are grpc:\/\//,
      ],
      [
        [...http.urls, '--targets', file('call-in-http.txt', 'GET /a\n\nCALL shop.Inventory/Get\n')],
        /^hedgebench: .*call-in-http\.txt:3: CALL shop\.Inventory\/Get is a gRPC call, and the replicas are http:\/\//,
      ],
      [
        [...urls, '--proto', SHOP_PROTO, '--call', 'shop.Inventory/Get', '--targets', unknown],
        /^hedgebench: --call with --targets: each target gives its own call and message in the file$/,
      ],
      [
        [...urls, '--proto', SHOP_PROTO, '--targets', file('badmsg.txt', 'CALL shop.Inventory/Get\n{"id": "x"}\n')],
        /^hedgebench: .*badmsg\.txt:1: its message does not fit shop\.Req: id: /,
      ],
      // A malformed template action in a target's message, in every way a message is given (a JSON line, @file, data,
      // dataFile), names the target's line.
      ...(
        [
          [
            'tpl-line.txt',
            'CALL shop.Inventory/Get\n\nCALL shop.Inventory/Get\n{"note": "{{.UUIDD}}"}\n',
            3,
            'unknown template action \\{\\{\\.UUIDD\\}\\} \\(known: ',
          ],
          ['tpl-file.txt', 'CALL shop.Inventory/Get\n@tpl.json\n', 1, 'a template action "\\{\\{" is not closed'],
          [
            'tpl-data.jsonl',
            '{"call": "shop.Inventory/Get"}\n{"call": "shop.Inventory/Get", "data": {"note": "n{{randomString 0}}"}}\n',
            2,
            '\\{\\{randomString 0\\}\\} needs a length from 1 to 65536',
          ],
          ['tpl-datafile.jsonl', '{"call": "shop.Inventory/Get", "dataFile": "tpl.json"}\n', 1, 'a template action "\\{\\{" is not closed'],
          ['tpl-type.txt', 'CALL shop.Inventory/Get\n{"id": "{{randomString 3}}"}\n', 1, 'does not fit shop\\.Req: id: '],
        ] as const
      ).map(([name, text, line, problem]): [string[], RegExp] => {
        file('tpl.json', '{"note": "{{.RequestNumber}"}\n')
        return [
          [...urls, '--proto', SHOP_PROTO, '--targets', file(name, text)],
          new RegExp(`^hedgebench: .*${name.replace('.', '\\.')}:${line}: its message[: ].*${problem}`),
        ]
      }),
      // A target's metadata is sent as given, as -m's: an action in it is refused.
      [
        [...urls, '--proto', SHOP_PROTO, '--targets', file('tpl-meta.txt', 'CALL shop.Inventory/Get\nx-id: {{.UUID}}\n')],
        /^hedgebench: .*tpl-meta\.txt:1: metadata "x-id": template action \{\{\.UUID\}\} is not rendered in metadata/,
      ],
    ]
    for (const [args, expected] of cases) {
      const r = await runMain([...args, '-n', '5', '--no-save'])
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
      assert.match(r.stderr.trim(), expected)
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
    }
    assert.deepEqual(received(from), {}, 'no call reached a server')
  } finally {
    await http.close()
  }
})

test("without --proto, the schema of the mix's services is read by the server's reflection; a method the server lacks is refused before the run", {
  timeout: 60_000,
}, async () => {
  const schema = writeTestSchema()
  const server = await startTestServer({ schema })
  try {
    const mix = file('reflected.txt', `CALL ${CALL}\n{"sku": "a"}\n\nCALL ${CALL}\n# weight: 2\n{"sku": "b", "dims": {"x": 1}}\n`)
    const r = await runMain([server.url, '--targets', mix, '-n', '6', '--warmup', '4', '--mode', 'plain', '--no-save', '-o', 'json'])
    assert.equal(r.code, 0, r.stderr)
    assert.deepEqual([...new Set(server.seen.map((c) => c.request.sku))].sort(), ['a', 'b'])
    // Two targets of one method: named apart in the reports, the second with #2; the pre-run check asked the server for the method once.
    assert.deepEqual(
      (JSON.parse(r.stdout) as RunResult).targets!.map((t) => [t.name, t.weight]),
      [
        [CALL, 1],
        [`${CALL} #2`, 2],
      ],
    )
    // A method the schema has and the server does not serve: the pre-run check names it and where it came from (a
    // method marked idempotent: a write is never called by the check).
    const proto = file(
      'count.proto',
      'syntax = "proto3";\npackage shop.v1;\nmessage R {}\nservice Inventory { rpc Count(R) returns (R) { option idempotency_level = NO_SIDE_EFFECTS; } }\n',
    )
    const missing = file('missing.txt', 'CALL shop.v1.Inventory/Count\n')
    const refused = await runMain([server.url, '--proto', proto, '--targets', missing, '-n', '2', '--no-save'])
    assert.equal(refused.code, 2, refused.stderr)
    assert.match(
      refused.stderr.trim(),
      /^hedgebench: grpc:\/\/127\.0\.0\.1:\d+ has no method shop\.v1\.Inventory\/Count: check the CALL line of --targets and the proto's package$/,
    )
  } finally {
    await server.close()
    schema.remove()
  }
})

test('sweep --targets over gRPC: a methodConfig per hedged method with its own delay, and --verify runs each through grpc-js', {
  timeout: 180_000,
}, async () => {
  const mix = file('sweep.txt', 'CALL shop.Inventory/Get\n{"id": 1}\n\nCALL shop.Inventory/Put\nx-tenant: b\n{"id": 2}\n\nCALL shop.Inventory/Reserve\n')
  const out = join(dir, 'sweep-out')
  const from = mark()
  const r = await runMain(
    ['sweep', ...urls, '--proto', SHOP_PROTO, '--targets', mix, '--hedge-delay', 'p50,p90', '-n', '20', '-c', '4', '--warmup', '60', '--seed', '5'].concat([
      '--emit-for',
      'p90',
      '--verify',
      '--out-dir',
      out,
      '-o',
      'json',
    ]),
    { timeoutMs: 170_000 },
  )
  assert.equal(r.code, 0, r.stderr)
  const sweep = JSON.parse(r.stdout) as {
    targets: Array<{ name: string; settings: Array<{ label: string; delayMs: number }> }>
    run: RunResult
    verifications: Array<{ call: string; label: string; result: RunResult }>
  }
  const p90 = (call: string) => sweep.targets.find((t) => t.name === call)!.settings.find((s) => s.label === 'p90')!.delayMs
  // Reserve was sent once (its proto does not mark it safe): no methodConfig, no route, nothing verified for it.
  assert.deepEqual(
    sweep.run.targets!.map((t) => t.sentOnce ?? false),
    [false, false, true],
  )
  const deployDir = join(out, readdirSync(out).find((n) => n.endsWith('-sweep-deploy'))!)
  assert.deepEqual(readdirSync(deployDir).sort(), ['envoy-route.yaml', 'grpc-service-config.json', 'grpc-service-config.notes.txt'])
  const config = JSON.parse(readFileSync(join(deployDir, 'grpc-service-config.json'), 'utf8')) as {
    methodConfig: Array<{ name: Array<{ service: string; method: string }>; hedgingPolicy: { hedgingDelay: string } }>
  }
  assert.deepEqual(
    config.methodConfig.map((m) => [m.name, m.hedgingPolicy.hedgingDelay]),
    [
      [[{ service: 'shop.Inventory', method: 'Get' }], protoDuration(p90('shop.Inventory/Get'))],
      [[{ service: 'shop.Inventory', method: 'Put' }], protoDuration(p90('shop.Inventory/Put'))],
    ],
  )
  const routes = readFileSync(join(deployDir, 'envoy-route.yaml'), 'utf8')
  assert.deepEqual(
    [...routes.matchAll(/path: "([^"]+)"/g)].map((m) => m[1]),
    ['/shop.Inventory/Get', '/shop.Inventory/Put'],
  )
  assert.doesNotMatch(routes, /:method/, 'a gRPC route matches its path alone')
  // --verify: each method alone, at its own setting, then through grpc-js with the one service config (its own methodConfig).
  assert.deepEqual(
    sweep.verifications.map((v) => [v.call, v.label, v.result.config.grpc?.call]),
    [
      ['shop.Inventory/Get', 'p90', 'shop.Inventory/Get'],
      ['shop.Inventory/Put', 'p90', 'shop.Inventory/Put'],
    ],
  )
  for (const v of sweep.verifications) {
    // The service config's duration is to the microsecond: grpc-js was asked for the method's own delay within that.
    assert.ok(
      Math.abs(v.result.grpcClient!.asked.hedgingDelayMs - p90(v.call)) <= 0.0005 + 1e-9,
      `${v.call}: ${v.result.grpcClient!.asked.hedgingDelayMs} vs ${p90(v.call)}`,
    )
    assert.equal(v.result.grpcClient!.requests, 20)
  }
  // The verifying runs sent Put with its target's metadata.
  const puts = servers.flatMap((s, i) => s.calls.slice(from[i])).filter((c) => c.method === 'Put')
  assert.ok(puts.every((c) => c.metadata.get('x-tenant')[0] === 'b'))
  assert.match(r.stderr, /^Verified shop\.Inventory\/Put p90 through grpc-js/m)
})

test('--workers 2: a mix of methods runs on worker threads too, each method its attempts as the servers count them', { timeout: 120_000 }, async () => {
  const mix = file('workers.jsonl', '{"call": "shop.Inventory/Put", "data": {"id": 3}}\n{"call": "shop.Inventory/Reserve", "weight": 2}\n')
  const from = mark()
  const result = await runMix(['--targets', mix, '-n', '16', '-c', '4', '--warmup', '16', '--workers', '2', '--seed', '6'])
  assert.deepEqual(
    result.targets!.map((t) => [t.name, t.sentOnce ?? false]),
    [
      ['shop.Inventory/Put', false],
      ['shop.Inventory/Reserve', true],
    ],
  )
  assert.deepEqual(Object.fromEntries(result.targets!.map((t) => [t.path.split('/')[2], attempts(t)])), received(from))
})

// Per-call data in a mix: a message holding template actions, rendered per logical call as -d's is.

interface Sent {
  /** The call's number as the server decoded it (proto3 leaves a 0 out: 0). */
  id: number
  note: string
  previousAttempts: number
  hex: string
}

/** What the servers received of each method during `fn`, decoded. */
async function receivedDuring(fn: () => Promise<RunResult>): Promise<{ result: RunResult; by: Record<string, Sent[]> }> {
  const from = servers.map((s) => s.calls.length)
  const result = await fn()
  const by: Record<string, Sent[]> = {}
  const decoded = (c: SeenCall): Sent => {
    const m = Req.toObject(Req.decode(c.request), { longs: Number, defaults: true }) as { id: number; note: string }
    return { id: m.id, note: m.note, previousAttempts: c.previousAttempts, hex: c.request.toString('hex') }
  }
  for (const [i, s] of servers.entries()) for (const c of s.calls.slice(from[i])) (by[c.method] ??= []).push(decoded(c))
  return { result, by }
}

/** The target's logical calls over every phase of the run (the warm-up's included: they are numbered too). */
function callsOf(result: RunResult, call: string): number {
  const target = result.targets!.find((t) => t.name === call)!
  return Object.values(target.phases).reduce((sum, p) => sum + (p?.requests ?? 0), 0)
}

/** Every hedge carries its original's bytes exactly: one distinct message per logical call, whatever its attempts. */
function assertHedgesSendTheirOriginal(sent: Sent[], what: string): void {
  const originals = new Map(sent.filter((c) => c.previousAttempts === 0).map((c) => [c.id, c.hex]))
  for (const h of sent.filter((c) => c.previousAttempts > 0)) assert.equal(h.hex, originals.get(h.id), `${what}: the hedge of call ${h.id} sends its bytes`)
}

const MIX = [
  'CALL shop.Inventory/Get',
  '# hedge-delay: 5ms',
  // An action where JSON has no place for one: the text is rendered first, then read as JSON, as -d's is.
  '{"id": {{.RequestNumber}}, "note": "{{.UUID}}"}',
  '',
  'CALL shop.Inventory/Put',
  '# hedge-delay: 5ms',
  '@put.json',
  '',
  '# no action: encoded once, the same bytes on every call',
  'CALL shop.Inventory/Reserve',
  '{"id": 9, "note": "r"}',
  '',
].join('\n')

test('a target message with template actions is rendered per call: its own numbering, distinct UUIDs, one message for every attempt of a call', {
  timeout: 120_000,
}, async () => {
  file('put.json', '{"id": "{{.RequestNumber}}", "note": "p-{{randomString 12}}"}\n')
  const mix = file('tpl-mix.txt', MIX)
  const args = ['--targets', mix, '-n', '24', '-c', '2', '--warmup', '9', '--mode', 'hedged', '--seed', '4']
  const { result, by } = await receivedDuring(() => runMix(args))
  for (const call of ['Get', 'Put']) {
    const sent = by[call]!
    const calls = callsOf(result, `shop.Inventory/${call}`)
    const originals = sent.filter((c) => c.previousAttempts === 0)
    assert.deepEqual(
      originals.map((c) => c.id).sort((a, b) => a - b),
      [...Array(calls).keys()],
      `${call}: its calls numbered 0..${calls - 1} across the warm-up and the hedged phase, once each`,
    )
    assert.equal(new Set(originals.map((c) => c.note)).size, calls, `${call}: a value of its own per call`)
    assertHedgesSendTheirOriginal(sent, call)
  }
  assert.ok(
    by.Get!.every((c) => UUID.test(c.note)),
    'Get: version 4 UUIDs',
  )
  assert.ok(
    by.Put!.every((c) => /^p-[A-Za-z0-9]{12}$/.test(c.note)),
    'Put: 12 letters and digits',
  )
  // Get's server holds every call 100 ms: each was hedged at 5 ms, both attempts with the one message.
  const getHedges = by.Get!.filter((c) => c.previousAttempts > 0)
  assert.ok(getHedges.length > 0, 'Get was hedged')
  // Reserve has no action: one message, encoded once.
  assert.deepEqual(new Set(by.Reserve!.map((c) => `${c.id} ${c.note}`)), new Set(['9 r']))
  // The run's seed replays every target's messages: call k of a target is the same bytes again. (How many calls each
  // target drew may differ: the draws share the run's randomness with the hedging, whose use follows the timing.)
  const again = await receivedDuring(() => runMix(args))
  for (const call of ['Get', 'Put']) {
    const first = new Map(by[call]!.map((c) => [c.id, c.hex]))
    const second = again.by[call]!.filter((c) => c.id < first.size)
    assert.ok(second.length > 0, `${call}: sent again`)
    for (const c of second) assert.equal(c.hex, first.get(c.id), `${call} call ${c.id}: the same seed, the same message`)
  }
})

test('--workers 2: each thread numbers a target calls apart, no number or UUID sent twice; JSON lines render data and dataFile', {
  timeout: 120_000,
}, async () => {
  file('put-data.json', '{"id": {{.RequestNumber}}, "note": "{{.UUID}}"}\n')
  const mix = file(
    'tpl-workers.jsonl',
    [
      '{"call": "shop.Inventory/Get", "data": {"id": "{{.RequestNumber}}", "note": "{{.UUID}}"}, "hedgeDelay": 5}',
      '{"call": "shop.Inventory/Put", "dataFile": "put-data.json", "weight": 2}',
    ].join('\n'),
  )
  const { result, by } = await receivedDuring(() => runMix(['--targets', mix, '-n', '24', '-c', '4', '--warmup', '8', '--workers', '2', '--seed', '6']))
  for (const call of ['Get', 'Put']) {
    const sent = by[call]!
    const calls = callsOf(result, `shop.Inventory/${call}`)
    const originals = sent.filter((c) => c.previousAttempts === 0)
    assert.equal(originals.length, calls, `${call}: every logical call reached a server once as an original`)
    assert.equal(new Set(originals.map((c) => c.id)).size, calls, `${call}: no number sent twice`)
    assert.equal(new Set(originals.map((c) => c.note)).size, calls, `${call}: no UUID sent twice`)
    assert.ok(originals.every((c) => UUID.test(c.note)))
    assertHedgesSendTheirOriginal(sent, call)
  }
})
