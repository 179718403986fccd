/**
 * Bad input through the CLI, as a user types it: every case exits 2 with
 * exactly one stderr line naming the bad value and what would be valid, no
 * stack trace, no request sent, and no file left behind (no out-dir files,
 * no --csv-requests or --html file).
 *
 * The cases run the CLI in one Node process (started with the launcher's
 * young-generation flags, so it does not start a second one): what is checked
 * here is main()'s validation, and the launcher only passes stdio and the
 * exit code through (launcher.test.ts, interrupt.test.ts and
 * cli-stdout-and-paths.test.ts run it). Half the start-up cost, 57 times.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { createServer as createNetServer } from 'node:net'
import { killAllChildren, runCli, stderrLines, type CliRun } from './helpers/cli.js'
import { runMainCases } from './helpers/main-cases.js'
import { startServer, type CountingServer } from './helpers/servers.js'

interface Case {
  name: string
  args: (url: string) => string[]
  /** Text the message must contain: the bad value as given. */
  value: string
  /** What would be valid. */
  valid: RegExp
  /** Leave out the output flags (report, compare). */
  bare?: boolean
}

/** Output flags added to every run case: if validation came too late, these would leave files. */
const OUTPUTS: Array<[string, string]> = [
  ['--out-dir', 'out'],
  ['--csv-requests', 'req.csv'],
  ['--html', 'report.html'],
  ['--label', 'bad'],
  ['--warmup', '1'],
  ['-n', '2'],
]

/** The case's own flags plus every output flag it does not set itself. */
function withOutputs(args: string[]): string[] {
  return [...OUTPUTS.filter(([flag]) => !args.includes(flag)).flat(), ...args]
}

