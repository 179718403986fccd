/**
 * The hedge delay comes from answers only (defect #5): a warm-up whose
 * requests all time out says nothing about how long an answer takes, so no
 * delay is derived from it (it was the timeout itself: "Delay: 502 ms");
 * the run warns that nothing was answered and uses the 1 s fallback. Against
 * a real server on 127.0.0.1 that accepts requests and never answers.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'

test('a warm-up whose requests all time out derives no hedge delay: a warning and the fallback', async (t) => {
  const pending = new Set<ServerResponse>()
  const srv = createServer((_req, res) => pending.add(res))
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  t.after(() => {
    srv.closeAllConnections()
    srv.close()
  })
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/`
  const result = await run({ urls: [url], mode: 'hedged', requests: 24, concurrency: 2, warmup: 4, timeoutMs: 150, seed: 1 })
  const h = result.phases.hedged!.hedging!
  assert.ok(result.phases.warmup, 'the warm-up ran and is reported')
  assert.equal(result.phases.warmup.errors, 4)
  assert.equal(h.delayMs, 1000, `delay ${h.delayMs} ms (${h.delaySource})`)
  assert.match(h.delaySource, /fallback/)
  // One diagnosis: every request failed; no advice about the delay from hedges fired by timeouts (at least 10 of the 24 fire one: MIN_TRIGGERS).
  const text = renderText(result)
  assert.ok(h.hedgesSent >= 10, `hedges ${h.hedgesSent}`)
  assert.match(text, /Errors:\s+24 \(100\.00%\)/)
  assert.doesNotMatch(text, /slower while hedging|too aggressive/)
  assert.ok(
    result.warnings.some((w) => /none of the 4 warm-up requests was answered successfully/.test(w)),
    result.warnings.join('\n'),
  )
})

test('a run with no hedged phase derives no hedge delay, so it warns about none (--mode plain; a warm-up too short for a p95)', async (t) => {
  const srv = createServer((_req, res) => res.end('ok'))
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  t.after(() => srv.close())
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/`
  // 10 warm-up requests: their second half (5) is far too few to place a p95, which a hedged run would warn about.
  const hedged = await run({ urls: [url], mode: 'both', requests: 20, concurrency: 5, warmup: 10, seed: 1 })
  assert.ok(
    hedged.warnings.some((w) => /hedge delay/.test(w)),
    `a hedged run warns: ${JSON.stringify(hedged.warnings)}`,
  )
  const plain = await run({ urls: [url], mode: 'plain', requests: 20, concurrency: 5, warmup: 10, seed: 1 })
  assert.deepEqual(
    plain.warnings.filter((w) => /hedge/.test(w)),
    [],
  )
})
