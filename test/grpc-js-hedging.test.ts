/**
 * --hedge-by grpc-js: the hedged calls through a real grpc-js client with a
 * service config, against simulated gRPC replicas (a child process) and a
 * grpc-js server that sends headers before it stalls, all on 127.0.0.1.
 * The client's attempts (channelz) must equal the server's calls exactly,
 * and each caveat must show when its cause happened.
 */
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { Metadata, Server, ServerCredentials } from '@grpc/grpc-js'
import type { sendUnaryData, ServerUnaryCall, ServiceDefinition } from '@grpc/grpc-js'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'
import { spawnTarget } from '../src/sim/target.js'
import type { Target } from '../src/sim/target.js'
import { SIM_PROTO, SIM_SERVICE, SIM_WORK_CALL } from '../src/sim/grpc-replica.js'
import type { Profile } from '../src/sim/profile.js'
import type { ServiceConfig } from '../src/protocol/grpc-service-config.js'
import { watchFreezes } from './helpers/freeze-watch.js'

const STALL_MS = 200
const N = 1000
const targets: Target[] = []
const servers: Server[] = []
after(async () => {
  for (const s of servers) s.forceShutdown()
  await Promise.all(targets.map((t) => t.close()))
})

const SEED_PROFILE: Profile = {
  name: 'grpc-seed',
  description: 'the Raspberry Pi experiment scaled down',
  replicas: 3,
  seed: 4242,
  file: null,
  model: { base: { type: 'uniform', min: 5, max: 15 }, stalls: [{ type: 'independent', probability: 0.01, ms: STALL_MS }] },
}

function hedgingConfig(extra: Partial<ServiceConfig> = {}): ServiceConfig {
  return {
    methodConfig: [{ name: [{ service: SIM_SERVICE }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: '0.040s', nonFatalStatusCodes: ['UNAVAILABLE'] } }],
    ...extra,
  }
}

const call = { call: SIM_WORK_CALL, proto: SIM_PROTO, hedgeBy: 'grpc-js' as const }

