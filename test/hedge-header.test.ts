/**
 * Issue 3, tagging: every hedge carries `x-hedge-attempt: N` (1 = first
 * hedge; the original carries none), `--hedge-header NAME` renames it and
 * `--no-hedge-header` drops it. Checked on what a real server received.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import type { HedgeRunOptions } from '../src/run/run-options.js'
import { startServer } from './helpers/servers.js'

/** Two replicas answering in 30 ms, hedged at 5 ms with no budget: every request sends a hedge. */
async function hedgedRun(header: HedgeRunOptions['header'] | undefined) {
  const servers = await Promise.all([0, 1].map(() => startServer({ delayMs: 30, record: ['x-hedge-attempt', 'x-copy'] })))
  try {
    const hedge: HedgeRunOptions = { delay: 5, budgetPct: null as unknown as number, maxAttempts: 3 }
    if (header !== undefined) hedge.header = header
    const result = await run({ urls: servers.map((s) => s.url), concurrency: 2, requests: 20, warmup: 0, mode: 'hedged', hedge, seed: 2 })
    const seen = servers.flatMap((s) => s.seen)
    return { phase: result.phases.hedged!, seen }
  } finally {
    await Promise.all(servers.map((s) => s.close()))
  }
}

test('default: hedges carry x-hedge-attempt with their number, originals carry none', async () => {
  const { phase, seen } = await hedgedRun(undefined)
  const hedging = phase.hedging!
  assert.ok(hedging.hedgesSent >= 20, `hedges sent ${hedging.hedgesSent}`)
  const tagged = seen.filter((h) => h['x-hedge-attempt'] !== undefined)
  assert.equal(tagged.length, hedging.hedgesSent)
  assert.equal(seen.length - tagged.length, phase.attempts - hedging.hedgesSent, 'untagged requests are the originals')
  assert.ok(tagged.every((h) => h['x-hedge-attempt'] === '1' || h['x-hedge-attempt'] === '2'))
  assert.ok(
    tagged.some((h) => h['x-hedge-attempt'] === '2'),
    'with --max-attempts 3 the second hedge says 2',
  )
})

test('--hedge-header x-copy renames it', async () => {
  const { phase, seen } = await hedgedRun('x-copy')
  assert.ok(phase.hedging!.hedgesSent >= 20, `hedges sent ${phase.hedging!.hedgesSent}`)
  const tagged = seen.filter((h) => h['x-copy'] !== undefined)
  assert.equal(tagged.length, phase.hedging!.hedgesSent)
  assert.ok(
    tagged.every((h) => h['x-copy'] === '1' || h['x-copy'] === '2'),
    'the renamed header carries the hedge number',
  )
  assert.equal(seen.filter((h) => h['x-hedge-attempt'] !== undefined).length, 0)
})

test('--no-hedge-header sends no tag at all', async () => {
  const { phase, seen } = await hedgedRun(null)
  assert.ok(phase.hedging!.hedgesSent >= 20)
  assert.equal(seen.filter((h) => h['x-hedge-attempt'] !== undefined || h['x-copy'] !== undefined).length, 0)
})
