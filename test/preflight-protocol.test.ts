/**
 * The pre-run check finds the protocol each replica speaks, refuses a
 * mismatch with the run's options in one line (exit 2), and the result
 * records what was spoken (JSON, CSV, text, HTML). Real servers on
 * 127.0.0.1: node:http (HTTP/1.1), node:http2 (h2c only), node:https and
 * node:http2 over TLS with a throwaway certificate (skipped without openssl),
 * and a TCP server that answers with a bare GOAWAY as nginx's h2c port does.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer as createH2cServer, createSecureServer, type Http2Server, type Http2SecureServer } from 'node:http2'
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https'
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net'
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls'
import { run } from '../src/run/run.js'
import { renderCsvSummary } from '../src/report/csv.js'
import { renderText } from '../src/report/text.js'
import { renderHtml } from '../src/report/html.js'
import { parseResult, renderJson } from '../src/results/result-json.js'
import type { RunResult } from '../src/results/run-result.js'
import { mergeProtocols } from '../src/results/wire-protocol.js'
import { startServer, type CountingServer } from './helpers/servers.js'
import { parseCsvObjects } from './helpers/csv.js'
import { stderrLines } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { NO_OPENSSL, selfSigned } from './helpers/tls-cert.js'
import { startNghttpdLikeTls, type NghttpdLikeTls } from './helpers/nghttpd-like-tls.js'
import { skipWithout } from './helpers/required-tool.js'

const tls = selfSigned()
const PLAIN = { requests: 4, warmup: 0, concurrency: 1, mode: 'plain' as const }

type Listening = Http2Server | Http2SecureServer | HttpsServer | TcpServer | TlsServer

async function listen<S extends Listening>(server: S, scheme: string): Promise<{ server: S; url: string; port: number }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return { server, url: `${scheme}://127.0.0.1:${port}`, port }
}

let h1: CountingServer
let h2c: { server: Http2Server; url: string; port: number }
let h2cStreams = 0
let goaway: { server: TcpServer; url: string }
const tcpSockets = new Set<Socket>()

before(async () => {
  h1 = await startServer()
  const h2cServer = createH2cServer()
  h2cServer.on('stream', (stream) => {
    h2cStreams++
    stream.respond({ ':status': 200 })
    stream.end('ok')
  })
  h2c = await listen(h2cServer, 'http')
  // What nginx's h2c port sends an HTTP/1.1 client: a GOAWAY (PROTOCOL_ERROR), no SETTINGS first.
  const goawayServer = createTcpServer((socket) => {
    tcpSockets.add(socket)
    socket.once('data', () => socket.end(Buffer.from([0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])))
  })
  goaway = await listen(goawayServer, 'http')
})

after(async () => {
  for (const s of tcpSockets) s.destroy()
  goaway.server.close()
  h2c.server.close()
  await h1.close()
})

/** run() is refused with exactly this line and exit code 2. */
async function refused(options: Parameters<typeof run>[0], line: string): Promise<void> {
  await assert.rejects(run(options), (err: Error & { exitCode?: number }) => {
    assert.equal(err.message, line)
    assert.equal(err.exitCode, 2)
    return true
  })
}

describe('an h2c-only server given without --http2', () => {
  test('is refused before the run: its SETTINGS in answer to an HTTP/1.1 request', async () => {
    await refused(
      { urls: [`${h2c.url}/`], ...PLAIN },
      `${h2c.url} speaks HTTP/2 only (it answered an HTTP/1.1 request with an HTTP/2 SETTINGS frame): add --http2`,
    )
    assert.equal(h2cStreams, 0, 'nothing reached the server as a request')
  })

  test('is refused before the run: a bare GOAWAY in answer to an HTTP/1.1 request', async () => {
    await refused(
      { urls: [`${goaway.url}/`], ...PLAIN },
      `${goaway.url} speaks HTTP/2 only (it answered an HTTP/1.1 request with an HTTP/2 GOAWAY frame): add --http2`,
    )
  })

  test('the CLI says so in one line and exits 2', async () => {
    const cli = await runMain([`${h2c.url}/`, '-n', '2', '--warmup', '0', '--no-save'], { timeoutMs: 20_000 })
    assert.equal(cli.code, 2, cli.stderr)
    assert.deepEqual(stderrLines(cli), [
      `hedgebench: ${h2c.url} speaks HTTP/2 only (it answered an HTTP/1.1 request with an HTTP/2 SETTINGS frame): add --http2`,
    ])
  })

  test('with --http2 it runs, and the result says h2c', async () => {
    const before = h2cStreams
    const result = await run({ urls: [`${h2c.url}/`], ...PLAIN, http2: true })
    assert.deepEqual(result.protocols, [{ url: `${h2c.url}/`, protocol: 'h2c' }])
    assert.equal(h2cStreams - before, result.phases.plain!.attempts)
  })
})