test('grpc-js hedges with its own hedgingPolicy: its attempts equal the server calls, stalls are rescued, and the caveats that apply are shown', async (t) => {
  // grpc-js gives no per-call timing to set against client freezes, so each
  // freeze is allowed to spoil every call in flight (4): one of 25 ms+ can push
  // calls past the 40 ms delay (a hedge each), one of 130 ms+ past --slow 150 ms.
  const freezes = watchFreezes(25)
  t.after(() => freezes.stop())
  const longerThan = (ms: number) => freezes.windows.filter((w) => w.to - w.from > ms).length
  // 2-6 ms answers instead of the seed's 5-15 ms, scaled down as the stalls
  // are: still far below the 40 ms hedgingDelay and the 200 ms stall, in
  // under half the time (the base latency is most of the phase at 4 in flight).
  const target = await spawnTarget({ profile: { ...SEED_PROFILE, model: { ...SEED_PROFILE.model, base: { type: 'uniform', min: 2, max: 6 } } }, grpc: true })
  targets.push(target)
  const options = {
    urls: target.urls,
    grpc: { ...call, serviceConfig: hedgingConfig({ retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } }) },
    concurrency: 4,
    requests: N,
    warmup: 0,
    slowMs: 150,
    serverStatsUrl: target.statsUrl,
  }
  const plainOnly = await run({ ...options, requests: 20, mode: 'plain' })
  assert.equal(plainOnly.grpcClient, undefined, '--mode plain runs no hedged calls, by grpc-js either')
  const both = await run({ ...options, mode: 'hedged', hedge: { delay: 40 } })
  const g = both.grpcClient!
  assert.ok(g, 'the grpc-js phase ran')
  assert.equal(g.requests, N)
  assert.equal(g.ok, N)
  assert.deepEqual(g.asked, {
    maxAttempts: 2,
    hedgingDelayMs: 40,
    nonFatalStatusCodes: ['UNAVAILABLE'],
    retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
    loadBalancing: 'round_robin',
  })
  assert.equal(g.perReplica.length, 3, 'round_robin spread the calls over the 3 replicas')
  // Exact: what channelz says the client started is what the servers received.
  assert.ok(g.server, 'the cross-check ran')
  assert.equal(g.server.received, g.attempts)
  assert.equal(g.attempts, g.requests + g.hedgesSent)
  // Hedges carry grpc-previous-rpc-attempts: 1, and the server counted each.
  assert.equal(g.server.hedgeHeader, g.hedgesSent)
  // Stalls ~ Poisson(10) over N calls, each hedged after 40 ms: >= 3 hedges (P < 0.3 % otherwise). A delay
  // ignored hedges every call (N); the bound is a quarter of that, fixed: a freeze of the client hedges at most the
  // 4 calls in flight, so only some 60 freezes over 40 ms could reach it.
  assert.ok(g.hedgesSent >= 3 && g.hedgesSent < N / 4, `hedges ${g.hedgesSent}, freezes over 25 ms ${longerThan(25)}`)
  assert.ok((g.winsByAttempt['1'] ?? 0) >= 1, `wins ${JSON.stringify(g.winsByAttempt)}`)
  // Slow only if original and hedge both stall: Poisson(0.1), P(2 or more) < 0.5 %; one client freeze over 130 ms
  // can add the 4 calls in flight. Unhedged, the stalls are Poisson(10) slow calls: P(<= 5) = 6.7 %, so a broken
  // hedge fails this 93 % of the time; a fixed bound, not one that grows with each freeze seen.
  assert.ok(g.slow.count <= 5, `slow ${g.slow.count}, freezes over 130 ms ${longerThan(130)}`)
  assert.ok(
    g.caveats.some((c) => /retryThrottling .* not applied to these \d+ hedges/.test(c)),
    g.caveats.join(' | '),
  )
  assert.ok(g.caveats.some((c) => /no previous-host exclusion/.test(c)))
  assert.ok(!g.caveats.some((c) => /no hedge was sent/.test(c)))
  const text = renderText(both)
  assert.match(text, /=== hedged by grpc-js/)
  assert.match(text, new RegExp(`${g.attempts} attempts \\(channelz calls_started\\), ${g.hedgesSent} hedges`))
  assert.match(text, /server received \d+ vs client attempts \d+: MATCH/)
})

test('a service config without a hedgingPolicy: "no hedge was sent", not an empty table', async () => {
  const target = await spawnTarget({ profile: SEED_PROFILE, grpc: true, replicas: 2 })
  targets.push(target)
  const result = await run({
    urls: target.urls,
    grpc: { ...call, serviceConfig: { methodConfig: [] } },
    concurrency: 2,
    requests: 40,
    warmup: 0,
    mode: 'hedged',
    hedge: { delay: 40 },
    serverStatsUrl: target.statsUrl,
  })
  const g = result.grpcClient!
  assert.equal(g.hedgesSent, 0)
  assert.equal(g.attempts, 40)
  assert.equal(g.server!.received, 40)
  assert.deepEqual(g.caveats, ['no hedge was sent: the service config has no hedgingPolicy for this method'])
  assert.match(renderText(result), /Answered by: +the original in every call \(no hedge was sent\)/)
})

