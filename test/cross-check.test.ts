/**
 * The client/server cross-check on real runs: the built-in target (a child
 * `hedgebench serve`, started by the bin for --profile) counts what it
 * receives; the run reports it beside the client's attempts. Then a stats
 * endpoint that disagrees with the client must be flagged.
 *
 * Nothing is statistical: the counts must be equal exactly, whatever the
 * latencies. The profile makes the hedged phase hard on the counting: a 1 ms
 * hedge delay with no budget against a 2-6 ms service time (plus 5 % of
 * requests stalling 100 ms) hedges nearly every request at 20 in flight, so
 * many hedges are cancelled on the wire or before they reach it.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { spawnFixedDelayServer, type FixedDelayServer } from './helpers/fixed-delay-server.js'
import { runMain } from './helpers/main-cases.js'
import { profileDir, type ProfileFiles } from './helpers/profiles.js'

let profiles: ProfileFiles | undefined
let delay: FixedDelayServer | undefined
const fakes: Server[] = []

before(async () => {
  profiles = profileDir()
  delay = await spawnFixedDelayServer(2)
})

after(async () => {
  await delay?.close()
  for (const s of fakes) {
    s.closeAllConnections()
    await new Promise<void>((r) => s.close(() => r()))
  }
  profiles?.remove()
})

interface Phase {
  attempts: number
  requests: number
  hedging?: { hedgesSent: number; cancelled: number; unsent: number }
  server?: { received: number; completed: number; cancelled: number; hedgeHeader: number; clientAttempts: number; match: boolean }
}

test("built-in target: plain and hedged phases report the server's counts, equal to the client's attempts", { timeout: 60_000 }, async () => {
  const profile = profiles!.write('cross-check', {
    replicas: 3,
    seed: 811,
    model: { base: { type: 'uniform', min: 2, max: 6 }, stalls: [{ type: 'independent', probability: 0.05, ms: 100 }] },
  })
  const r = await runMain(
    [
      '--profile',
      profile,
      '-n',
      '600',
      '-c',
      '20',
      '--warmup',
      '100',
      '--hedge-delay',
      '1ms',
      '--hedge-budget',
      'off',
      '--seed',
      '9',
      '-o',
      'json',
      '--no-save',
    ],
    { timeoutMs: 55_000 },
  )
  assert.equal(r.code, 0, r.stderr)
  const result = JSON.parse(r.stdout) as { phases: Record<string, Phase> }
  for (const name of ['warmup', 'plain', 'hedged']) {
    const phase = result.phases[name]
    assert.ok(phase, `${name} phase ran`)
    const s = phase.server
    assert.ok(s, `${name}: server counts present`)
    assert.equal(s.match, true, `${name}: ${JSON.stringify(s)}`)
    assert.equal(s.received, s.clientAttempts, name)
    assert.equal(s.clientAttempts, phase.attempts, name)
    assert.equal(s.received, s.completed + s.cancelled, `${name}: every received request either completed or was cancelled: ${JSON.stringify(s)}`)
  }
  assert.equal(result.phases.plain!.attempts, 600)
  assert.equal(result.phases.plain!.server!.hedgeHeader, 0)
  const hedged = result.phases.hedged!
  const h = hedged.hedging!
  assert.ok(h.hedgesSent > 100, `the hedged phase hedged a lot: ${JSON.stringify(h)}`)
  // Not equal: with a 1 ms delay an original can still be waiting for a
  // connection when its hedge wins, and is then cancelled before its headers
  // are written (never on the wire, never counted by anyone).
  assert.ok(hedged.attempts <= hedged.requests + h.hedgesSent, `attempts ${hedged.attempts} <= ${hedged.requests} + ${h.hedgesSent}`)
  assert.equal(hedged.server!.hedgeHeader, h.hedgesSent, 'the server saw the hedge header on exactly the hedges sent')
  assert.ok(hedged.server!.cancelled > 0, 'losers were cancelled on the server')
})

/** A stats endpoint in this process, whose `received` moves as `next(call)` says, answering after `delayMs`. */
async function fakeStats(next: (call: number) => number, delayMs = 0, answeredAt: number[] = []): Promise<string> {
  let calls = 0
  const server = createServer((req, res) => {
    req.resume()
    const received = next(calls++)
    setTimeout(() => {
      answeredAt.push(Date.now())
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ totals: { received, completed: received, cancelled: 0, hedgeHeader: 0 }, replicas: [] }))
    }, delayMs)
  })
  fakes.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/__hedgebench/stats`
}

test('a target that also gets traffic from elsewhere is flagged: match false, and the text report says MISMATCH', { timeout: 60_000 }, async () => {
  // Another client's 1000 requests land between any two reads of the stats.
  const busy = await fakeStats((call) => call * 1000)
  const args = [delay!.url, '--server-stats', busy, '--mode', 'plain', '-n', '100', '-c', '4', '--warmup', '10', '--no-save']
  const json = await runMain([...args, '-o', 'json'], { timeoutMs: 30_000 })
  assert.equal(json.code, 0, json.stderr)
  const plain = (JSON.parse(json.stdout) as { phases: Record<string, Phase> }).phases.plain!
  assert.ok(plain.server, 'server counts present')
  assert.equal(plain.server.match, false)
  assert.equal(plain.server.clientAttempts, 100)
  assert.ok(plain.server.received >= 1000, `the server's count includes the other traffic: ${plain.server.received}`)

  const text = await runMain(args, { timeoutMs: 30_000 })
  assert.equal(text.code, 0, text.stderr)
  assert.match(text.stdout, /=== plain phase ===[\s\S]*Server cross-check:\n\s+server received \d+ vs client attempts 100: MISMATCH/)
})

