/**
 * The saturation gate hears gRPC overload wherever it arrives: in the one
 * HEADERS frame of a trailers-only answer (what grpc-js and C-core send for
 * an immediate error) and in real trailers. RESOURCE_EXHAUSTED holds every
 * hedge (suppressed.overload); grpc-retry-pushback-ms holds hedges to the
 * replica that sent it (suppressed.pushback), a negative one for the rest of
 * the phase (gRPC A6). A replica failing with UNAVAILABLE or
 * DEADLINE_EXCEEDED counts towards the gate's error rate as an HTTP 503 does
 * (suppressed.errorRate). Against real grpc-js servers on 127.0.0.1.
 */
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'
import { renderCsvSummary } from '../src/report/csv.js'
import { parseCsv } from './helpers/csv.js'
import { grpcOverloadSignal } from '../src/protocol/grpc-status.js'
import { startGrpcServer, SHOP_PROTO, type Answer, type GrpcTestServer } from './helpers/grpc-server.js'
import { startServer, type CountingServer } from './helpers/servers.js'
import type { RunOptions } from '../src/run/run-options.js'

const servers: GrpcTestServer[] = []
const httpServers: CountingServer[] = []
after(async () => {
  servers.forEach((s) => s.close())
  await Promise.all(httpServers.map((s) => s.close()))
})

const N = 30
const RESOURCE_EXHAUSTED = 8
const UNAVAILABLE = 14

/** Replica 0 answers every call with `shed`; replicas 1 and 2 answer OK after 30 ms, so each of their calls wants a hedge at 5 ms. */
async function replicas(shed: Answer): Promise<GrpcTestServer[]> {
  const list = [await startGrpcServer(() => shed), await startGrpcServer(() => ({ delayMs: 30 })), await startGrpcServer(() => ({ delayMs: 30 }))]
  servers.push(...list)
  return list
}

async function hedgedRun(list: GrpcTestServer[]) {
  // No budget, no error-rate gate and no ejection: only the overload signals hold hedges back.
  return run({
    eject: false,
    urls: list.map((s) => s.url),
    grpc: { proto: SHOP_PROTO, call: 'shop.Inventory/Get' },
    concurrency: 2,
    requests: N,
    warmup: 0,
    mode: 'hedged',
    seed: 7,
    hedge: { delay: 5, budgetPct: null as unknown as number },
    saturation: { maxErrorRate: null },
  })
}

const hedgesTo = (s: GrpcTestServer) => s.calls.filter((c) => c.previousAttempts > 0).length

for (const headersFirst of [false, true]) {
  test(`RESOURCE_EXHAUSTED in ${headersFirst ? 'real trailers' : 'a trailers-only answer'} holds every hedge back, counted as overload`, async () => {
    // Headers first: they go out, then the status follows in trailers 5 ms later.
    // A 10 s pushback: the gate stays closed for the whole phase once it has heard the first one.
    const list = await replicas({
      headersFirst,
      ...(headersFirst ? { delayMs: 5 } : {}),
      error: { code: RESOURCE_EXHAUSTED, details: 'shedding', metadata: { 'grpc-retry-pushback-ms': '10000' } },
    })
    const result = await hedgedRun(list)
    const phase = result.phases.hedged!
    const h = phase.hedging!
    assert.ok((phase.statusCodes[String(RESOURCE_EXHAUSTED)] ?? 0) > 0, JSON.stringify(phase.statusCodes))
    // About 20 calls go to the slow replicas and want a hedge; only those whose timer fired before the
    // first RESOURCE_EXHAUSTED was heard (the 2 in flight at most) can have sent one.
    assert.ok(h.hedgesSent <= 2, `hedges sent ${h.hedgesSent}`)
    assert.ok(h.suppressed!.overload >= 10, JSON.stringify(h.suppressed))
    assert.equal(h.suppressed!.pushback, 0)
    assert.match(renderText(result), /Saturation suppressed: +overload \d+, error rate 0, target busy 0/)
  })
}

for (const pushback of ['10000', '-1']) {
  test(`UNAVAILABLE with grpc-retry-pushback-ms ${pushback} holds hedges to that replica, counted as pushback`, async () => {
    const list = await replicas({ error: { code: UNAVAILABLE, details: 'simulated unavailable', metadata: { 'grpc-retry-pushback-ms': pushback } } })
    const result = await hedgedRun(list)
    const h = result.phases.hedged!.hedging!
    // A hedge of a call on replica 1 goes to replica 0 or 2 (the picker's choice); to 0 it is held
    // back. Before the first pushback was heard, at most the 2 calls in flight can have hedged to it.
    assert.ok(hedgesTo(list[0]!) <= 2, `hedges that reached the replica that pushed back: ${hedgesTo(list[0]!)}`)
    assert.ok(h.suppressed!.pushback! >= 3, JSON.stringify(h.suppressed))
    assert.equal(h.suppressed!.overload, 0, 'UNAVAILABLE is no overload: other replicas are still hedged to')
    assert.ok(hedgesTo(list[1]!) + hedgesTo(list[2]!) > 0, 'hedges still went to the replicas that did not push back')
    assert.match(renderText(result), /Saturation suppressed: +overload 0, error rate 0, target busy 0, pushback \d+/)
    const [header, ...rows] = parseCsv(renderCsvSummary(result))
    const row = rows.find((r) => r[header!.indexOf('scope')] === 'phase' && r[header!.indexOf('phase')] === 'hedged')!
    assert.equal(row[header!.indexOf('suppressed_pushback')], String(h.suppressed!.pushback))
  })
}

