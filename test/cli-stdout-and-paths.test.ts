/**
 * The CLI where the process meets its surroundings: a reader that closes
 * stdout early (`| jq` that exits, `| true`), Ctrl-C while waiting for
 * --start-at, output paths no directory can be made for (/proc). Every
 * load-sending case goes through bin/hedgebench.js and its launcher child,
 * as a user's would.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { closeSync, existsSync, openSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { YOUNG_GENERATION_FLAGS } from '../src/cli/launcher.js'
import { BIN, PLAIN_OUTPUT, runCli, startCli, stderrLines } from './helpers/cli.js'
import type { CountingServer } from './helpers/servers.js'
import { cliSession } from './helpers/cli-session.js'
import { until } from './helpers/until.js'
import { saveResult } from '../src/report/results-store.js'
import { makeRunResult } from './helpers/result-fixture.js'

const session = cliSession('hedgebench-stdout-')
const tempDir = (): Promise<string> => session.tempDir()
const server = (): Promise<CountingServer> => session.server({ delayMs: 1 })

interface Closed {
  code: number | null
  signal: NodeJS.Signals | null
  stderr: string
}

/** Runs the CLI with a stdout whose reader has already gone (as `| true` does): every write gets EPIPE. With `stdout`, that file instead. */
function withClosedStdout(args: string[], cwd: string, stdout?: number): Promise<Closed> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, ...PLAIN_OUTPUT }, stdio: ['ignore', stdout ?? 'pipe', 'pipe'] })
  child.stdout?.destroy()
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s))
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stderr })
    })
  })
}

test('a closed stdout ends the output quietly: the run is still saved, exit 0, no EPIPE stack', async () => {
  const s = await server()
  const dir = await tempDir()
  const r = await withClosedStdout([s.url, '-n', '50', '--warmup', '0', '-o', 'json', '--out-dir', 'out'], dir)
  assert.equal(r.code, 0, r.stderr)
  assert.doesNotMatch(r.stderr, /EPIPE|\n\s+at /, r.stderr)
  assert.match(r.stderr, /^saved .*\.json and .*\.csv$/m)
  const files = await readdir(join(dir, 'out'))
  assert.equal(files.filter((f) => f.endsWith('.json')).length, 1, `saved: ${files}`)
})

test('report to a closed stdout: exit 0, nothing on stderr', async () => {
  const dir = await tempDir()
  const saved = await saveResult(makeRunResult(), join(dir, 'r'))
  const r = await withClosedStdout(['report', saved.json], dir)
  assert.equal(r.code, 0, r.stderr)
  assert.equal(r.stderr, '')
})

test('Ctrl-C while waiting for --start-at: one line, nothing saved, exit 130, nothing sent', async () => {
  const s = await server()
  const dir = await tempDir()
  const out = join(dir, 'out')
  const cli = startCli([s.url, '-n', '5', '--warmup', '0', '--start-at', '+30s', '--out-dir', out], { cwd: dir, timeoutMs: 20_000 })
  // The out-dir is made just before the SIGINT handler is installed; the pause covers the
  // few synchronous steps between them (a signal before it would kill, not stop, the run).
  await until('the run checked its out-dir', () => existsSync(out))
  await new Promise((r) => setTimeout(r, 300))
  const received = s.received
  cli.child.kill('SIGINT')
  const r = await cli.done
  assert.equal(r.timedOut, false, 'stopped long before the agreed start')
  assert.equal(r.code, 130, r.stderr)
  assert.deepEqual(stderrLines(r), ['hedgebench: interrupted before the agreed start: nothing measured'])
  assert.equal(r.stdout, '', 'no report of an empty run')
  // An empty shard file would be taken up by `merge results/*`.
  assert.equal(existsSync(out), false, 'the out-dir the run created is taken back')
  assert.equal(s.received, received, 'nothing sent after the interruption')
})

test('report --html and merge --out where no file can be written (/proc): one line, exit 2', async () => {
  const dir = await tempDir()
  const saved = await saveResult(makeRunResult(), join(dir, 'r'))
  for (const [args, flag] of [
    [['report', saved.json, '--html', '/proc/hedgebench-x/r.html'], '--html "/proc/hedgebench-x/r.html"'],
    [['merge', saved.json, '--out', '/proc/hedgebench-x/m.json'], '--out "/proc/hedgebench-x/m.json"'],
  ] as const) {
    const r = await runCli([...args], { cwd: dir })
    assert.equal(r.code, 2, r.stderr)
    assert.deepEqual(stderrLines(r), [`hedgebench: ${flag}: cannot write: no such file or directory (ENOENT)`])
  }
})

test('stdout on a full disk (> /dev/full): one line, exit 1, no stack; a run is still saved', { skip: process.platform !== 'linux' }, async (t) => {
  const full = openSync('/dev/full', 'w')
  t.after(() => closeSync(full))
  const dir = await tempDir()
  const saved = await saveResult(makeRunResult(), join(dir, 'r'))
  const report = await withClosedStdout(['report', saved.json], dir, full)
  assert.equal(report.code, 1, report.stderr)
  assert.equal(report.stderr, 'hedgebench: cannot write the output to stdout (ENOSPC: no space left on device)\n')
  const s = await server()
  const r = await withClosedStdout([s.url, '-n', '50', '--warmup', '0', '--mode', 'plain', '-o', 'csv', '--out-dir', 'out'], dir, full)
  assert.equal(r.code, 1, r.stderr)
  assert.match(r.stderr, /^hedgebench: cannot write the output to stdout \(ENOSPC: no space left on device\)$/m)
  assert.match(r.stderr, /^saved .*\.json and .*\.csv$/m)
  assert.doesNotMatch(r.stderr, /\n\s+at /)
})

test('a full disk under --csv-requests (/dev/full) costs the log, not the run: printed, saved, one warning, exit 1', {
  skip: process.platform !== 'linux',
}, async () => {
  const s = await server()
  const dir = await tempDir()
  // 300 rows: more than the log's stream buffers, so the write reaches the full disk. One Node process (not the launcher's
  // two: not what is tested here), and a generous bound: a busy machine must not turn a slow start into a failure.
  const r = await runCli([s.url, '-n', '300', '-c', '4', '--warmup', '0', '--mode', 'plain', '-o', 'json', '--out-dir', 'out', '--csv-requests', '/dev/full'], {
    cwd: dir,
    nodeArgs: YOUNG_GENERATION_FLAGS,
    timeoutMs: 60_000,
  })
  assert.equal(r.code, 1, r.stderr)
  assert.equal(JSON.parse(r.stdout).phases.plain.requests, 300)
  assert.match(r.stderr, /^saved .*\.json and .*\.csv$/m)
  assert.match(r.stderr, /^hedgebench: request log "\/dev\/full" not written: ENOSPC; the result above is complete$/m)
  assert.doesNotMatch(r.stderr, /per-request rows in|\n\s+at /)
  assert.equal((await readdir(join(dir, 'out'))).filter((f) => f.endsWith('.json')).length, 1)
})
