/**
 * The hardest case for counting, shared by the single-thread and the
 * --workers tests: two replicas with a 0-7 ms service time, a 2 ms hedge
 * delay and no budget, c=40, so about two thirds of requests hedge and most
 * losers are aborted on the wire, where a sloppy count would drift.
 */
import type { TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../../src/run/run.js'
import type { PhaseResult } from '../../src/results/run-result.js'
import { settle, startServer, type CountingServer } from './servers.js'

export const HEDGED_CANCEL_REQUESTS = 2000

export async function runHedgedWithCancels(t: TestContext, workers = 1): Promise<{ hedged: PhaseResult; servers: CountingServer[] }> {
  const servers = await Promise.all([0, 1].map(() => startServer({ delayMs: (n) => (n * 7) % 8 })))
  t.after(() => Promise.all(servers.map((s) => s.close())))
  const result = await run({
    urls: servers.map((s) => s.url),
    concurrency: 40,
    requests: HEDGED_CANCEL_REQUESTS,
    warmup: 0,
    mode: 'hedged',
    seed: 2,
    workers,
    hedge: { delay: 2, budgetPct: null as unknown as number },
  })
  return { hedged: result.phases.hedged!, servers }
}

/** Every count of the hedged phase adds up, and what the client put on the wire is what each server received. */
export async function assertHedgedCountsMatch(hedged: PhaseResult, servers: CountingServer[]): Promise<void> {
  const h = hedged.hedging!
  assert.equal(hedged.requests, HEDGED_CANCEL_REQUESTS)
  assert.equal(hedged.ok, HEDGED_CANCEL_REQUESTS)
  assert.ok(h.hedgesSent > 200, `hedges sent: ${h.hedgesSent}`)
  assert.ok(h.cancelled > 50, `cancelled: ${h.cancelled}`)
  assert.equal(h.originalWins + h.hedgeWins, hedged.requests)
  // attempts = originals on the wire + hedges on the wire. An original can
  // itself be unsent (still connecting when its hedge answered): the
  // originals on the wire are at most one per request, and every original
  // not on the wire was cancelled before it (counted in unsent, with the
  // hedges cancelled before the wire).
  const originalsSent = hedged.attempts - h.hedgesSent
  assert.ok(originalsSent > 0 && originalsSent <= hedged.requests, `originals on the wire: ${originalsSent}`)
  assert.ok(hedged.requests - originalsSent <= h.unsent, `originals never sent ${hedged.requests - originalsSent}, unsent ${h.unsent}`)
  assert.ok(h.perAttempt[0]!.count + (h.perAttempt[1]?.count ?? 0) <= hedged.attempts + h.unsent)
  assert.equal(
    hedged.replicas.reduce((s, r) => s + r.wins, 0),
    hedged.requests,
    'one winner per request',
  )
  assert.equal(
    hedged.replicas.reduce((s, r) => s + r.cancelled, 0),
    h.cancelled,
  )
  const received = await settle(servers, hedged.attempts)
  assert.equal(received, hedged.attempts, `servers received ${received}, client attempts ${hedged.attempts} (unsent ${h.unsent})`)
  for (const [i, s] of servers.entries()) assert.equal(hedged.replicas[i]!.attempts, s.received, `replica ${i}`)
  // Every request the servers received was answered or cut off by the client.
  assert.equal(
    servers.reduce((n, s) => n + s.completed + s.cancelled, 0),
    received,
  )
}