const DEADLINE_EXCEEDED = 4

/** The first replica fails every call at once with `code`; the other answers in 20 ms, so each of its calls wants a speculative hedge (to the failing one) at 5 ms. */
async function failingGrpc(code: number): Promise<RunOptions> {
  const flaky = await startGrpcServer(() => ({ error: { code, details: 'failing' } }))
  const other = await startGrpcServer(() => ({ delayMs: 20 }))
  servers.push(flaky, other)
  return { urls: [flaky.url, other.url], grpc: { proto: SHOP_PROTO, call: 'shop.Inventory/Get' } }
}

async function failingHttp(status: number): Promise<RunOptions> {
  const flaky = await startServer({ status })
  const other = await startServer({ delayMs: 20 })
  httpServers.push(flaky, other)
  return { urls: [flaky.url, other.url] }
}

for (const [name, target] of [
  ['HTTP 503', () => failingHttp(503)],
  ['gRPC UNAVAILABLE', () => failingGrpc(UNAVAILABLE)],
  ['gRPC DEADLINE_EXCEEDED', () => failingGrpc(DEADLINE_EXCEEDED)],
] as const) {
  test(`a replica failing with ${name} trips the gate's error rate: speculative hedges are held back, counted as errorRate`, async () => {
    // The failures are delivered (no non-fatal status: no failover hedge), so about half of the
    // outcomes fail, above the 25 % limit from the 20th outcome on. No budget holds hedges back, and
    // no ejection takes the failing replica out of the rotation.
    const result = await run({
      ...(await target()),
      concurrency: 2,
      requests: 60,
      warmup: 0,
      mode: 'hedged',
      seed: 3,
      eject: false,
      hedge: { delay: 5, budgetPct: null as unknown as number, nonFatalStatus: [] },
    })
    const h = result.phases.hedged!.hedging!
    assert.ok(h.suppressed!.errorRate > 0, JSON.stringify(h.suppressed))
    assert.equal(h.suppressed!.overload, 0, 'a bare failure is no overload signal')
    assert.match(renderText(result), /Saturation suppressed: +overload 0, error rate [1-9]\d*/)
  })
}

test('a gRPC replica failing with UNAVAILABLE is ejected, as an HTTP one failing with 503 is, named by its code', async () => {
  for (const [name, target] of [
    ['HTTP/1.1 503', () => failingHttp(503)],
    ['gRPC UNAVAILABLE', () => failingGrpc(UNAVAILABLE)],
  ] as const) {
    // The failures are delivered (no non-fatal status): five in a row at the failing replica eject it.
    const result = await run({ ...(await target()), concurrency: 2, requests: 40, warmup: 0, mode: 'plain', seed: 3, hedge: { nonFatalStatus: [] } })
    const ejections = result.phases.plain!.ejections ?? []
    assert.ok(ejections.length > 0, `${name}: not ejected`)
    assert.equal(ejections[0]!.cause, `5 failures in a row (last: ${name})`)
  }
})

test('what a gRPC status and pushback ask of the gate (gRPC A6)', () => {
  const lookup = (h: Record<string, string>) => (name: string) => h[name]
  assert.equal(grpcOverloadSignal(lookup({ 'grpc-status': '0', 'grpc-retry-pushback-ms': '5' })), null, 'an OK call asks nothing')
  assert.equal(grpcOverloadSignal(lookup({ 'grpc-status': '14' })), null, 'UNAVAILABLE alone is a failure, not a request to back off')
  assert.deepEqual(grpcOverloadSignal(lookup({ 'grpc-status': '8' })), { overloadMs: null })
  assert.deepEqual(grpcOverloadSignal(lookup({ 'grpc-status': '8', 'grpc-retry-pushback-ms': '250' })), { overloadMs: 250 })
  assert.deepEqual(grpcOverloadSignal(lookup({ 'grpc-status': '14', 'grpc-retry-pushback-ms': '500' })), { pushbackMs: 500 })
  assert.deepEqual(grpcOverloadSignal(lookup({ 'grpc-status': '14', 'grpc-retry-pushback-ms': 'soon' })), { pushbackMs: -1 }, 'unreadable: as a negative one')
})
