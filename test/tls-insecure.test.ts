/**
 * HTTPS with a self-signed certificate (made at test time with openssl, for
 * 127.0.0.1 only): without -k the pre-run check fails like a refused
 * connection (exit 1, one line naming the URL and the TLS error, no request
 * sent, nothing saved); with -k/--insecure every request succeeds, in the
 * main thread and in worker threads. Before, every request failed and the
 * run exited 0.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RunResult } from '../src/results/run-result.js'
import { stderrLines } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { skipWithout } from './helpers/required-tool.js'
import { selfSigned } from './helpers/tls-cert.js'

/** A throwaway self-signed certificate for 127.0.0.1 (test/helpers/tls-cert.ts); null without openssl. */
const cert = selfSigned()
const hasOpenssl = cert !== null

let dir = ''
let server: Server
let url = ''
let received = 0

before(async () => {
  if (!cert) return
  dir = await mkdtemp(join(tmpdir(), 'hedgebench-tls-'))
  server = createServer(cert!, (req, res) => {
    received++
    req.resume()
    res.end('ok\n')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`
})

after(async () => {
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  if (dir) await rm(dir, { recursive: true, force: true })
})

const PLAIN = ['--mode', 'plain', '--warmup', '0', '--no-save', '-o', 'json']

describe('HTTPS with a self-signed certificate', {
  skip: skipWithout(hasOpenssl, 'openssl', 'openssl not found (apt-get install openssl): cannot make a test certificate'),
}, () => {
  test('without -k: the pre-run check fails, exit 1, one line naming the URL and the TLS error', async () => {
    const before = received
    const cwd = await mkdtemp(join(dir, 'run-'))
    const run = await runMain([url, '-n', '5', '--out-dir', 'results'], { cwd })
    assert.equal(run.code, 1, run.stderr)
    const lines = stderrLines(run)
    assert.equal(lines.length, 1, run.stderr)
    assert.match(
      lines[0]!,
      new RegExp(
        `^hedgebench: TLS handshake with ${url.replace(/\/$/, '').replace(/[.]/g, '\\.')} failed \\(DEPTH_ZERO_SELF_SIGNED_CERT: self[- ]signed certificate\\): the server's certificate is not signed by a CA trusted here: pass --cacert FILE with the CA that signed it, or -k/--insecure`,
      ),
    )
    assert.equal(run.stdout, '')
    assert.equal(received, before, 'no request sent')
    assert.deepEqual(await readdir(cwd), [], 'nothing saved for a run that never started')
  })

  test('-k: every request succeeds', async () => {
    const before = received
    const run = await runMain([url, '-k', '-n', '5', ...PLAIN])
    assert.equal(run.code, 0, run.stderr)
    const plain = (JSON.parse(run.stdout) as RunResult).phases.plain!
    assert.deepEqual([plain.ok, plain.errors], [5, 0])
    assert.equal(received - before, 5)
  })

  test('--insecure with worker threads: every request succeeds', async () => {
    const before = received
    const run = await runMain([url, '--insecure', '--workers', '2', '-n', '6', ...PLAIN])
    assert.equal(run.code, 0, run.stderr)
    const plain = (JSON.parse(run.stdout) as RunResult).phases.plain!
    assert.deepEqual([plain.ok, plain.errors], [6, 0])
    assert.equal(received - before, 6)
  })
})
