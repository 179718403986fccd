/**
 * TIME_WAIT (issue 32): every connection an HTTP/1.1 cancel closes holds a
 * local port for 60 s, so the report's cancel cost says so when the closes
 * per second × 60 near the machine's ephemeral port range.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { run } from '../src/run/run.js'
import { ephemeralPorts } from '../src/stats/generator-monitor.js'
import { cancelCostText, timeWaitText } from '../src/report/hedging-telemetry.js'
import { renderText } from '../src/report/text.js'
import { makeGenerator, makeHedgedRun } from './helpers/result-fixture.js'
import { startServer, type CountingServer } from './helpers/servers.js'

const servers: CountingServer[] = []
after(() => Promise.all(servers.map((s) => s.close())))

/** The soak of issue 32: 78,000 connections closed by cancels in 180 s, against Linux's default 28,232 ports. */
function soak(closed: number, ports: number | undefined) {
  const result = makeHedgedRun()
  const hedged = result.phases.hedged!
  Object.assign(hedged, {
    durationMs: 180_000,
    connectionsClosedByCancel: closed,
    streamsResetByCancel: 0,
    generator: { ...makeGenerator(), ...(ports ? { ephemeralPorts: ports } : {}) },
  })
  return { result, hedged }
}

test('closes per second × 60 s near the port range: said in the cancel cost, with the time to run out', () => {
  const { result, hedged } = soak(78_000, 28_232)
  // 433 closes/s × 60 s = 26,000 held, 92 % of the range.
  assert.match(
    cancelCostText(hedged)!,
    /; ~26000 sockets in TIME_WAIT at this rate \(433 closes\/s × 60 s\) against 28232 local ports: 92% of them: a longer run .* would run out \(EADDRNOTAVAIL\); --http2 cancels by resetting a stream/,
  )
  assert.match(renderText(result, { color: false }), /TIME_WAIT/)
  // Twice the rate: past the range, with the time it takes.
  assert.match(timeWaitText(soak(156_000, 28_232).hedged), /a run past ~33 s at this rate runs out of local ports/)
})

test('few closes, an unknown port range, or a result saved before either: nothing said', () => {
  assert.equal(timeWaitText(soak(1_000, 28_232).hedged), '')
  assert.equal(timeWaitText(soak(78_000, undefined).hedged), '')
  assert.doesNotMatch(renderText(makeHedgedRun(), { color: false }), /TIME_WAIT/)
})

test("a run records the machine's port range with its generator health", {
  skip: existsSync('/proc/sys/net/ipv4/ip_local_port_range') ? false : 'needs Linux',
}, async () => {
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
  assert.equal(ephemeralPorts(), high! - low! + 1)
  const s = await startServer()
  servers.push(s)
  const result = await run({ urls: [s.url], requests: 5, concurrency: 1, warmup: 0, mode: 'plain' })
  assert.equal(result.phases.plain!.generator.ephemeralPorts, high! - low! + 1)
})