const CASES: Case[] = [
  { name: 'invalid URL', args: () => ['not-a-url'], value: 'not-a-url', valid: /http:\/\/host/ },
  { name: 'ftp:// scheme', args: () => ['ftp://127.0.0.1/file'], value: 'ftp', valid: /only http, https, grpc and grpcs/ },
  { name: 'URL without host', args: () => ['http://'], value: '"http://"', valid: /http:\/\/host/ },
  { name: '-n 0', args: (u) => [u, '-n', '0'], value: '-n 0', valid: /whole number above 0/ },
  { name: '-n -5', args: (u) => [u, '-n', '-5'], value: '-n -5', valid: /whole number above 0/ },
  { name: '-n abc', args: (u) => [u, '-n', 'abc'], value: '"abc"', valid: /whole number/ },
  { name: '-c 0', args: (u) => [u, '-c', '0'], value: '-c 0', valid: /whole number above 0/ },
  { name: '--connections 0', args: (u) => [u, '--http2', '--connections', '0'], value: '--connections 0', valid: /whole number above 0/ },
  { name: '--connections -1', args: (u) => [u, '--http2', '--connections', '-1'], value: '--connections -1', valid: /whole number above 0/ },
  { name: '--connections abc', args: (u) => [u, '--http2', '--connections', 'abc'], value: '--connections "abc"', valid: /whole number/ },
  { name: '--connections above -c', args: (u) => [u, '--http2', '-c', '50', '--connections', '999'], value: '--connections 999', valid: /at most -c 50/ },
  { name: '--connections over HTTP/1.1', args: (u) => [u, '--connections', '2'], value: '--connections', valid: /HTTP\/2 and gRPC.*-c sets how many/ },
  { name: '-z 10x', args: (u) => [u, '-z', '10x'], value: '"10x"', valid: /250ms, 1\.5s, 2m/ },
  { name: '-t abc', args: (u) => [u, '-t', 'abc'], value: '"abc"', valid: /250ms, 1\.5s, 2m/ },
  { name: '--replicas with a URL', args: (u) => [u, '--replicas', '2'], value: '--replicas', valid: /each URL is a replica/ },
  { name: '-H without colon', args: (u) => [u, '-H', 'X-NoColon'], value: '"X-NoColon"', valid: /Name: value/ },
  { name: '-D missing file', args: (u) => [u, '-D', 'no-such-body.bin'], value: 'no-such-body.bin', valid: /readable file/ },
  { name: 'unknown flag', args: (u) => [u, '--bogus-flag'], value: 'bogus-flag', valid: /--help/ },
  { name: 'unknown --mode', args: (u) => [u, '--mode', 'fast'], value: '"fast"', valid: /plain, hedged, both/ },
  { name: 'unknown -o', args: (u) => [u, '-o', 'xml'], value: '"xml"', valid: /text, json, csv/ },
  { name: '--max-attempts 0', args: (u) => [u, '--max-attempts', '0'], value: '--max-attempts 0', valid: /whole number above 0/ },
  { name: '--hedge-budget 250', args: (u) => [u, '--hedge-budget', '250'], value: '250', valid: /0 to 100, or "off"/ },
  { name: '--hedge-delay p100', args: (u) => [u, '--hedge-delay', 'p100'], value: '"p100"', valid: /percentile like p90/ },
  { name: '--hedge-delay soon', args: (u) => [u, '--hedge-delay', 'soon'], value: '"soon"', valid: /250ms, 1\.5s, 2m/ },
  { name: '--profile nope', args: () => ['--profile', 'nope'], value: '"nope"', valid: /available: .*pi/ },
  { name: '--fail-on-errors abc', args: (u) => [u, '--fail-on-errors', 'abc'], value: '"abc"', valid: /0 to 100/ },
  { name: '--fail-on-errors 150', args: (u) => [u, '--fail-on-errors', '150'], value: '"150"', valid: /0 to 100/ },
  { name: 'unwritable --out-dir', args: (u) => [u, '--out-dir', 'afile/sub'], value: 'afile/sub', valid: /output directory/ },
  { name: 'unwritable --csv-requests', args: (u) => [u, '--csv-requests', 'afile/req.csv'], value: 'afile/req.csv', valid: /request log/ },
  { name: 'unwritable --html', args: (u) => [u, '--html', 'afile/report.html'], value: 'afile/report.html', valid: /--html/ },
  { name: 'a scalar flag given twice', args: (u) => [u, '-c', '4', '-c', '0'], value: '"4", "0"', valid: /give it once/ },
  { name: 'report of a non-JSON file', args: () => ['report', 'notjson.json'], value: 'notjson.json', valid: /JSON/, bare: true },
  { name: 'report of a wrong-schema JSON', args: () => ['report', 'wrong.json'], value: 'wrong.json', valid: /expected "hedgebench\/result@2"/, bare: true },
  { name: 'report of a missing file', args: () => ['report', 'missing.json'], value: 'missing.json', valid: /no such file/, bare: true },
  { name: 'compare of a non-JSON file', args: () => ['compare', 'notjson.json'], value: 'notjson.json', valid: /JSON/, bare: true },
  {
    name: 'compare of a wrong-schema JSON',
    args: () => ['compare', 'wrong.json', 'wrong.json'],
    value: 'wrong.json',
    valid: /expected "hedgebench\/result@2"/,
    bare: true,
  },
  { name: 'serve --port abc', args: () => ['serve', '--profile', 'pi', '--port', 'abc'], value: '--port "abc"', valid: /whole number/, bare: true },
  { name: 'serve --replicas 2x', args: () => ['serve', '--profile', 'pi', '--replicas', '2x'], value: '--replicas "2x"', valid: /whole number/, bare: true },
  { name: 'serve --seed 1.5', args: () => ['serve', '--profile', 'pi', '--seed', '1.5'], value: '--seed "1.5"', valid: /whole number/, bare: true },
  {
    name: 'serve --port given twice',
    args: () => ['serve', '--profile', 'pi', '--port', '0', '--port', '1'],
    value: '"0", "1"',
    valid: /give it once/,
    bare: true,
  },
  { name: 'demo -n abc', args: () => ['demo', '-n', 'abc'], value: '-n "abc"', valid: /whole number/, bare: true },
  { name: 'demo -n 0', args: () => ['demo', '-n', '0'], value: '-n "0"', valid: /whole number above 0/, bare: true },
  {
    name: 'invalid method -m "GE T" (hedged by default: invalid, not "not idempotent")',
    args: (u) => [u, '-m', 'GE T'],
    value: '"GE T"',
    valid: /one word of letters.*e\.g\. GET or POST/,
  },
  // The client frames requests and manages its connections: these failed every request locally, counted as target errors, exit 0.
  { name: '-m CONNECT', args: (u) => [u, '-m', 'CONNECT'], value: '-m CONNECT', valid: /tunnel through a proxy/ },
  {
    name: '-H "Transfer-Encoding: chunked"',
    args: (u) => [u, '-H', 'Transfer-Encoding: chunked'],
    value: '"Transfer-Encoding"',
    valid: /set by hedgebench itself/,
  },
  { name: '-H "Connection: upgrade"', args: (u) => [u, '-H', 'Connection: upgrade'], value: '"Connection: upgrade"', valid: /only "close" or "keep-alive"/ },
  { name: '-H "Expect: 100-continue"', args: (u) => [u, '-H', 'Expect: 100-continue'], value: '"Expect"', valid: /100-continue is not supported/ },
  { name: '-H with a control character in its value', args: (u) => [u, '-H', 'X-Title: a\x1bb'], value: '"X-Title"', valid: /control character/ },
  { name: 'negative --hedge-delay -5ms', args: (u) => [u, '--hedge-delay', '-5ms'], value: '"-5ms"', valid: /250ms, 1\.5s, 2m/ },
  { name: 'negative -t -1s', args: (u) => [u, '-t', '-1s'], value: '"-1s"', valid: /250ms, 1\.5s, 2m/ },
  {
    name: 'URL without a scheme (host:port)',
    args: (u) => [u.replace('http://', '')],
    value: '127.0.0.1:',
    valid: /did you mean http:\/\/127\.0\.0\.1:\d+\/ \?/,
  },
  {
    name: 'URL without a scheme (localhost:port)',
    args: (u) => [u.replace('http://127.0.0.1', 'localhost')],
    value: 'localhost:',
    valid: /did you mean http:\/\/localhost:\d+\/ \?/,
  },
  { name: 'compare with no files', args: () => ['compare'], value: 'compare', valid: /BEFORE\.json/, bare: true },
  { name: 'report with no file', args: () => ['report'], value: 'report', valid: /hedgebench report results\/FILE\.json/, bare: true },
  { name: 'compare with an unknown -o', args: () => ['compare', 'wrong.json', '-o', 'xml'], value: '"xml"', valid: /text, json, csv/, bare: true },
  // A flag last on the line without its value was read as "" and ignored (no HTML, an empty body).
  { name: '--html last, without its value', args: (u) => [u, '--html'], value: '--html', valid: /needs a value/ },
  { name: '-d last, without its value', args: (u) => [u, '-d'], value: '-d', valid: /needs a value/ },
  { name: '--html alone', args: () => ['--html'], value: '--html', valid: /needs a value/, bare: true },
  { name: 'merge --from-logs without its value', args: () => ['merge', '--from-logs'], value: '--from-logs', valid: /needs a value/, bare: true },
  { name: 'demo --profile without its value', args: () => ['demo', '--profile'], value: '--profile', valid: /needs a value/, bare: true },
  { name: 'serve --port without its value', args: () => ['serve', '--profile', 'pi', '--port'], value: '--port', valid: /needs a value/, bare: true },
  { name: '--config without its value', args: () => ['-n', '5', '--config'], value: '--config', valid: /needs a value/, bare: true },
  { name: '--config naming a missing file', args: () => ['--config', 'missing.json'], value: '"missing.json"', valid: /no such file/, bare: true },
  // Node's recursive mkdir spins forever under /proc: the 15 s timeout catches a hang.
  {
    name: '--out-dir under /proc',
    args: (u) => [u, '--out-dir', '/proc/hedgebench-x'],
    value: '/proc/hedgebench-x',
    valid: /no such file or directory \(ENOENT\)/,
  },
  {
    name: '--html under /proc',
    args: (u) => [u, '--html', '/proc/hedgebench-x/y.html', '--no-save'],
    value: '/proc/hedgebench-x/y.html',
    valid: /no such file or directory \(ENOENT\)/,
  },
  // Checked with one replica too, where ejection is off anyway.
  { name: '--eject-after 0, one URL', args: (u) => [u, '--eject-after', '0'], value: '--eject-after 0', valid: /whole number above 0/ },
  { name: '--eject-for 0, one URL', args: (u) => [u, '--eject-for', '0'], value: '--eject-for 0', valid: /above 0/ },
  // -o json means stdout is JSON: frames after it would break every parser.
  { name: '-o json with --frames', args: (u) => [u, '-o', 'json', '--frames'], value: '-o json', valid: /with -o text/ },
  // A timer longer than 2^31-1 ms fires at once (and Node warns once per timer): refused before the run.
  { name: '--deadline 597h', args: (u) => [u, '--deadline', '597h'], value: '--deadline 597h', valid: /at most 596h/ },
  { name: '-t 720h', args: (u) => [u, '-t', '720h'], value: '-t 720h', valid: /at most 596h/ },
  { name: '--hedge-delay 720h', args: (u) => [u, '--hedge-delay', '720h'], value: '--hedge-delay 720h', valid: /at most 596h/ },
  { name: '-z 720h', args: (u) => [u, '-z', '720h'], value: '-z 720h', valid: /at most 596h/ },
  { name: '--eject-for 600h', args: (u) => [u, '--eject-for', '600h'], value: '--eject-for 600h', valid: /at most 596h/ },
  { name: 'two -H Host', args: (u) => [u, '-H', 'Host: a.example', '-H', 'host: b.example'], value: '"a.example", "b.example"', valid: /give it once/ },
  { name: '-o csv with --frames', args: (u) => [u, '-o', 'csv', '--frames'], value: '-o csv', valid: /with -o text/ },
]

