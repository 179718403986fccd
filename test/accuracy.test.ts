/**
 * Issue 6, accuracy: against a server with a fixed 20 ms service time, in
 * its own process (its timers never share the client's event loop),
 * hedgebench's p50 is 20 ms to within 1 ms. The server is the bench's echo
 * server, which holds the 20 ms to a fraction of a millisecond (a timer to
 * just short of it, then setImmediate), the same server `npm run bench --
 * --accuracy` compares hey and wrk against. A test, not a timed benchmark.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { run } from '../src/run.js'

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

test('fixed 20 ms service time in a child process: p50 is 20 ms within 1 ms', async (t) => {
  const server = await spawnEchoServer(20)
  t.after(() => server.close())
  const result = await run({ urls: [server.url], concurrency: 10, requests: 300, warmup: 100, mode: 'plain', seed: 6 })
  const plain = result.phases.plain!
  assert.equal(plain.requests, 300)
  assert.equal(plain.ok, 300)
  const { p50, min } = plain.latencyMs
  assert.ok(Math.abs(p50 - 20) <= 1, `p50 ${p50} ms, expected 20 ms +- 1 ms`)
  // The clock starts before the dispatch, so no request can beat the server's own 20 ms.
  assert.ok(min >= 19.9, `min ${min} ms`)
})
