/**
 * The simulated gRPC replicas (serve --grpc) against a real grpc-js client on
 * 127.0.0.1: what they count (calls, cancels before an answer,
 * grpc-previous-rpc-attempts values), that a stalled call sends no headers
 * before its stall ends, and the Stats/Reset control calls.
 */
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { Client, credentials, Metadata, status } from '@grpc/grpc-js'
import type { ServiceError } from '@grpc/grpc-js'
import { spawnTarget, startTarget } from '../src/sim/target.js'
import type { Target } from '../src/sim/target.js'
import { simSchema, SIM_SERVICE } from '../src/sim/grpc-replica.js'
import { fetchGrpcServerStats, grpcAddress, resetGrpcServerStats } from '../src/sim/grpc-stats-client.js'
import type { Profile } from '../src/sim/profile.js'
import { eventually } from './helpers/sim.js'
import { stderrLines } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'

const STALL_MS = 200
/** Replica 0 answers in 20 ms; replica 1 always stalls 200 ms more; replica 2 always fails with the HTTP replica's 503. */
const PROFILE: Profile = {
  name: 'grpc-sim-test',
  description: 'fixed 20 ms, one stalling and one failing replica',
  replicas: 3,
  seed: 7,
  file: null,
  model: {
    base: { type: 'fixed', ms: 20 },
    overrides: [
      { index: 1, stalls: [{ type: 'independent', probability: 1, ms: STALL_MS }] },
      { index: 2, errors: { rate: 1, status: 503 } },
    ],
  },
}

const identity = (b: Buffer) => b
const clients: Client[] = []
const targets: Target[] = []
after(async () => {
  for (const c of clients) c.close()
  await Promise.all(targets.map((t) => t.close()))
})

function clientFor(url: string): Client {
  const c = new Client(grpcAddress(url), credentials.createInsecure())
  clients.push(c)
  return c
}

interface Answer {
  err: ServiceError | null
  reply: Buffer | undefined
  /** ms from the call's start to the response headers (null = none came). */
  headersMs: number | null
  ms: number
}

function work(client: Client, metadata = new Metadata(), signal?: AbortSignal): Promise<Answer> {
  const request = Buffer.from(simSchema().request.encode({ payload: 'hi', replyBytes: 3 }).finish())
  const start = performance.now()
  let headersMs: number | null = null
  return new Promise((resolve) => {
    const call = client.makeUnaryRequest(`/${SIM_SERVICE}/Work`, identity, identity, request, metadata, { deadline: Date.now() + 5_000 }, (err, reply) =>
      resolve({ err, reply, headersMs, ms: performance.now() - start }),
    )
    call.on('metadata', () => (headersMs = performance.now() - start))
    signal?.addEventListener('abort', () => call.cancel())
  })
}

test('counts calls, grpc-previous-rpc-attempts values and answers by code name; Stats and Reset over gRPC', async () => {
  const target = await startTarget({ profile: PROFILE, grpc: true })
  targets.push(target)
  assert.match(target.urls[0]!, /^grpc:\/\/127\.0\.0\.1:\d+$/)
  const [fast, , failing] = target.urls.map(clientFor)
  const plain = await work(fast!)
  assert.equal(plain.err, null)
  const reply = simSchema().reply.decode(plain.reply!) as unknown as { replica: number; payloadBytes: number; padding: Uint8Array }
  assert.deepEqual([reply.replica, reply.payloadBytes, reply.padding.length], [0, 2, 3])
  const hedge = new Metadata()
  hedge.set('grpc-previous-rpc-attempts', '1')
  await work(fast!, hedge)
  const second = new Metadata()
  second.set('grpc-previous-rpc-attempts', '2')
  await work(fast!, second)
  const failed = await work(failing!)
  assert.equal(failed.err?.code, status.UNAVAILABLE)

  const stats = await fetchGrpcServerStats(target.statsUrl)
  assert.equal(stats.hedgeHeaderName, 'grpc-previous-rpc-attempts')
  assert.deepEqual(
    { received: stats.totals.received, completed: stats.totals.completed, cancelled: stats.totals.cancelled, hedgeHeader: stats.totals.hedgeHeader },
    { received: 4, completed: 4, cancelled: 0, hedgeHeader: 2 },
  )
  assert.deepEqual(stats.totals.previousAttempts, { '1': 1, '2': 1 })
  assert.deepEqual(stats.totals.byStatus, { OK: 3, UNAVAILABLE: 1 })
  assert.equal(stats.totals.stalled, 0, 'replicas 0 and 2 never stall')
  assert.deepEqual(
    stats.replicas.map((r) => r.received),
    [3, 0, 1],
    'the Stats call itself is not counted',
  )
  await resetGrpcServerStats(target.urls[1]!)
  assert.equal((await fetchGrpcServerStats(target.urls[2]!)).totals.received, 0, 'any replica resets and reports for all')
})

test('a stalled call sends no headers before its stall ends, and one cancelled before its answer is counted cancelled', async () => {
  const target = await startTarget({ profile: PROFILE, grpc: true })
  targets.push(target)
  const stalling = clientFor(target.urls[1]!)
  const answered = await work(stalling)
  assert.equal(answered.err, null)
  // A gRPC client commits to the first attempt that sends headers: they must not come before the stall is over.
  assert.ok(answered.headersMs !== null && answered.headersMs >= 20 + STALL_MS - 1, `headers after ${answered.headersMs} ms`)

  const controller = new AbortController()
  const pending = work(stalling, new Metadata(), controller.signal)
  await new Promise((r) => setTimeout(r, 50))
  controller.abort()
  const cancelled = await pending
  assert.equal(cancelled.err?.code, status.CANCELLED)
  assert.equal(cancelled.headersMs, null)
  const settled = await eventually(async () => (await fetchGrpcServerStats(target.statsUrl)).totals.cancelled === 1)
  assert.ok(settled, 'the server saw the cancel')
  // Its timer was cleared: the replica never answers it later.
  await new Promise((r) => setTimeout(r, STALL_MS))
  const totals = (await fetchGrpcServerStats(target.statsUrl)).totals
  assert.deepEqual([totals.received, totals.completed, totals.cancelled], [2, 1, 1])
  assert.equal(totals.stalled, 2, 'both began their stall: the cancelled one too')
  assert.deepEqual(
    (await fetchGrpcServerStats(target.statsUrl)).replicas.map((r) => r.stalled),
    [0, 2, 0],
  )
})

test('hedgebench serve --grpc as a child process prints grpc:// URLs that answer', async () => {
  const target = await spawnTarget({ profile: PROFILE, grpc: true, replicas: 1 })
  targets.push(target)
  assert.equal(target.urls.length, 1)
  assert.match(target.urls[0]!, /^grpc:\/\//)
  const answer = await work(clientFor(target.urls[0]!))
  assert.equal(answer.err, null)
  assert.equal((await fetchGrpcServerStats(target.statsUrl)).totals.completed, 1)
})

test("serve --grpc on a port already in use: one line, exit 2 (grpc-js's own error log is silenced)", async () => {
  const target = await startTarget({ profile: PROFILE, grpc: true, replicas: 1 })
  targets.push(target)
  const port = new URL(target.urls[0]!).port
  const run = await runMain(['serve', '--grpc', '--profile', 'pi', '--replicas', '1', '--port', port], { timeoutMs: 15_000 })
  assert.equal(run.code, 2)
  assert.deepEqual(stderrLines(run), [`hedgebench: cannot listen on 127.0.0.1 from port ${port}: a port is already in use`])
})