const FIXTURES = ['afile', 'notjson.json', 'wrong.json']

async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true })
  return entries.map((e) => relative(dir, join(dir, e))).sort()
}

let server: CountingServer
const dirs: string[] = []

before(async () => {
  server = await startServer()
})

after(async () => {
  killAllChildren()
  await server.close()
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })))
})

/** Each case's own folder with the fixtures, and its command line. */
const prepared = CASES.map((c) => ({ c, dir: '', args: [] as string[] }))
let runs: CliRun[] = []

before(async () => {
  for (const p of prepared) {
    p.dir = await mkdtemp(join(tmpdir(), 'hedgebench-bad-'))
    dirs.push(p.dir)
    await writeFile(join(p.dir, 'afile'), 'a regular file\n')
    await writeFile(join(p.dir, 'notjson.json'), 'this is { not json\n')
    await writeFile(join(p.dir, 'wrong.json'), JSON.stringify({ schema: 'something/else@2', phases: {} }))
    p.args = p.c.bare ? p.c.args(server.url) : withOutputs(p.c.args(server.url))
  }
  // Every case through main() in one Node process, one after another (main-driver.ts): a case
  // that hung (Node's recursive mkdir under /proc spins forever) would time the whole batch out.
  runs = runMainCases(prepared.map((p) => ({ args: p.args, cwd: p.dir })))
})

