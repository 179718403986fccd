/**
 * Issue 6, accuracy: against a server with a fixed 20 ms service time, in
 * its own process (its timers never share the client's event loop),
 * hedgebench's p50 is 20 ms to within 1 ms of what a bare socket client sees
 * (the machine's own loopback cost), judged on the medians' 95 % intervals. The server is the bench's echo
 * server, which holds the 20 ms to a fraction of a millisecond (a timer to
 * just short of it, then setImmediate), the same server `npm run bench --
 * --accuracy` compares hey and wrk against. A test, not a timed benchmark.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { run } from '../src/run/run.js'
import { decodeHistogram, percentileMs } from '../src/stats/histogram.js'
import { median, rawLatenciesMs } from './helpers/raw-client.js'

const ECHO_SERVER = fileURLToPath(new URL('../bench/echo-server.js', import.meta.url))

async function spawnEchoServer(delayMs: number): Promise<{ url: string; close(): void }> {
  const child = spawn(process.execPath, [ECHO_SERVER, '--delay-ms', String(delayMs)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('echo server did not start within 10 s')), 10_000)
    child.once('exit', (code) => reject(new Error(`echo server exited with ${code}`)))
    child.on('message', (m: { type?: string; port?: number }) => {
      if (m.type !== 'listening') return
      clearTimeout(timer)
      resolve(m.port!)
    })
  })
  return { url: `http://127.0.0.1:${port}/`, close: () => void child.kill('SIGTERM') }
}

test('fixed 20 ms service time in a child process: p50 is 20 ms within 1 ms of what loopback itself costs', async (t) => {
  const server = await spawnEchoServer(20)
  t.after(() => server.close())
  // What the machine adds on top of the 20 ms (loopback, kernel, the
  // server's own write), measured by a bare socket client at the same time,
  // so both see the same load: on a quiet machine about 0.3-0.6 ms, on a
  // busy one over 1 ms. hedgebench must add at most 1 ms to that.
  const [raw, result] = await Promise.all([
    rawLatenciesMs(server.url, 200),
    run({ urls: [server.url], concurrency: 1, requests: 200, warmup: 20, mode: 'plain', seed: 6 }),
  ])
  const reference = median(raw)
  const plain = result.phases.plain!
  assert.equal(plain.requests, 200)
  assert.equal(plain.ok, 200)
  const { p50, min } = plain.latencyMs
  // Not the two medians against an absolute 1 ms (on a loaded machine they
  // were 0.84 ms apart by sampling alone), but their distribution-free 95 %
  // intervals: for the median of n = 200, the order statistics of rank
  // 100 -+ 1.96 sqrt(200) / 2, i.e. 86 and 115 (percentiles 43 and 57.5).
  // Load widens both, as it should. hedgebench adds at most 1 ms when its
  // interval, shifted by 1 ms, meets the bare socket's; each misses its own
  // median with probability 5 %, so a correct client fails < 0.1 % of runs.
  const sorted = [...raw].sort((a, b) => a - b)
  const [rawLo, rawHi] = [sorted[85]!, sorted[114]!]
  const h = decodeHistogram(plain.histogram)
  const [hbLo, hbHi] = [percentileMs(h, 43), percentileMs(h, 57.5)]
  const intervals = `hedgebench p50 ${p50} ms [${hbLo}, ${hbHi}], bare socket ${reference.toFixed(3)} ms [${rawLo.toFixed(3)}, ${rawHi.toFixed(3)}]`
  assert.ok(hbLo <= rawHi + 1, `hedgebench adds more than 1 ms: ${intervals}`)
  assert.ok(hbHi >= rawLo - 1, `hedgebench reads more than 1 ms low: ${intervals}`)
  assert.ok(p50 >= 20, `p50 ${p50} ms: below the server's own 20 ms`)
  // The clock starts before the dispatch, so no request can beat the server's own 20 ms.
  assert.ok(min >= 19.9, `min ${min} ms`)
})