test('a stats endpoint that never counts (requests lost on the way) is flagged too', { timeout: 60_000 }, async () => {
  // A fixed count: the server "received" none of the client's requests. The
  // run waits (bounded, ~2 s) for the count to catch up, then flags it.
  const stuck = await fakeStats(() => 4242)
  const r = await runMain([delay!.url, '--server-stats', stuck, '--mode', 'plain', '-n', '50', '-c', '4', '--warmup', '0', '--no-save'], { timeoutMs: 30_000 })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /server received 0 vs client attempts 50: MISMATCH/)
  assert.doesNotMatch(r.stdout, /: MATCH/)
})

test("a slow stats endpoint is read before the window's clock starts: an open-loop schedule does not begin in the past", { timeout: 60_000 }, async () => {
  // The stats answer after 300 ms. Read after the window (and its schedule)
  // started, the first 300 ms of intended sends would all be late, and their
  // corrected latency would carry up to 300 ms that no server caused. An
  // order, not a latency bound: the first read was answered before the
  // window began, whatever the machine's load. The window's start on the wall
  // clock is the run's start plus the phase's offset (each read to the
  // millisecond, hence the 1 ms for the clocks' resolution).
  const answeredAt: number[] = []
  const slow = await fakeStats((call) => call * 1_000_000, 300, answeredAt)
  const r = await runMain(
    [delay!.url, '--server-stats', slow, '--mode', 'plain', '-q', '200', '-z', '1s', '-c', '10', '--warmup', '0', '-o', 'json', '--no-save'],
    { timeoutMs: 30_000 },
  )
  assert.equal(r.code, 0, r.stderr)
  const result = JSON.parse(r.stdout) as { startedAt: string; phases: Record<string, Phase & { startOffsetMs: number }> }
  const plain = result.phases.plain!
  assert.ok(plain.server, 'server counts present')
  assert.equal(answeredAt.length, 2, 'one read before the window, one after')
  const windowStart = Date.parse(result.startedAt) + plain.startOffsetMs
  assert.ok(answeredAt[0]! <= windowStart + 1, `the first read was answered at ${answeredAt[0]}, the window began at ${windowStart.toFixed(1)}`)
})
