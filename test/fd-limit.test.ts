/**
 * The generator's own open-file limit (issue 32): checked against what the
 * run may hold before it starts, and a connection the limit refuses
 * (EMFILE) counted as the generator's failure, never as the target's.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { resolveOptions } from '../src/run/resolve-options.js'
import { fdLimitWarning, readFdLimit, socketsNeeded } from '../src/run/fd-limit.js'
import type { RunResult } from '../src/results/run-result.js'
import { BIN, PLAIN_OUTPUT } from './helpers/cli.js'
import { startServer, type CountingServer } from './helpers/servers.js'

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             127431               127431               processes
Max open files            256                  524288               files
Max locked memory         8388608              8388608              bytes
`

const servers: CountingServer[] = []
after(() => Promise.all(servers.map((s) => s.close())))

test('the limit is read from /proc/self/limits; unlimited is Infinity; no file, no check', () => {
  assert.deepEqual(
    readFdLimit(() => LIMITS),
    { soft: 256, hard: 524288 },
  )
  assert.deepEqual(
    readFdLimit(() => LIMITS.replace('256                  524288', 'unlimited            unlimited')),
    { soft: Infinity, hard: Infinity },
  )
  assert.equal(
    readFdLimit(() => {
      throw new Error('ENOENT')
    }),
    null,
  )
  if (existsSync('/proc/self/limits')) assert.ok(readFdLimit()!.soft > 0)
})

test('-c × replicas (+ hedges) above the soft limit is warned before the run, with the ulimit -n that fixes it', () => {
  const limit = readFdLimit(() => LIMITS)
  const cfg = resolveOptions({ urls: ['http://127.0.0.1:1/', 'http://127.0.0.1:2/'], concurrency: 200, requests: 1000 }, 0)
  assert.equal(socketsNeeded(cfg), 200 * 2 + 200)
  const warning = fdLimitWarning(cfg, limit)!
  assert.match(
    warning,
    /^the open-file limit \(ulimit -n\) is 256, below the ~664 descriptors -c 200 over 2 replicas may need: .*EMFILE.*; run `ulimit -n 1024` in the shell before hedgebench \(Node cannot raise it itself\)$/,
  )
  assert.equal(fdLimitWarning(resolveOptions({ urls: ['http://127.0.0.1:1/'], concurrency: 50, requests: 100 }, 0), limit), null)
  assert.match(
    fdLimitWarning(cfg, { soft: 300, hard: 300 })!,
    /Node already raised its soft limit to the hard limit, 300: raise that before the run \(`ulimit -n 1024` where allowed, .*\) or lower -c$/,
  )
  assert.equal(fdLimitWarning(cfg, null), null)
  // HTTP/2 multiplexes: one connection per replica, whatever -c.
  assert.equal(fdLimitWarning(resolveOptions({ urls: ['http://127.0.0.1:1/'], concurrency: 5000, requests: 10000, http2: true }, 0), limit), null)
})

test("a run over its ulimit -n: the EMFILE failures are the generator's, apart from the target's errors and the replicas' tables", {
  skip: existsSync('/proc/self/limits') ? false : 'needs Linux',
}, async () => {
  const s = await startServer({ delayMs: 30 })
  servers.push(s)
  // A shell lowers the limit (soft and hard: Node raises its soft limit to the hard one) for the CLI alone; -c 200 cannot fit in 128.
  // (Not lower: Node's module loader opens the CLI's modules many at a time, and at 64 it can fail before main() runs.)
  const child = spawn(
    '/bin/sh',
    [
      '-c',
      `ulimit -n 128 && exec "${process.execPath}" "${BIN}" "$@"`,
      'sh',
      s.url,
      '-c',
      '200',
      '-n',
      '400',
      '--warmup',
      '0',
      '--mode',
      'plain',
      '-o',
      'json',
      '--no-save',
    ],
    { env: { ...process.env, ...PLAIN_OUTPUT }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  clearTimeout(timer)
  assert.equal(code, 0, stderr)
  assert.match(stderr, /^hedgebench: warning: the open-file limit \(ulimit -n\) is 128, below .*ulimit -n/m)
  const result = JSON.parse(stdout) as RunResult
  const plain = result.phases.plain!
  assert.ok((plain.generatorFailures?.EMFILE ?? 0) > 0, JSON.stringify(plain.generatorFailures))
  assert.equal(plain.requests + plain.generatorFailures!.EMFILE!, 400, 'every request is either measured or a generator failure')
  assert.equal(plain.errorKinds.EMFILE, undefined)
  assert.equal(plain.errors, 0, 'no target error: the target answered every request it received')
  for (const r of plain.replicas) assert.equal(r.errorKinds.EMFILE, undefined)
  assert.ok(result.warnings.some((w) => /ulimit -n/.test(w)))
})

test('an open-file limit too low for Node to load hedgebench itself: one line naming ulimit -n, exit 1, no stack trace', {
  skip: existsSync('/proc/self/limits') ? false : 'needs Linux',
  timeout: 60_000,
}, async () => {
  const child = spawn('/bin/sh', ['-c', `ulimit -n 30 && exec "${process.execPath}" "${BIN}" http://127.0.0.1:1/ -n 1 --no-save`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  child.stdout.resume()
  const timer = setTimeout(() => child.kill('SIGKILL'), 50_000)
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  clearTimeout(timer)
  assert.equal(code, 1, stderr)
  assert.equal(stderr, 'hedgebench: the open-file limit (ulimit -n) is too low to load hedgebench itself: raise it (`ulimit -n 1024`) and run it again\n')
})
