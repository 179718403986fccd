/**
 * hey- and curl-style invocations, through the CLI against real servers on
 * 127.0.0.1: one value per -H (or --redact), wherever the URLs stand; `--`
 * ends the options; `run` names the default command; the header says when
 * -c was clamped to -n; -z with -n says which one won. Each case checks what
 * the servers received, not only the exit code: before the fix, `URL1 -H
 * "X-A: 1" URL2` exited 0 with URL2 sent as a header value. The command lines
 * go through main() in one child (runMain): what is tested is how they are
 * read, not the process (launcher.test.ts, interrupt.test.ts spawn it).
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { RunResult } from '../src/results/run-result.js'
import type { CliRun } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { startServer, type CountingServer } from './helpers/servers.js'

const servers: CountingServer[] = []

after(async () => {
  await Promise.all(servers.map((s) => s.close()))
})

async function server(): Promise<CountingServer> {
  const s = await startServer({ record: ['authorization', 'x-a', 'x-b', 'x-secret'] })
  servers.push(s)
  return s
}

/** Plain phase only, no warm-up, nothing saved: the request count is exactly -n. */
const QUIET = ['--mode', 'plain', '--warmup', '0', '--no-save']

function json(run: CliRun): RunResult {
  assert.equal(run.timedOut, false, run.stderr)
  assert.equal(run.code, 0, run.stderr)
  return JSON.parse(run.stdout) as RunResult
}

