/**
 * The hedging policy as a production undici interceptor (README "As a
 * library"), against real servers on 127.0.0.1: it hedges only the
 * replicas' requests, takes replicas as users spell them, refuses a policy
 * it cannot follow when it is created, and an observer can neither break
 * nor hang a request.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { Agent, request } from 'undici'
import { createHedgeInterceptor, type HedgePolicy } from '../src/index.js'
import { UsageError } from '../src/core/errors.js'
import { startServer, type CountingServer } from './helpers/servers.js'

/** Long beside the 20 ms hedge delay, short for a test: a replica that stalls answers after this. */
const STALL_MS = 400
const servers: CountingServer[] = []
const agents: Agent[] = []
after(async () => {
  await Promise.all(agents.map((a) => a.close()))
  await Promise.all(servers.map((s) => s.close()))
})

async function serve(body: string, delayMs: number): Promise<string> {
  const s = await startServer({ body, delayMs })
  servers.push(s)
  return s.url.replace(/\/$/, '')
}

const [fast, stalled, outsider] = await Promise.all([serve('fast', 0), serve('stalled', STALL_MS), serve('outsider', STALL_MS)])

function agentWith(policy: HedgePolicy): Agent {
  const agent = new Agent().compose(createHedgeInterceptor(policy)) as Agent
  agents.push(agent)
  return agent
}

async function get(agent: Agent, origin: string): Promise<{ body: string; ms: number }> {
  const start = performance.now()
  const res = await request(`${origin}/`, { dispatcher: agent })
  return { body: await res.body.text(), ms: performance.now() - start }
}

test('a request to an origin outside the replicas goes through unhedged: another server never answers it', async () => {
  const agent = agentWith({ delay: 20, replicas: [fast, stalled], budgetPct: null })
  const before = servers[0]!.received
  const out = await get(agent, outsider)
  assert.equal(out.body, 'outsider')
  assert.ok(out.ms >= STALL_MS - 5, `waited for its own server: ${out.ms.toFixed(1)} ms`)
  assert.equal(servers[0]!.received, before, 'no hedge reached a replica')
  // The replicas' own request is hedged: the stall is hidden by the fast replica.
  assert.equal((await get(agent, stalled)).body, 'fast')
})

test('replicas spelled with a trailing slash are the same origins; one with a path or without a scheme is refused', async () => {
  const agent = agentWith({ delay: 20, replicas: [`${stalled}/`, `${fast}/`], budgetPct: null })
  assert.equal((await get(agent, stalled)).body, 'fast')
  assert.throws(
    () => createHedgeInterceptor({ delay: 20, replicas: [`${stalled}/api`, fast] }),
    new UsageError(`hedging policy: replica "${stalled}/api" (an origin without a path: each attempt keeps its request's own path; use "${stalled}")`),
  )
  assert.throws(() => createHedgeInterceptor({ delay: 20, replicas: ['127.0.0.1:9'] }), /hedging policy: replica "127\.0\.0\.1:9" \(an origin with its scheme/)
})

test('a policy it cannot follow is refused when the interceptor is created, naming the field', () => {
  const bad: Array<[unknown, RegExp]> = [
    [{ delay: 20, replicas: fast }, /^hedging policy: replicas "http:\/\/127\.0\.0\.1:\d+" \(an array of origins/],
    [{ replicas: [fast] }, /^hedging policy: delay undefined \(milliseconds as a number >= 0, or a DelaySource/],
    [{ delay: '15ms' }, /^hedging policy: delay "15ms"/],
    [{ delay: -5 }, /^hedging policy: delay -5/],
    [{ delay: 20, maxAttempts: 0 }, /^hedging policy: maxAttempts 0 \(a whole number >= 1/],
    [{ delay: 20, budgetPct: 500 }, /^hedging policy: budgetPct 500 \(a percentage of originals from 0 to 100/],
    [{ delay: 20, cancel: 'later' }, /^hedging policy: cancel "later"/],
    [{ delay: 20, header: 'x bad' }, /^hedging policy: header "x bad"/],
    [null, /^hedging policy: null \(pass an object/],
  ]
  for (const [policy, message] of bad)
    assert.throws(
      () => createHedgeInterceptor(policy as HedgePolicy),
      (err: Error) => err instanceof UsageError && message.test(err.message),
      JSON.stringify(policy),
    )
})

test('an observer with only the callbacks it wants counts them; one that throws is reported once and the request still gets its answer', async () => {
  const done: number[] = []
  const counted = agentWith({ delay: 20, replicas: [stalled, fast], budgetPct: null, observer: { attemptDone: (o) => void done.push(o.index) } })
  assert.equal((await get(counted, stalled)).body, 'fast')
  assert.deepEqual(done, [1], 'the hedge answered; the cancelled original is no outcome')

  const warnings: Error[] = []
  const onWarning = (w: Error): void => void warnings.push(w)
  process.on('warning', onWarning)
  try {
    const throwing = agentWith({
      delay: 20,
      replicas: [stalled, fast],
      budgetPct: null,
      observer: {
        attemptLaunched: () => {
          throw new Error('metrics down')
        },
        attemptDone: () => {
          throw new Error('metrics down')
        },
      },
    })
    assert.equal((await get(throwing, stalled)).body, 'fast')
    assert.equal((await get(throwing, stalled)).body, 'fast')
    // process.emitWarning delivers on the next tick.
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(
      warnings.map((w) => [w.name, w.message]),
      [['HedgeObserverWarning', "the hedge observer's attemptLaunched() threw (metrics down); requests go on, and further throws are not reported"]],
    )
  } finally {
    process.off('warning', onWarning)
  }
})
