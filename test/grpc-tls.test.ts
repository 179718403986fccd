/**
 * TLS as ghz's users give it: --cacert (a private CA), --cert/--key (a
 * client certificate, for a server that requires one: mTLS), --cname and
 * --authority (the name the server's certificate carries when it is not the
 * URL's host). Real servers on 127.0.0.1 with a throwaway CA made by openssl
 * (the tests skip without it): a grpc-js server for grpcs://, node:https
 * for https:// (hedgebench's own HTTP/1.1 connection). The server's
 * certificate names only replica.test, so a run that reaches it at
 * 127.0.0.1 must be told the name.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { join } from 'node:path'
import { run } from '../src/run/run.js'
import { TargetUnreachableError, UsageError } from '../src/core/errors.js'
import type { RunOptions } from '../src/run/run-options.js'
import { CALL, makeTestPki, startTestServer, writeTestSchema, type TestPki, type TestSchema, type TestServer } from './helpers/grpc-test-server.js'
import { stderrLines } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { skipWithout } from './helpers/required-tool.js'

const NAME = 'replica.test'
const pki: TestPki | null = makeTestPki(NAME)
let schema: TestSchema
let mtls: TestServer
let https: Server
let httpsUrl = ''
const httpsClients: string[] = []

before(async () => {
  if (!pki) return
  schema = writeTestSchema()
  mtls = await startTestServer({ schema, reflection: 'none', tls: { key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requireClientCert: true } })
  https = createServer({ key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    httpsClients.push(String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? ''))
    req.resume()
    res.end('ok\n')
  })
  await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve))
  httpsUrl = `https://127.0.0.1:${(https.address() as AddressInfo).port}/`
})

after(async () => {
  await mtls?.close()
  if (https) await new Promise<void>((resolve) => https.close(() => resolve()))
  schema?.remove()
  pki?.remove()
})

const PLAIN = { mode: 'plain', warmup: 0, requests: 6, concurrency: 2, seed: 3 } as const

function client(p: TestPki): NonNullable<RunOptions['tls']> {
  return { ca: readFileSync(p.files.ca), cert: readFileSync(p.files.clientCert), key: readFileSync(p.files.clientKey) }
}

/** The mTLS server's URL and the call, as the CLI is given them. */
const mtlsCall = (): string[] => [mtls.url, '--call', CALL, '--proto', schema.proto, '-i', schema.importPath]

