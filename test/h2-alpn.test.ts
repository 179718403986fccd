/**
 * --http2 on https://: hedgebench's own HTTP/2 client over TLS, once ALPN
 * chose h2. An h2 server's session is shared by concurrent attempts
 * (streams), whose requests say :scheme https; a server whose ALPN chooses
 * HTTP/1.1 is never sent h2 frames: every attempt fails with HTTP2_ALPN
 * (a run's pre-run check refuses such a server first). Real TLS servers on 127.0.0.1 with a throwaway
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
  /** :scheme of the h2 requests. */
  schemes: Set<string>
}

/** A pool with allowH2 whose connector trusts the throwaway certificate. */
const h2Pool = (): ConnectionPool =>
  new ConnectionPool({
    connectTimeoutMs: 5000,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 10_000,
    allowH2: true,
    connector: buildConnector({ allowH2: true, rejectUnauthorized: false }),
  })

/** One GET (the connection learns its protocol), then IN_FLIGHT concurrent GETs, through a pool with allowH2. */
async function burst(origin: string): Promise<number[]> {
  const pool = h2Pool()
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

function track(
  seen: Seen,
): (req: { httpVersion: string; headers: Record<string, unknown> }, res: { end(body: string): void; on(e: 'close', f: () => void): void }) => void {
  let inFlight = 0
  return (req, res) => {
    seen.versions.add(req.httpVersion)
    if (req.headers[':scheme'] !== undefined) seen.schemes.add(String(req.headers[':scheme']))
    seen.maxInFlight = Math.max(seen.maxInFlight, ++inFlight)
    res.on('close', () => inFlight--)
    setTimeout(() => res.end('ok'), SERVICE_MS)
  }
}

const tls = selfSigned()
const skip = skipWithout(tls !== null, 'openssl', NO_OPENSSL)

test('--http2 on https://: ALPN h2 shares one session between the attempts in flight', { skip }, async (t) => {
  const seen: Seen = { connections: 0, maxInFlight: 0, versions: new Set(), schemes: new Set() }
  const server = createSecureServer({ ...tls!, allowHTTP1: true }, track(seen) as never)
  server.on('secureConnection', () => seen.connections++)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.after(() => server.close())
  const statuses = await burst(`https://127.0.0.1:${(server.address() as AddressInfo).port}`)
  assert.deepEqual(statuses, Array(IN_FLIGHT + 1).fill(200))
  assert.deepEqual([...seen.versions], ['2.0'])
  assert.deepEqual([...seen.schemes], ['https'])
  assert.equal(seen.maxInFlight, IN_FLIGHT, 'all attempts in flight at once')
  assert.equal(seen.connections, 1, 'streams on the one session ALPN made h2')
})

test('--http2 on https:// against an HTTP/1.1-only server: no h2 frame sent, every attempt fails as HTTP2_ALPN', { skip }, async (t) => {
  const seen: Seen = { connections: 0, maxInFlight: 0, versions: new Set(), schemes: new Set() }
  const server = createHttpsServer(tls!, track(seen) as never)
  server.on('secureConnection', () => seen.connections++)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  const origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`
  const pool = h2Pool()
  t.after(() => pool.destroy())
  const outcomes = await Promise.all(
    Array.from({ length: 3 }, () => get(pool, origin).then(String, (e: { code?: string; message: string }) => `${e.code}: ${e.message}`)),
  )
  assert.deepEqual(outcomes, Array(3).fill('HTTP2_ALPN: ALPN chose http/1.1, not h2'))
  assert.equal(seen.versions.size, 0, 'the server answered no request')
})