describe('hey-style invocations', { concurrency: 4 }, () => {
  test('-H before the URL: the URL is the target, the header is sent on every request', async () => {
    const s = await server()
    const result = json(await runMain(['-H', 'Authorization: Bearer x', s.url, '-n', '5', ...QUIET, '-o', 'json']))
    assert.deepEqual(result.config.urls, [s.url])
    assert.equal(result.phases.plain!.ok, 5)
    assert.equal(s.received, 5)
    assert.deepEqual(
      s.seen.map((h) => h.authorization),
      Array(5).fill('Bearer x'),
    )
  })

  test('-H between two URLs: both are replicas, both headers go on every request', async () => {
    const [a, b] = [await server(), await server()]
    const result = json(await runMain([a.url, '-H', 'X-A: 1', b.url, '-H', 'X-B: 2', '-n', '10', '-c', '1', ...QUIET, '-o', 'json']))
    assert.deepEqual(result.config.urls, [a.url, b.url])
    // Requests rotate over the replicas: 5 each.
    assert.deepEqual([a.received, b.received], [5, 5])
    for (const h of [...a.seen, ...b.seen]) assert.deepEqual([h['x-a'], h['x-b']], ['1', '2'])
  })

  test('--redact before the URL takes one header name, not the URL too', async () => {
    const s = await server()
    const run = await runMain(['--redact', 'X-Secret', s.url, '-H', 'X-Secret: s3cr3t', '-n', '3', ...QUIET, '-o', 'json'])
    const result = json(run)
    assert.deepEqual(result.config.urls, [s.url])
    assert.equal(s.received, 3)
    assert.deepEqual(
      s.seen.map((h) => h['x-secret']),
      ['s3cr3t', 's3cr3t', 's3cr3t'],
    )
    assert.ok(!run.stdout.includes('s3cr3t'), 'the value is never written')
  })

  test('`--` ends the options: what follows is a URL', async () => {
    const s = await server()
    const result = json(await runMain(['-n', '4', ...QUIET, '-o', 'json', '--', s.url]))
    assert.deepEqual(result.config.urls, [s.url])
    assert.equal(s.received, 4)
  })

  test('`run URL` is the default command, named', async () => {
    const s = await server()
    const result = json(await runMain(['run', s.url, '-H', 'X-A: 1', '-n', '3', ...QUIET, '-o', 'json']))
    assert.deepEqual(result.config.urls, [s.url])
    assert.equal(s.received, 3)
    assert.deepEqual(
      s.seen.map((h) => h['x-a']),
      ['1', '1', '1'],
    )
  })

  test('-c above -n: the header shows the effective -c and says it was clamped', async () => {
    const s = await server()
    const run = await runMain([s.url, '-c', '50', '-n', '10', ...QUIET, '-o', 'text'])
    assert.equal(run.code, 0, run.stderr)
    assert.equal(s.received, 10)
    assert.match(run.stdout, /· -c 10 \(-c 50 clamped to -n 10\) ·/)
  })

  test('-z with -n: -z wins, as in hey, and the report says so', async () => {
    const s = await server()
    // -c 3 with -n 1: were -n in force, -c would be clamped to 1 and one request sent; under -z each of the
    // three workers (started together) sends at least its first request. -n 1,000,000 cannot end a 200 ms phase either way.
    const short = json(await runMain([s.url, '-z', '500ms', '-n', '1', '-c', '3', ...QUIET, '-o', 'json']))
    assert.equal(short.config.requests, null)
    assert.equal(short.config.durationMs, 500)
    assert.ok(short.phases.plain!.requests >= 3, `requests ${short.phases.plain!.requests}`)
    const result = json(await runMain([s.url, '-z', '200ms', '-n', '1000000', '-c', '1', ...QUIET, '-o', 'json']))
    assert.ok(result.phases.plain!.requests < 1_000_000, `requests ${result.phases.plain!.requests}`)
    assert.ok(
      result.warnings.some((w) => /-z 200(\.0)? ?ms and -n 1000000 given: -z wins/.test(w)),
      result.warnings.join('\n'),
    )
  })

  test('interleaved phases: the header says -n is per phase on average; --max-attempts 1 warns that nothing is hedged', async () => {
    const s = await server()
    const run = await runMain([
      s.url,
      '-n',
      '20',
      '-c',
      '2',
      '--warmup',
      '0',
      '--schedule',
      'interleaved',
      '--max-attempts',
      '1',
      '--hedge-delay',
      '5ms',
      '--no-save',
    ])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /· -n 20 per phase on average · mode both \(interleaved\)/)
    assert.match(run.stdout + run.stderr, /--max-attempts 1 counts the original only: the hedged phase sends no hedge \(use 2 or more to hedge\)/)
  })

  test('options that had no effect are said: hedging flags with --mode plain, a delay beside --parallel, adaptive bounds without --adaptive, more workers than -c', async () => {
    const s = await server()
    const warnings = async (args: string[]): Promise<string[]> =>
      json(await runMain([s.url, '-n', '20', '-c', '2', '--warmup', '10', '--no-save', '-o', 'json', ...args])).warnings
    assert.ok((await warnings(['--mode', 'plain', '--tied'])).includes('--mode plain sends no hedge: the hedging options given (tied) had no effect'))
    assert.ok(
      (await warnings(['--mode', 'hedged', '--parallel', '--hedge-delay', '5ms'])).includes(
        '--hedge-delay has no effect with --parallel: every copy is sent at once',
      ),
    )
    assert.ok(
      (await warnings(['--mode', 'hedged', '--hedge-delay', '5ms', '--delay-max', '10ms'])).includes(
        '--adaptive-window, --delay-min and --delay-max bound an adaptive delay: without --adaptive they had no effect',
      ),
    )
    assert.ok(
      (await warnings(['--mode', 'plain', '--workers', '4'])).includes('--workers 4 with -c 2: 2 worker threads ran (one per request in flight at most)'),
    )
    // Nothing to say about a plain run with no hedging option.
    assert.deepEqual(
      (await warnings(['--mode', 'plain'])).filter((w) => /had no effect|worker threads ran/.test(w)),
      [],
    )
  })

  test('-t with a bare number is seconds, as in hey: -t 2 lets a 50 ms answer through; -t 20ms does not', async () => {
    const slow = await startServer({ delayMs: 50 })
    servers.push(slow)
    const seconds = json(await runMain([slow.url, '-t', '2', '-n', '3', '-c', '1', ...QUIET, '-o', 'json']))
    assert.equal(seconds.config.timeoutMs, 2000)
    assert.deepEqual([seconds.phases.plain!.ok, seconds.phases.plain!.errors], [3, 0])
    const run = await runMain([slow.url, '-t', '20ms', '-n', '3', '-c', '1', ...QUIET, '-o', 'json'])
    assert.equal(run.code, 0, run.stderr)
    const millis = JSON.parse(run.stdout) as RunResult
    assert.equal(millis.config.timeoutMs, 20)
    assert.equal(millis.phases.plain!.errors, 3, JSON.stringify(millis.phases.plain!.errorKinds))
  })
})