describe('TLS options', { skip: skipWithout(pki !== null, 'openssl', 'openssl not found (apt-get install openssl): cannot make test certificates') }, () => {
  test('grpcs:// mTLS from the CLI: --cacert, --cert/--key and --cname; the server saw the client certificate on every call', async () => {
    const before = mtls.seen.length
    const f = pki!.files
    const r = await runMain([
      ...mtlsCall(),
      '-d',
      '{"sku": "a"}',
      '--cacert',
      f.ca,
      '--cert',
      f.clientCert,
      '--key',
      f.clientKey,
      '--cname',
      NAME,
      '-n',
      '6',
      '-c',
      '2',
      '--mode',
      'plain',
      '--warmup',
      '0',
      '--no-save',
      '-o',
      'json',
    ])
    assert.equal(r.code, 0, r.stderr)
    const plain = JSON.parse(r.stdout).phases.plain
    assert.deepEqual([plain.ok, plain.errors], [6, 0])
    const calls = mtls.seen.slice(before)
    assert.equal(calls.length, 6)
    assert.deepEqual(new Set(calls.map((c) => c.clientCn)), new Set(['hedgebench-client']))
  })

  test('--authority: every call carries it as :authority, and the certificate is checked against it', async () => {
    const before = mtls.seen.length
    const result = await run({
      ...PLAIN,
      urls: [mtls.url],
      grpc: { call: CALL, proto: schema.proto, importPaths: [schema.importPath] },
      tls: { ...client(pki!), servername: NAME },
      headers: [['host', `${NAME}:8443`]],
    })
    assert.deepEqual([result.phases.plain!.ok, result.phases.plain!.errors], [6, 0])
    assert.deepEqual(new Set(mtls.seen.slice(before).map((c) => c.authority)), new Set([`${NAME}:8443`]))
  })

  test('without the name, the certificate (for replica.test only) is refused before the run', async () => {
    const before = mtls.seen.length
    await assert.rejects(
      run({ ...PLAIN, urls: [mtls.url], grpc: { call: CALL, proto: schema.proto, importPaths: [schema.importPath] }, tls: client(pki!) }),
      (err: Error) => {
        assert.ok(err instanceof TargetUnreachableError, String(err))
        assert.match(err.message, /TLS handshake with grpcs:\/\/127\.0\.0\.1:\d+ failed \(ERR_TLS_CERT_ALTNAME_INVALID/)
        return true
      },
    )
    assert.equal(mtls.seen.length, before, 'no call sent')
  })

  test('grpcs:// without the client certificate the server requires: refused before the run, naming --cert', { timeout: 60_000 }, async () => {
    const before = mtls.seen.length
    const { ca } = client(pki!)
    await assert.rejects(
      run({
        ...PLAIN,
        timeoutMs: 5000,
        urls: [mtls.url],
        grpc: { call: CALL, proto: schema.proto, importPaths: [schema.importPath] },
        tls: { ca: ca!, servername: NAME },
      }),
      (err: Error) => {
        assert.ok(err instanceof TargetUnreachableError, String(err))
        assert.match(
          err.message,
          /^TLS handshake with grpcs:\/\/127\.0\.0\.1:\d+ failed \(ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: tlsv13 alert certificate required\): the server requires a client certificate \(--cert FILE --key FILE\)$/,
        )
        return true
      },
    )
    assert.equal(mtls.seen.length, before, 'no call sent')
    // Reading the schema by reflection is the first connection such a run makes: the same line.
    await assert.rejects(
      run({ ...PLAIN, urls: [mtls.url], grpc: { call: CALL }, tls: { ca: ca!, servername: NAME } }),
      (err: Error) =>
        err instanceof TargetUnreachableError &&
        /^TLS handshake with grpcs:\/\/127\.0\.0\.1:\d+ failed \(ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: tlsv13 alert certificate required\): the server requires a client certificate/.test(
          err.message,
        ),
    )
  })

  test("https:// mTLS on hedgebench's own HTTP/1.1 connection, in worker threads too; without the certificate refused before the run", async () => {
    const before = httpsClients.length
    const { ca } = client(pki!)
    await assert.rejects(
      run({ ...PLAIN, urls: [httpsUrl], tls: { ca: ca!, servername: NAME } }),
      (err: Error) => err instanceof TargetUnreachableError && /the server requires a client certificate \(--cert FILE --key FILE\)$/.test(err.message),
    )
    assert.equal(httpsClients.length, before, 'the server requires a client certificate')
    for (const workers of [1, 2]) {
      const before = httpsClients.length
      const result = await run({ ...PLAIN, workers, urls: [httpsUrl], tls: { ...client(pki!), servername: NAME } })
      assert.deepEqual([result.phases.plain!.ok, result.phases.plain!.errors], [6, 0], `workers ${workers}`)
      assert.deepEqual(httpsClients.slice(before), Array(6).fill('hedgebench-client'), `workers ${workers}`)
    }
  })

  test('bad TLS input is one line before the run', async () => {
    const grpcOpts = { call: CALL, proto: schema.proto, importPaths: [schema.importPath] }
    const refused = async (o: Partial<RunOptions>, pattern: RegExp) =>
      assert.rejects(run({ ...PLAIN, urls: [mtls.url], grpc: grpcOpts, ...o }), (err: Error) => err instanceof UsageError && pattern.test(err.message))
    await refused({ tls: { cert: readFileSync(pki!.files.clientCert) } }, /^--cert needs --key/)
    await refused({ tls: { cert: readFileSync(pki!.files.clientCert), key: pki!.serverKey } }, /^--cert\/--key: .*private key/)
    await refused({ tls: { ca: 'not a certificate' } }, /^--cacert is not a PEM certificate/)
    await refused({ urls: ['grpc://127.0.0.1:1'], tls: { ca: pki!.ca } }, /^--cacert: only for TLS targets/)
    // A missing file: the CLI's one line, exit 2.
    const r = await runMain([...mtlsCall(), '--cacert', join(pki!.dir, 'missing.pem'), '--no-save'])
    assert.equal(r.code, 2, r.stderr)
    assert.deepEqual(stderrLines(r), [`hedgebench: cannot read --cacert ${join(pki!.dir, 'missing.pem')}: ENOENT`])
  })
})
