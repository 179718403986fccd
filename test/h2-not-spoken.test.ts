/**
 * HTTP/2 (--http2, grpc://) against a target that does not speak it, on
 * real servers on 127.0.0.1: the pre-run check says so in one line naming
 * the target (as curl --http2-prior-knowledge fails), and the engine itself
 * survives such a peer: undici's h2 client failing its queue while an
 * attempt is re-dispatched from the error callback must not throw an
 * assertion out of a socket event (which killed the process), every attempt
 * ends with an error the run counts.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { createServer } from 'node:http'
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import type { Dispatcher } from 'undici'
import { run } from '../src/run/run.js'
import { ConnectionPool } from '../src/engine/connection-pool.js'

async function listen(srv: ReturnType<typeof createServer> | TcpServer): Promise<string> {
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`
}

/** An HTTP/1.1-only server answering 500, as in the defect report. */
async function http11(): Promise<{ url: string; close(): void }> {
  const srv = createServer((_req, res) => {
    res.statusCode = 500
    res.end('no')
  })
  const url = await listen(srv)
  return { url, close: () => srv.closeAllConnections() ?? srv.close() }
}

test('preflight: --http2 against an HTTP/1.1-only server stops before the run with one line naming it (bad input: exit 2)', async (t) => {
  const s = await http11()
  t.after(() => s.close())
  await assert.rejects(run({ urls: [`${s.url}/`], http2: true, requests: 10, warmup: 0 }), (err: Error & { exitCode?: number }) => {
    assert.equal(err.message, `${s.url} does not speak HTTP/2 (it answered HTTP/1.1 400 Bad Request): is it an HTTP/1.1-only server? (run it without --http2)`)
    assert.equal(err.exitCode, 2)
    return true
  })
})

test('preflight: a target that accepts and never answers the h2 preface fails within the timeout, saying so', async (t) => {
  const sockets = new Set<Socket>()
  const srv = createTcpServer((socket) => sockets.add(socket))
  const url = await listen(srv)
  t.after(() => {
    for (const s of sockets) s.destroy()
    srv.close()
  })
  const t0 = performance.now()
  await assert.rejects(
    run({ urls: [`${url}/`], http2: true, requests: 10, warmup: 0, timeoutMs: 300 }),
    /does not speak HTTP\/2 \(no HTTP\/2 SETTINGS within 1000 ms\)/,
  )
  // Bounded by -t raised to the probe's floor (1 s) plus a start-up; 5 s would mean the bound was not applied.
  assert.ok(performance.now() - t0 < 3000, `took ${(performance.now() - t0).toFixed(0)} ms`)
})

test('preflight: a -t shorter than the target takes to answer the probe still runs, and the run counts the timeouts', async (t) => {
  // Every answer, the probe's 400 included, comes 100 ms after the bytes that ask for it: with -t 20ms the
  // probe must not be held to -t (a loaded machine can take that long to connect), and every request times out.
  const sockets = new Set<Socket>()
  const srv = createTcpServer((socket) => {
    sockets.add(socket)
    socket.on('data', () =>
      setTimeout(() => socket.destroyed || socket.write('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'), 100),
    )
    socket.on('error', () => {})
  })
  const url = await listen(srv)
  t.after(() => {
    for (const s of sockets) s.destroy()
    srv.close()
  })
  const result = await run({ urls: [`${url}/`], requests: 3, concurrency: 1, warmup: 0, mode: 'plain', timeoutMs: 20 })
  const plain = result.phases.plain!
  assert.equal(plain.requests, 3)
  assert.equal(plain.errors, 3, JSON.stringify(plain.errorKinds))
})

test('preflight: a grpc:// target is named with its own scheme (refused, and HTTP/1.1-only)', async (t) => {
  const s = await http11()
  t.after(() => s.close())
  const port = new URL(s.url).port
  // Asynchronously: the server answering the preface lives in this process.
  const hb = (target: string): Promise<{ status: number | null; stderr: string }> =>
    new Promise((resolve) =>
      execFile(
        process.execPath,
        [
          'bin/hedgebench.js',
          '--proto',
          'proto/hedgebench-sim.proto',
          '--call',
          'hedgebench.sim.v1.Replica/Work',
          target,
          '-n',
          '5',
          '--warmup',
          '0',
          '--no-save',
        ],
        { encoding: 'utf8', timeout: 20_000 },
        (err, _out, stderr) => resolve({ status: err ? ((err as { code?: number }).code ?? null) : 0, stderr }),
      ),
    )
  const h1 = await hb(`grpc://127.0.0.1:${port}`)
  assert.equal(h1.status, 2)
  assert.equal(h1.stderr.trim(), `hedgebench: grpc://127.0.0.1:${port} does not speak HTTP/2 (it answered HTTP/1.1 400 Bad Request): not a gRPC server`)
  const refused = await hb('grpc://127.0.0.1:1')
  assert.equal(refused.status, 1)
  assert.match(refused.stderr, /^hedgebench: cannot connect to grpc:\/\/127\.0\.0\.1:1 \(ECONNREFUSED\)/)
})

test('engine: h2c attempts against an HTTP/1.1 server, each re-dispatched from its error callback, all end in errors', async (t) => {
  const s = await http11()
  const pool = new ConnectionPool({ connectTimeoutMs: 2000, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 10_000, allowH2: true })
  t.after(async () => {
    await pool.destroy()
    s.close()
  })
  // A closed loop of 4 slots, 40 attempts in all (bounded): each slot starts its next attempt inside onError, as a load generator's slot does.
  const TOTAL = 40
  let started = 0
  let errors = 0
  let answers = 0
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${errors + answers} of ${TOTAL} attempts ended`)), 10_000)
    const next = (): void => {
      if (started >= TOTAL) return
      started++
      pool.dispatch({ origin: s.url, path: '/', method: 'GET' }, {
        onConnect() {},
        onHeaders() {
          return true
        },
        onData() {
          return true
        },
        onComplete() {
          answers++
          end()
        },
        onError() {
          errors++
          end()
        },
      } as unknown as Dispatcher.DispatchHandler)
    }
    const end = (): void => {
      if (errors + answers === TOTAL) {
        clearTimeout(timer)
        resolve()
      } else next()
    }
    for (let i = 0; i < 4; i++) next()
  })
  await done
  assert.equal(errors + answers, TOTAL)
  assert.ok(errors > 0, 'an HTTP/1.1 server cannot answer h2 streams')
})