test('HTTP/1.1: the probe is not a request the server counts, and the result says http/1.1 in JSON, CSV, text and HTML', async () => {
  const before = h1.received
  const result = await run({ urls: [h1.url], ...PLAIN })
  assert.equal(h1.received - before, result.phases.plain!.attempts, "the server counted only the run's attempts")
  assert.deepEqual(parseResult(renderJson(result), 'run').protocols, [{ url: h1.url, protocol: 'http/1.1' }])
  const rows = parseCsvObjects(renderCsvSummary(result))
  assert.deepEqual(
    rows.map((r) => [r.scope, r.protocol]),
    [
      ['phase', 'http/1.1'],
      ['replica', 'http/1.1'],
    ],
  )
  assert.match(renderText(result).split('\n')[1]!, /· HTTP\/1\.1$/)
  assert.match(renderHtml(result), /<td class="text">HTTP\/1\.1<\/td>/)
})

test('a result saved before the protocol was recorded still renders: "protocol not recorded", CSV "unknown"', async () => {
  const result = await run({ urls: [h1.url], ...PLAIN })
  const { protocols: _recorded, ...old } = result
  const saved: RunResult = parseResult(renderJson(old as RunResult), 'old.json')
  assert.match(renderText(saved).split('\n')[1]!, /· protocol not recorded$/)
  assert.deepEqual(
    parseCsvObjects(renderCsvSummary(saved)).map((r) => r.protocol),
    ['unknown', 'unknown'],
  )
  assert.match(renderHtml(saved), /protocol not recorded/)
  assert.throws(
    () => parseResult(JSON.stringify({ ...result, protocols: [{ url: h1.url, protocol: 'h3' }] }), 'bad.json'),
    /bad\.json: invalid result: protocols\[0\] must be \{url, protocol\}/,
  )
})

describe('TLS: what ALPN chose', { skip: skipWithout(tls !== null, 'openssl', NO_OPENSSL) }, () => {
  let h1Tls: { server: HttpsServer; url: string; port: number }
  let h2Tls: { server: Http2SecureServer; url: string; port: number }
  before(async () => {
    h1Tls = await listen(
      createHttpsServer(tls!, (_req, res) => res.end('ok')),
      'https',
    )
    const secure = createSecureServer(tls!)
    secure.on('stream', (stream) => {
      stream.respond({ ':status': 200 })
      stream.end('ok')
    })
    h2Tls = await listen(secure, 'https')
  })
  after(() => {
    h1Tls.server.closeAllConnections()
    h1Tls.server.close()
    h2Tls.server.close()
  })

  test('--http2 against an HTTP/1.1-only TLS server is refused before the run', async () => {
    await refused(
      { urls: [`${h1Tls.url}/`], ...PLAIN, http2: true, insecure: true },
      `${h1Tls.url} does not speak HTTP/2 over TLS (ALPN chose http/1.1, not h2): is it an HTTP/1.1-only server? (run it without --http2)`,
    )
  })

  test('--http2 against an h2 TLS server records h2, beside an h2c replica: JSON, CSV, text', async () => {
    const result = await run({ urls: [`${h2Tls.url}/`, `${h2c.url}/`], ...PLAIN, http2: true, insecure: true })
    assert.deepEqual(result.protocols, [
      { url: `${h2Tls.url}/`, protocol: 'h2' },
      { url: `${h2c.url}/`, protocol: 'h2c' },
    ])
    const rows = parseCsvObjects(renderCsvSummary(result))
    assert.deepEqual(
      rows.map((r) => [r.scope, r.replica, r.protocol]),
      [
        ['phase', '', 'h2 h2c'],
        ['replica', `${h2Tls.url}/`, 'h2'],
        ['replica', `${h2c.url}/`, 'h2c'],
      ],
    )
    assert.match(renderText(result).split('\n')[1]!, /· HTTP\/2 \(h2 via ALPN\) \(1 replica\), HTTP\/2 \(h2c\) \(1 replica\)$/)
  })

  test('an h2-only TLS server given without --http2 is refused: add --http2', async () => {
    await refused(
      { urls: [`${h2Tls.url}/`], ...PLAIN, insecure: true },
      `${h2Tls.url} speaks HTTP/2 only (TLS ALPN offered http/1.1 and the server refused it): add --http2`,
    )
  })

  test('a cleartext scheme given for a TLS port: use https://', async () => {
    await refused(
      { urls: [`http://127.0.0.1:${h2Tls.port}/`], ...PLAIN, http2: true },
      `http://127.0.0.1:${h2Tls.port} speaks TLS, not HTTP/2 in cleartext (it closed the connection on the h2 preface, and a TLS handshake succeeded): use https://127.0.0.1:${h2Tls.port}`,
    )
  })

  test("a TLS scheme given for a cleartext port: one readable line, not OpenSSL's", async () => {
    await refused(
      { urls: [`https://127.0.0.1:${h2c.port}/`], ...PLAIN, http2: true },
      `https://127.0.0.1:${h2c.port} does not answer in TLS (ERR_SSL_WRONG_VERSION_NUMBER): is it a cleartext port? use http://127.0.0.1:${h2c.port}`,
    )
  })
})