describe('bad input: exit 2, one line naming the value and what is valid, nothing left behind', () => {
  for (const [i, p] of prepared.entries()) {
    const c = p.c
    test(c.name, async () => {
      const { dir, args } = p
      const run = runs[i]!
      const lines = stderrLines(run)
      const shown = `args ${JSON.stringify(args)}\nstderr: ${run.stderr}`
      assert.equal(run.timedOut, false, shown)
      assert.equal(run.code, 2, shown)
      assert.equal(lines.length, 1, `exactly one stderr line\n${shown}`)
      const line = lines[0]!
      assert.match(line, /^hedgebench: \S/, shown)
      assert.ok(!/^\s+at /m.test(run.stderr), `no stack trace\n${shown}`)
      assert.ok(line.includes(c.value), `names the bad value ${c.value}\n${shown}`)
      assert.ok(!line.includes('NaN'), `names the value as given, not as NaN\n${shown}`)
      assert.match(line, c.valid, `says what would be valid\n${shown}`)
      assert.equal(run.stdout, '', 'nothing on stdout')
      assert.deepEqual(await listTree(dir), FIXTURES, 'no file or directory left behind')
    })
  }
})

test('-c above -n is allowed and clamped to -n requests in flight', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-bad-'))
  dirs.push(dir)
  const slow = await startServer({ delayMs: 30 })
  t.after(() => slow.close())
  let inFlight = 0
  let peak = 0
  slow.server.on('request', (_req, res) => {
    peak = Math.max(peak, ++inFlight)
    res.on('close', () => inFlight--)
  })
  const run = await runCli([slow.url, '-n', '3', '-c', '10', '--mode', 'plain', '--warmup', '0', '-o', 'json', '--no-save'], { cwd: dir })
  assert.equal(run.code, 0, run.stderr)
  const result = JSON.parse(run.stdout) as { phases: { plain: { requests: number; errors: number } } }
  assert.equal(result.phases.plain.requests, 3)
  assert.equal(result.phases.plain.errors, 0)
  assert.equal(slow.received, 3)
  assert.ok(peak <= 3, `at most 3 in flight, saw ${peak}`)
})

