/**
 * Issue 44 item 5: a failed TLS handshake says why in one line, naming the
 * flag that fixes it, over HTTPS/1.1, HTTP/2 (--http2 on https://) and gRPC
 * (grpcs://): a server that asked for a client certificate and got none
 * names --cert and --key (before, HTTPS/1.1 ran with every request failed
 * and a server that closed without an alert was "not a gRPC server"); an
 * unknown CA names --cacert and -k; a wrong name names --cname. Servers on
 * 127.0.0.1 with a throwaway CA made by openssl (skipped without it); the
 * server's certificate names only replica.test.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer as createHttps, type Server as HttpsServer } from 'node:https'
import { createSecureServer, type Http2SecureServer } from 'node:http2'
import { createServer as createTls, type Server as TlsServer, type TLSSocket } from 'node:tls'
import type { AddressInfo } from 'node:net'
import { CALL, makeTestPki, startTestServer, writeTestSchema, type TestPki, type TestSchema, type TestServer } from './helpers/grpc-test-server.js'
import { stderrLines } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { skipWithout } from './helpers/required-tool.js'

const NAME = 'replica.test'
const pki: TestPki | null = makeTestPki(NAME)
let schema: TestSchema
let grpc: TestServer
let https: HttpsServer
let h2: Http2SecureServer
let silent: TlsServer
let received = 0

const listen = async (s: HttpsServer | Http2SecureServer | TlsServer): Promise<number> => {
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  return (s.address() as AddressInfo).port
}

const targets: Record<string, string[]> = {}

before(async () => {
  if (!pki) return
  const requireCert = { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: true }
  const count = (_req: unknown, res: { end(s: string): void }): void => {
    received++
    res.end('ok\n')
  }
  https = createHttps(requireCert, count)
  h2 = createSecureServer(requireCert, count)
  // Asks for a certificate, then closes without an alert when none came (as some servers do).
  silent = createTls({ ...requireCert, rejectUnauthorized: false, ALPNProtocols: ['h2'] }, (socket: TLSSocket) => {
    if (!socket.authorized) socket.destroy()
  })
  schema = writeTestSchema()
  grpc = await startTestServer({ schema, reflection: 'none', tls: { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requireClientCert: true } })
  targets['HTTPS/1.1'] = [`https://127.0.0.1:${await listen(https)}`]
  targets['HTTP/2'] = [`https://127.0.0.1:${await listen(h2)}`, '--http2']
  targets.gRPC = [grpc.url, '--call', CALL, '--proto', schema.proto, '-i', schema.importPath]
  const silentPort = await listen(silent)
  targets['HTTP/2, closed without an alert'] = [`https://127.0.0.1:${silentPort}`, '--http2']
  targets['gRPC, closed without an alert'] = [`grpcs://127.0.0.1:${silentPort}`, '--call', CALL, '--proto', schema.proto, '-i', schema.importPath]
})

after(async () => {
  await grpc?.close()
  for (const s of [https, h2, silent]) if (s) await new Promise<void>((resolve) => s.close(() => resolve()))
  schema?.remove()
  pki?.remove()
})

/** The run's exit code and its one stderr line, and that nothing reached a handler. */
async function refusal(target: string, tls: string[]): Promise<string> {
  const before = received + (grpc?.seen.length ?? 0)
  const r = await runMain([...targets[target]!, ...tls, '-n', '4', '--mode', 'plain', '--warmup', '0', '--no-save'])
  assert.equal(r.code, 1, `${target}: ${r.stderr}`)
  const lines = stderrLines(r)
  assert.equal(lines.length, 1, `${target}: ${r.stderr}`)
  assert.equal(received + grpc.seen.length, before, `${target}: no request sent`)
  return lines[0]!
}

const origin = (target: string): string => targets[target]![0]!.replace(/[.]/g, '\\.')

describe('TLS diagnosis', { skip: skipWithout(pki !== null, 'openssl', 'openssl not found (apt-get install openssl): cannot make test certificates') }, () => {
  for (const target of ['HTTPS/1.1', 'HTTP/2', 'gRPC']) {
    test(`${target}: no client certificate for a server that asked for one names --cert and --key`, async () => {
      const line = await refusal(target, ['--cacert', pki!.files.ca, '--cname', NAME])
      assert.match(
        line,
        new RegExp(
          `^hedgebench: TLS handshake with ${origin(target)} failed \\(.*certificate required\\): the server requires a client certificate \\(--cert FILE --key FILE\\)$`,
        ),
      )
    })

    test(`${target}: a certificate of a CA not trusted here names --cacert and -k`, async () => {
      const line = await refusal(target, ['--cname', NAME])
      assert.match(
        line,
        new RegExp(
          `^hedgebench: TLS handshake with ${origin(target)} failed \\(SELF_SIGNED_CERT_IN_CHAIN: .*\\): the server's certificate is not signed by a CA trusted here: pass --cacert FILE with the CA that signed it, or -k/--insecure to accept any certificate$`,
        ),
      )
    })

    test(`${target}: a certificate for another name names --cname`, async () => {
      const line = await refusal(target, ['--cacert', pki!.files.ca])
      assert.match(
        line,
        new RegExp(
          `^hedgebench: TLS handshake with ${origin(target)} failed \\(ERR_TLS_CERT_ALTNAME_INVALID: .*\\): the server's certificate is not for this name \\(it names DNS:replica\\.test\\): pass --cname NAME with a name it carries, or -k/--insecure to accept any certificate$`,
        ),
      )
    })
  }

  for (const target of ['HTTP/2, closed without an alert', 'gRPC, closed without an alert']) {
    test(`${target}: a server that asked for a certificate and closed is no "not HTTP/2" or "not a gRPC server"`, async () => {
      const line = await refusal(target, ['--cacert', pki!.files.ca, '--cname', NAME])
      assert.equal(
        line,
        `hedgebench: TLS handshake with ${targets[target]![0]} failed: the server asked for a client certificate, none was given, and it closed the connection: the server requires a client certificate (--cert FILE --key FILE)`,
      )
    })
  }
})
