/**
 * The --hedge-by grpc-js phase sends the same request as the other phases:
 * its calls carry --deadline (grpc-timeout, as the server sees it) and
 * --idempotency-key (one key per call, on each of grpc-js's attempts); it
 * reports the generator's own figures; the run's config says who hedged,
 * with which service config, proto and call; a caveat names a cause only
 * when the run saw it. Against real grpc-js servers on 127.0.0.1.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'
import { serviceConfigCaveats } from '../src/run/grpc-js-caveats.js'
import type { ServiceConfig } from '../src/protocol/grpc-service-config.js'
import type { GrpcClientResult, RunResult } from '../src/results/run-result.js'
import { renderCsvSummary } from '../src/report/csv.js'
import { compareRuns } from '../src/report/compare.js'
import { renderJson } from '../src/results/result-json.js'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SHOP_PROTO, startGrpcServer, type GrpcTestServer, type SeenCall } from './helpers/grpc-server.js'
import { parseCsv } from './helpers/csv.js'
import { runMain } from './helpers/main-cases.js'
import { spawnTarget } from '../src/sim/target.js'
import { SIM_PROTO, SIM_SERVICE, SIM_WORK_CALL } from '../src/sim/grpc-replica.js'

const servers: GrpcTestServer[] = []
let result: RunResult
// Every call answers after 30 ms without sending headers first: grpc-js hedges each one at 5 ms.
const config: ServiceConfig = {
  methodConfig: [{ name: [{ service: 'shop.Inventory' }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.005s', nonFatalStatusCodes: ['UNAVAILABLE'] } }],
}
const N = 8

before(async () => {
  for (let i = 0; i < 2; i++) servers.push(await startGrpcServer(() => ({ delayMs: 30 })))
  result = await run({
    urls: servers.map((s) => s.url),
    grpc: { proto: SHOP_PROTO, call: 'shop.Inventory/Reserve', hedgeBy: 'grpc-js', serviceConfig: config },
    concurrency: 2,
    requests: N,
    warmup: 0,
    mode: 'hedged',
    timeoutMs: 20_000,
    hedge: { delay: 5, budgetPct: null as unknown as number, deadlineMs: 2000, idempotencyKey: true },
  })
})
after(() => servers.forEach((s) => s.close()))

const byGrpcJs = (c: SeenCall) => String(c.metadata.get('user-agent')[0] ?? '').startsWith('grpc-node-js')
const grpcJsCalls = () => servers.flatMap((s) => s.calls).filter(byGrpcJs)

test("grpc-js calls carry the run's --deadline (grpc-timeout), not -t", () => {
  const calls = grpcJsCalls()
  assert.ok(calls.length >= N, `${calls.length} grpc-js calls`)
  for (const c of calls) assert.ok(c.deadlineLeftMs !== null && c.deadlineLeftMs > 0 && c.deadlineLeftMs <= 2000, `deadline left ${c.deadlineLeftMs} ms`)
  assert.equal(result.grpcClient!.deadlineMs, 2000)
  assert.match(renderText(result), /Deadline per call: +2\.0+ s \(grpc-timeout\)/)
})

test('grpc-js calls carry --idempotency-key: one per call, the same on its hedge', () => {
  const calls = grpcJsCalls()
  const key = (c: SeenCall) => String(c.metadata.get('idempotency-key')[0] ?? '')
  const originals = calls.filter((c) => c.previousAttempts === 0)
  const hedges = calls.filter((c) => c.previousAttempts > 0)
  assert.equal(originals.length, N)
  assert.equal(new Set(originals.map(key)).size, N)
  assert.ok(originals.every((c) => key(c) !== ''))
  assert.ok(hedges.length > 0, 'grpc-js hedged')
  for (const h of hedges)
    assert.ok(
      originals.some((o) => key(o) === key(h)),
      `hedge key ${key(h)}`,
    )
})

test("the grpc-js phase has the generator's own figures, in the result and the report", () => {
  const g = result.grpcClient!.generator!
  assert.ok(g, 'generator figures')
  assert.equal(g.cores, 1)
  assert.ok(typeof g.eventLoopDelayMs.samples === 'number' && g.cpuPct >= 0)
  assert.match(renderText(result), /=== hedged by grpc-js[\s\S]*Generator: +event-loop delay /)
})

test('the config records the call, the proto, who hedged and the service config', () => {
  assert.deepEqual(result.config.grpc, { call: 'shop.Inventory/Reserve', schema: SHOP_PROTO, hedgeBy: 'grpc-js', serviceConfig: JSON.stringify(config) })
  assert.equal(result.config.hedge.allowedBy, '--idempotency-key')
})

test('a caveat names a cause only when the run saw it', () => {
  // These servers never send headers before their answer: no call was committed by its headers.
  assert.equal(result.grpcClient!.committedByHeaders, 0)
  assert.ok(!result.grpcClient!.caveats.some((c) => /headers before/.test(c)), result.grpcClient!.caveats.join(' | '))
  const base = {
    ...result.grpcClient!,
    asked: { ...result.grpcClient!.asked, retryThrottling: null },
    callsOverDelay: 5,
    hedgesSent: 1,
  } satisfies GrpcClientResult
  assert.deepEqual(
    serviceConfigCaveats({ ...base, committedByHeaders: 0 }).filter((c) => /calls took longer/.test(c)),
    ['5 calls took longer than hedgingDelay but only 1 hedges were sent'],
  )
  assert.match(
    serviceConfigCaveats({ ...base, committedByHeaders: 4 }).join(' | '),
    /4 of them had their response headers before hedgingDelay.*headers before it stalls/,
  )
})

test('the grpc-js calls are a row of the CSV summary, with their replicas', () => {
  const [header, ...rows] = parseCsv(renderCsvSummary(result))
  const col = (row: string[], name: string) => row[header!.indexOf(name)]
  const phase = rows.find((r) => col(r, 'scope') === 'phase' && col(r, 'phase') === 'grpc-js')!
  const g = result.grpcClient!
  assert.ok(phase, 'a grpc-js phase row')
  assert.equal(col(phase, 'requests'), String(N))
  assert.equal(col(phase, 'attempts'), String(g.attempts))
  assert.equal(col(phase, 'hedges_sent'), String(g.hedgesSent))
  assert.equal(col(phase, 'p99_ms'), g.latencyMs.p99.toFixed(3))
  assert.equal(col(phase, 'status_codes'), `0 OK:${N}`)
  assert.equal(col(phase, 'gc_count'), String(g.generator!.gc!.count))
  const replicas = rows.filter((r) => col(r, 'scope') === 'replica' && col(r, 'phase') === 'grpc-js')
  assert.deepEqual(
    replicas.map((r) => Number(col(r, 'attempts'))),
    g.perReplica.map((r) => r.attempts),
  )
})

test('compare --phase grpc-js compares the grpc-js calls of saved runs, and tells runs with other service configs apart', async () => {
  const other: RunResult = { ...result, config: { ...result.config, grpc: { ...result.config.grpc!, serviceConfig: '{"methodConfig":[]}' } } }
  const c = compareRuns(
    [
      { name: 'a', result },
      { name: 'b', result: other },
    ],
    { phase: 'grpc-js' },
  )
  assert.deepEqual(
    c.runs.map((r) => r.phase),
    ['grpc-js', 'grpc-js'],
  )
  assert.ok(
    c.metrics.some((m) => m.metric === 'extra_load'),
    'grpc-js hedged: extra load is compared',
  )
  assert.ok(
    c.configDifferences.some((d) => d.key === 'grpc.serviceConfig'),
    JSON.stringify(c.configDifferences),
  )
  const dir = mkdtempSync(join(tmpdir(), 'hedgebench-grpcjs-compare-'))
  writeFileSync(join(dir, 'a.json'), renderJson(result))
  writeFileSync(join(dir, 'b.json'), renderJson(other))
  const cli = await runMain(['compare', join(dir, 'a.json'), join(dir, 'b.json'), '--phase', 'grpc-js'])
  assert.equal(cli.code, 0, cli.stderr)
  assert.match(cli.stdout, /grpc-js/)
  const plainRun: RunResult = { ...result, grpcClient: undefined }
  assert.throws(
    () =>
      compareRuns(
        [
          { name: 'a', result },
          { name: 'p', result: plainRun },
        ],
        { phase: 'grpc-js' },
      ),
    /p has no grpc-js calls \(--hedge-by grpc-js\) phase to compare/,
  )
})

test('the simulated gRPC replicas say what work began: the extra work of each phase is counted from it; grpc-js warms up first, outside every count', async (t) => {
  const target = await spawnTarget({
    profile: { name: 'grpc-quick', description: 'fast', replicas: 2, seed: 3, file: null, model: { base: { type: 'uniform', min: 20, max: 30 }, stalls: [] } },
    grpc: true,
  })
  t.after(() => target.close())
  const sim: ServiceConfig = { methodConfig: [{ name: [{ service: SIM_SERVICE }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.005s' } }] }
  const r = await run({
    urls: target.urls,
    grpc: { proto: SIM_PROTO, call: SIM_WORK_CALL, hedgeBy: 'grpc-js', serviceConfig: sim },
    concurrency: 2,
    requests: 10,
    warmup: 4,
    mode: 'hedged',
    hedge: { delay: 5, budgetPct: null as unknown as number },
    serverStatsUrl: target.statsUrl,
  })
  for (const s of [r.phases.hedged!.server!, r.grpcClient!.server!]) {
    assert.ok(s.started !== undefined, 'the replicas report started')
    // Nothing is rejected here: every call that reached a handler began its work.
    assert.equal(s.started, s.received)
  }
  const g = r.grpcClient!
  assert.equal(g.warmup, 4)
  assert.equal(g.requests, 10)
  // The warm-up's calls are in neither count: the client's attempts (channelz, since the warm-up) are the servers' calls.
  assert.equal(g.server!.received, g.attempts)
  assert.equal(
    g.attempts,
    g.perReplica.reduce((n, p) => n + p.attempts, 0),
  )
  const text = renderText(r)
  assert.match(text, /Did: +10 calls, \d+ attempts .*, after 4 warm-up calls \(excluded\)/)
  assert.match(text, new RegExp(`${r.phases.hedged!.server!.started} copies began executing for 10 requests: \\+\\d+\\.\\d% extra work`))
  assert.match(text, new RegExp(`Server work: +${r.grpcClient!.server!.started} calls began executing for 10 calls: \\+\\d+\\.\\d% extra work`))
})
