/**
 * Issue 48: a replica slow only in its response body is never hedged
 * (hedging commits at the response headers), and the run says so once.
 * Real servers on 127.0.0.1: every fifth request's body (or, for the
 * contrast, its headers) comes BODY_MS after the request; the rest at once.
 * The hedge delay is fixed well between the two, so the fast requests'
 * wait for headers stays below it and the slow ones' latency above it
 * however loaded the machine is (the margin is the delay itself).
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { run } from '../src/run/run.js'
import { startServer, type CountingServer } from './helpers/servers.js'

const BODY_MS = 150
const DELAY_MS = 40
/** One request in SLOW_EVERY is slow: 20 %, far above the p95 the warning compares. */
const SLOW_EVERY = 5

const servers: CountingServer[] = []
after(async () => {
  await Promise.all(servers.map((s) => s.close()))
})

/** Two replicas; `slowPart` says whether a slow request's headers or only its body wait. */
async function replicas(slowPart: 'body' | 'headers'): Promise<string[]> {
  const handle = (req: IncomingMessage, res: ServerResponse, n: number): void => {
    req.resume()
    const slow = n % SLOW_EVERY === SLOW_EVERY - 1
    const answer = (): void => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.flushHeaders()
      setTimeout(() => res.end('ok\n'), slow && slowPart === 'body' ? BODY_MS : 0)
    }
    if (slow && slowPart === 'headers') setTimeout(answer, BODY_MS)
    else answer()
  }
  for (let i = 0; i < 2; i++) servers.push(await startServer({ handle }))
  return servers.slice(-2).map((s) => s.url)
}

const bodyWarnings = (warnings: readonly string[]): string[] => warnings.filter((w) => w.includes('the latency is in the response body'))

test('a replica slow in its body only: no hedge is sent, and one warning says hedging cannot cut it', { timeout: 60_000 }, async () => {
  const urls = await replicas('body')
  const result = await run({ urls, requests: 100, warmup: 0, concurrency: 4, seed: 1, hedge: { delay: DELAY_MS } })
  const hedged = result.phases.hedged!
  assert.equal(hedged.hedging!.hedgesSent, 0, 'the headers always came before the delay')
  const said = bodyWarnings(result.warnings)
  assert.equal(said.length, 1, result.warnings.join('\n'))
  assert.match(
    said[0]!,
    /^hedged: the latency is in the response body: p95 .* is above the hedge delay \(40\.0 ms\).*0 hedges were sent for 100 requests; hedging commits at the response headers/,
  )
})

test('a replica slow in its headers: hedged, and no such warning', { timeout: 60_000 }, async () => {
  const urls = await replicas('headers')
  const result = await run({ urls, requests: 100, warmup: 0, concurrency: 4, seed: 1, hedge: { delay: DELAY_MS } })
  assert.ok(result.phases.hedged!.hedging!.hedgesSent > 0)
  assert.deepEqual(bodyWarnings(result.warnings), [])
})