test('no request reached the target from any bad-input case', () => {
  assert.equal(server.received, 0)
})

test('serve on ports of which one is taken: one line naming the busy port (not the first), exit 2, nothing left listening', async (t) => {
  // Three ports below Linux's ephemeral range (where other tests' servers on port 0 land), the first and last free, the
  // second taken by us: the second of pi's three replicas finds it busy. Bounded tries if another process holds one.
  const listen = (port: number): Promise<ReturnType<typeof createNetServer> | null> =>
    new Promise((resolve) => {
      const s = createNetServer()
      s.once('error', () => resolve(null)).listen(port, '127.0.0.1', () => resolve(s))
    })
  let first = 0
  let blocker: ReturnType<typeof createNetServer> | null = null
  for (let attempt = 0; attempt < 20 && !blocker; attempt++) {
    const base = 10_000 + ((process.pid * 7 + attempt * 97) % 6000) * 3
    const [a, c] = [await listen(base), await listen(base + 2)]
    a?.close()
    c?.close()
    if (a && c) [first, blocker] = [base, await listen(base + 1)]
  }
  assert.ok(blocker, 'three free ports found')
  t.after(() => blocker!.close())
  const run = await runCli(['serve', '--profile', 'pi', '--port', String(first)], { timeoutMs: 15_000 })
  assert.equal(run.code, 2, run.stderr)
  assert.deepEqual(stderrLines(run), [`hedgebench: cannot listen on 127.0.0.1 from port ${first}: port ${first + 1} is already in use`])
  // The first replica's port was let go again.
  const again = createNetServer()
  await new Promise<void>((resolve, reject) => again.once('error', reject).listen(first, '127.0.0.1', resolve))
  again.close()
})

test('a switch given a value, a flag given twice in report/compare, -o without a value: one line, exit 2', async () => {
  const cases: Array<[string[], RegExp]> = [
    [
      ['http://127.0.0.1:9/', '--parallel=yes', '--no-save'],
      /^hedgebench: --parallel is a switch and takes no value \(got "yes"\): give --parallel or --no-parallel$/,
    ],
    [['report', 'x.json', '-o', 'json', '-o', 'csv'], /^hedgebench: -o given more than once \("json", "csv"\): give it once$/],
    [['report', 'x.json', '-o'], /^hedgebench: -o needs a value$/],
    [['compare', 'a.json', 'b.json', '--phase', 'plain', '--phase', 'hedged'], /^hedgebench: --phase given more than once/],
    [['http://127.0.0.1:9/', '--fanout', '1000000', '--no-save'], /^hedgebench: invalid --fanout 1000000 \(at most 1000 calls per request\)$/],
    [['http://127.0.0.1:9/', '--hedge-header', 'bad name', '--no-save'], /^hedgebench: invalid --hedge-header "bad name"/],
    [['http://127.0.0.1:9/', '--deadline', '0', '--no-save'], /^hedgebench: invalid --deadline 0 ms/],
  ]
  const runs = runMainCases(cases.map(([args]) => ({ args, cwd: process.cwd() })))
  for (const [i, [args, message]] of cases.entries()) {
    const run = runs[i]!
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
    assert.deepEqual(stderrLines(run).length, 1, run.stderr)
    assert.match(stderrLines(run)[0]!, message)
  }
})