describe('an h2-only TLS server that chooses no ALPN protocol for http/1.1, as nghttpd does', {
  skip: skipWithout(tls !== null, 'openssl', NO_OPENSSL),
}, () => {
  const H2_ONLY = (url: string): string =>
    `${url} speaks HTTP/2 only (TLS ALPN chose no protocol for http/1.1, the server closed the connection on an HTTP/1.1 request, and chose h2 when offered it): add --http2`
  let nghttpd: NghttpdLikeTls
  let silentTls: { server: TlsServer; url: string }
  let goawayTls: { server: TlsServer; url: string }
  before(async () => {
    nghttpd = await startNghttpdLikeTls(tls!)
    // No ALPN, and a close without a word on a request: not refused, for h2 is not what it speaks either.
    silentTls = await listen(
      createTlsServer(tls!, (socket) => socket.once('data', () => socket.end()).on('error', () => {})),
      'https',
    )
    // No ALPN, and an h2 GOAWAY in answer to HTTP/1.1, as nginx's h2c port answers in cleartext.
    goawayTls = await listen(
      createTlsServer(tls!, (socket) =>
        socket.once('data', () => socket.end(Buffer.from([0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]))).on('error', () => {}),
      ),
      'https',
    )
  })
  after(async () => {
    await nghttpd.close()
    silentTls.server.close()
    goawayTls.server.close()
  })

  test('is refused before the run in one line: add --http2', { timeout: 30_000 }, async () => {
    await refused({ urls: [`${nghttpd.url}/x`], ...PLAIN, insecure: true }, H2_ONLY(nghttpd.url))
    assert.equal(nghttpd.streams(), 0, 'nothing reached the server as a request')
  })

  test('the CLI says so in one line and exits 2', { timeout: 30_000 }, async () => {
    const cli = await runMain(['-k', `${nghttpd.url}/x`, '-n', '2', '--warmup', '0', '--no-save'], { timeoutMs: 20_000 })
    assert.equal(cli.code, 2, cli.stderr)
    assert.deepEqual(stderrLines(cli), [`hedgebench: ${H2_ONLY(nghttpd.url)}`])
  })

  test('with --http2 it runs over h2', { timeout: 30_000 }, async () => {
    const result = await run({ urls: [`${nghttpd.url}/x`], ...PLAIN, http2: true, insecure: true })
    assert.deepEqual(result.protocols, [{ url: `${nghttpd.url}/x`, protocol: 'h2' }])
    assert.equal(result.phases.plain!.errors, 0)
  })

  test('a TLS server with no ALPN that answers HTTP/1.1 with an h2 GOAWAY is refused the same way', { timeout: 30_000 }, async () => {
    await refused(
      { urls: [`${goawayTls.url}/`], ...PLAIN, insecure: true },
      `${goawayTls.url} speaks HTTP/2 only (it answered an HTTP/1.1 request with an HTTP/2 GOAWAY frame): add --http2`,
    )
  })

  test('a TLS server with no ALPN that closes on the probe, and no h2 either, is not refused: its failures are the result', { timeout: 30_000 }, async () => {
    const result = await run({ urls: [`${silentTls.url}/`], ...PLAIN, insecure: true })
    assert.equal(result.phases.plain!.errors, PLAIN.requests)
  })
})

test("merged shards keep a replica's protocol where they agree, and leave it unknown where they differ", () => {
  const shard = (b: 'h2' | 'http/1.1'): RunResult =>
    ({
      protocols: [
        { url: 'https://a/', protocol: 'h2c' },
        { url: 'https://b/', protocol: b },
      ],
    }) as RunResult
  assert.deepEqual(mergeProtocols([shard('h2'), shard('http/1.1')]), [{ url: 'https://a/', protocol: 'h2c' }])
  assert.equal(mergeProtocols([{} as RunResult]), undefined)
})
