/**
 * --http2 on https://: the connection speaks what ALPN chose. An h2 server's
 * session is shared by concurrent attempts (streams); a server that only
 * speaks HTTP/1.1 still gets a connection per attempt in flight, never
 * HTTP/1.1 pipelining. Real TLS servers on 127.0.0.1 with a throwaway
 * self-signed certificate made by openssl (the test skips without it).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer as createHttpsServer } from 'node:https'
import { createSecureServer } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { buildConnector, type Dispatcher } from 'undici'
import { ConnectionPool } from '../src/engine/connection-pool.js'
import { skipWithout } from './helpers/required-tool.js'
import { NO_OPENSSL, selfSigned } from './helpers/tls-cert.js'

const IN_FLIGHT = 6
const SERVICE_MS = 100

interface Seen {
  connections: number
  maxInFlight: number
  versions: Set<string>
}

/** One GET (the connection learns its protocol), then IN_FLIGHT concurrent GETs, through a pool with allowH2. */
async function burst(origin: string): Promise<number[]> {
  const pool = new ConnectionPool({
    connectTimeoutMs: 5000,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 10_000,
    allowH2: true,
    // The pool's own connector, trusting the throwaway certificate.
    connector: buildConnector({ allowH2: true, rejectUnauthorized: false }),
  })
  try {
    const first = await get(pool, origin)
    return [first, ...(await Promise.all(Array.from({ length: IN_FLIGHT }, () => get(pool, origin))))]
  } finally {
    await pool.destroy()
  }
}

function get(pool: ConnectionPool, origin: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let status = 0
    pool.dispatch({ origin, path: '/', method: 'GET' }, {
      onConnect() {},
      onHeaders(s: number) {
        status = s
        return true
      },
      onData: () => true,
      onComplete: () => resolve(status),
      onError: reject,
    } as unknown as Dispatcher.DispatchHandler)
  })
}

function track(seen: Seen): (req: { httpVersion: string; socket: object }, res: { end(body: string): void; on(e: 'close', f: () => void): void }) => void {
  let inFlight = 0
  return (req, res) => {
    seen.versions.add(req.httpVersion)
    seen.maxInFlight = Math.max(seen.maxInFlight, ++inFlight)
    res.on('close', () => inFlight--)
    setTimeout(() => res.end('ok'), SERVICE_MS)
  }
}

const tls = selfSigned()
const skip = skipWithout(tls !== null, 'openssl', NO_OPENSSL)

test('--http2 on https://: ALPN h2 shares one session between the attempts in flight', { skip }, async (t) => {
  const seen: Seen = { connections: 0, maxInFlight: 0, versions: new Set() }
  const server = createSecureServer({ ...tls!, allowHTTP1: true }, track(seen) as never)
  server.on('secureConnection', () => seen.connections++)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.after(() => server.close())
  const statuses = await burst(`https://127.0.0.1:${(server.address() as AddressInfo).port}`)
  assert.deepEqual(statuses, Array(IN_FLIGHT + 1).fill(200))
  assert.deepEqual([...seen.versions], ['2.0'])
  assert.equal(seen.maxInFlight, IN_FLIGHT, 'all attempts in flight at once')
  assert.equal(seen.connections, 1, 'streams on the one session ALPN made h2')
})

test('--http2 on https:// against an HTTP/1.1-only server: a connection per attempt in flight, no pipelining', { skip }, async (t) => {
  const seen: Seen = { connections: 0, maxInFlight: 0, versions: new Set() }
  const server = createHttpsServer(tls!, track(seen) as never)
  server.on('secureConnection', () => seen.connections++)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  const statuses = await burst(`https://127.0.0.1:${(server.address() as AddressInfo).port}`)
  assert.deepEqual(statuses, Array(IN_FLIGHT + 1).fill(200))
  assert.deepEqual([...seen.versions], ['1.1'])
  // Not pipelined one after another on one connection: several at the server at once. (All six at once needs five
  // TLS handshakes within one 100 ms service time, which a loaded machine does not always give; the connection
  // count below is what shows a connection per attempt.)
  assert.ok(seen.maxInFlight > 1, `concurrent, not pipelined one after another (most at once: ${seen.maxInFlight})`)
  assert.equal(seen.connections, IN_FLIGHT, "the first GET's connection is reused by one of them")
})