test('no call over hedgingDelay: nothing to hedge, said as information, not as a caveat', async () => {
  // Answers take 5-15 ms and hedgingDelay is 1 s: only a client freeze of
  // about a second could put a call over it, which this test should not hide.
  const quick: Profile = { ...SEED_PROFILE, name: 'grpc-quick', model: { base: { type: 'uniform', min: 5, max: 15 }, stalls: [] } }
  const target = await spawnTarget({ profile: quick, grpc: true, replicas: 2 })
  targets.push(target)
  const config: ServiceConfig = {
    methodConfig: [{ name: [{ service: SIM_SERVICE }], hedgingPolicy: { maxAttempts: 2, hedgingDelay: '1s', nonFatalStatusCodes: ['UNAVAILABLE'] } }],
  }
  const result = await run({
    urls: target.urls,
    grpc: { ...call, serviceConfig: config },
    concurrency: 2,
    requests: 40,
    warmup: 0,
    mode: 'hedged',
    hedge: { delay: 40 },
  })
  const g = result.grpcClient!
  assert.equal(g.callsOverDelay, 0)
  assert.equal(g.hedgesSent, 0)
  assert.deepEqual(g.caveats, [])
  const text = renderText(result)
  assert.match(text, /Calls over the delay \+ 20 ms: +0 \(no call took longer than hedgingDelay 1\.0+ s \+ 20 ms: nothing to hedge\)/)
  assert.doesNotMatch(text, /Caveats:/)
})

/** The bundled service's Work, answered by a server that sends its headers first and then stalls every 2nd call. */
const stalledAnswers = { count: 0 }

async function headersFirstServer(): Promise<string> {
  const identity = (b: Buffer) => b
  const work = {
    path: `/${SIM_SERVICE}/Work`,
    requestStream: false,
    responseStream: false,
    requestSerialize: identity,
    requestDeserialize: identity,
    responseSerialize: identity,
    responseDeserialize: identity,
  }
  const server = new Server()
  servers.push(server)
  let n = 0
  server.addService({ Work: work } as ServiceDefinition, {
    Work: (c: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
      c.sendMetadata(new Metadata())
      const stall = n++ % 2 === 0
      let cancelled = false
      c.on('cancelled', () => (cancelled = true))
      setTimeout(
        () => {
          // Only grpc-js's calls (the run's hedgebench phase hits these servers first).
          if (stall && !cancelled && String(c.metadata.get('user-agent')[0] ?? '').startsWith('grpc-node-js')) stalledAnswers.count++
          callback(null, Buffer.alloc(0))
        },
        stall ? STALL_MS : 2,
      )
    },
  })
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  )
  return `grpc://127.0.0.1:${port}`
}

test('a server that sends headers before it stalls is never hedged by grpc-js, and the report says why', async (t) => {
  // Client and server share this process: a freeze of 25 ms+ can hold back the
  // early headers past the 40 ms delay, and grpc-js then hedges the call
  // (each freeze, at most the 2 calls in flight).
  const freezes = watchFreezes(25)
  t.after(() => freezes.stop())
  const urls = [await headersFirstServer(), await headersFirstServer()]
  const result = await run({
    urls,
    grpc: { ...call, serviceConfig: hedgingConfig() },
    concurrency: 2,
    requests: 20,
    warmup: 0,
    mode: 'hedged',
    hedge: { delay: 40 },
  })
  const g = result.grpcClient!
  const spoiled = 2 * freezes.windows.filter((w) => w.to - w.from > 25).length
  // Every 2nd call a server sees stalls 200 ms, far beyond the 40 ms delay; their headers
  // already committed them. Each stalled call answered (not cancelled for a hedge) is a call
  // over the delay (a first call that also waited for its connection may be one more).
  assert.ok(stalledAnswers.count >= 5, `stalled answers ${stalledAnswers.count}`)
  assert.ok(g.callsOverDelay >= stalledAnswers.count, `calls over the delay: ${g.callsOverDelay}, stalled answers ${stalledAnswers.count}`)
  assert.ok(g.hedgesSent <= spoiled, `hedges ${g.hedgesSent}, calls in flight during a freeze ${spoiled}`)
  assert.ok(
    g.caveats.some((c) =>
      new RegExp(`${g.callsOverDelay} calls took longer than hedgingDelay but only ${g.hedgesSent} hedges were sent: .*headers before it stalls`).test(c),
    ),
    g.caveats.join(' | '),
  )
  if (g.hedgesSent === 0) assert.ok(g.caveats.some((c) => /no hedge was sent although \d+ calls took longer/.test(c)))
})
