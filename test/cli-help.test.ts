/**
 * What hey, oha and autocannon users expect of the command line (issue #16):
 * --version, a long form for every short flag, --help within 80 columns with
 * the subcommands in one style, and every flag of the README's tables listed
 * in docs/flags.md, the page generated from --help (test/docs-flags.test.ts
 * keeps that page equal to --help, so the tables cannot drift from it).
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { killAllChildren, runCli } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { startServer, type CountingServer } from './helpers/servers.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const servers: CountingServer[] = []
after(async () => {
  killAllChildren()
  await Promise.all(servers.map((s) => s.close()))
})

/** Every `-x` / `--name` in the first column of the tables under "## Flags explained" in docs/usage.md. */
function documentedFlags(): string[] {
  const readme = readFileSync(`${ROOT}docs/usage.md`, 'utf8')
  const start = readme.indexOf('## Flags explained')
  const end = readme.indexOf('\n## ', start + 1)
  assert.ok(start > 0 && end > start, 'docs/usage.md has a "## Flags explained" section')
  const flags = new Set<string>()
  for (const line of readme.slice(start, end).split('\n')) {
    if (!line.startsWith('| `')) continue
    const first = line.split(/(?<!\\)\|/)[1]!
    for (const code of first.matchAll(/`([^`]+)`/g)) for (const f of code[1]!.matchAll(/(?<![\w-])(--?[A-Za-z][\w-]*)/g)) flags.add(f[1]!)
  }
  return [...flags]
}

test('every flag in the tables of docs/usage.md is listed in the generated docs/flags.md', () => {
  const generated = readFileSync(`${ROOT}docs/flags.md`, 'utf8')
  const run = generated.slice(generated.indexOf('## hedgebench [run]'), generated.indexOf('\n## ', generated.indexOf('## hedgebench [run]') + 1))
  const flags = documentedFlags()
  // The tables hold ~45 flags; a parse that found a handful would prove nothing.
  assert.ok(flags.length > 40, `parsed only ${flags.length} flags from docs/usage.md: ${flags.join(' ')}`)
  const listed = new Set(run.match(/(?<![\w-])--?[A-Za-z][\w-]*/g))
  const missing = flags.filter((f) => !listed.has(f))
  assert.deepEqual(missing, [], `in docs/usage.md but not in the run's --help: ${missing.join(', ')}`)
  // For a gRPC target -m is metadata and the non-fatal default is UNAVAILABLE, as docs/grpc.md says.
  const oneLine = run.replace(/\s+/g, ' ')
  assert.match(oneLine, /-m, --method HTTP method \[default: GET\]; for a grpc:\/\/ target, metadata as JSON/)
  assert.match(oneLine, /-H, --header header "Name: value" \(repeatable: one value per -H, before or after the URLs\); for a grpc:\/\/ target, metadata/)
  assert.match(oneLine, /-d, --body request body; for a grpc:\/\/ target, the message as JSON/)
  assert.match(oneLine, /-T, --content-type Content-Type header \(HTTP only: a gRPC call is application\/grpc\)/)
  assert.match(
    oneLine,
    /--non-fatal-status statuses that trigger the next hedge at once; gRPC code names for a grpc:\/\/ target \[default: 502,503,504; gRPC: UNAVAILABLE\]/,
  )
})

test('--help fits 80 columns for every command, and the commands read in one style', async () => {
  for (const command of [[], ['report'], ['compare'], ['serve'], ['demo']]) {
    const help = await runCli([...command, '--help'], { env: { COLUMNS: '200' } })
    assert.equal(help.code, 0)
    const wide = help.stdout.split('\n').filter((l) => l.length > 80)
    assert.deepEqual(wide, [], `hedgebench ${command.join(' ')} --help has lines over 80 columns`)
    assert.doesNotMatch(help.stdout, /\[string\]|\[boolean\]/, 'types are noise here: every value is a string or a switch')
  }
  const top = (await runCli(['--help'])).stdout
  const block = top.slice(top.indexOf('Commands:'), top.indexOf('\n\n', top.indexOf('Commands:')))
  const descriptions = [...block.matchAll(/^ {2}hedgebench(?: \S+)*? {2,}(\S.*)$/gm)].map((m) => m[1]!)
  // run, report, compare, serve, demo, and any added later (merge): each in the same style.
  assert.ok(descriptions.length >= 5, block)
  for (const d of descriptions) assert.match(d, /^[a-z]/, `command descriptions start the same way (lower case verb): ${d}`)
})

test('--version and -V print the package version', async () => {
  const pkg = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version: string }
  for (const flag of ['--version', '-V']) {
    const run = await runCli([flag])
    assert.equal(run.code, 0)
    assert.equal(run.stdout.trim(), pkg.version)
  }
})

test('long forms run the same as the short flags', async () => {
  const s = await startServer({ record: ['x-a', 'content-type', 'accept'] })
  servers.push(s)
  const run = await runMain([
    s.url,
    '--requests',
    '7',
    '--concurrency',
    '2',
    '--timeout',
    '2s',
    '--method',
    'GET',
    '--header',
    'X-A: 1',
    '--content-type',
    'text/plain',
    '--accept',
    'text/csv',
    '--warmup',
    '0',
    '--mode',
    'plain',
    '--output',
    'json',
    '--no-save',
  ])
  assert.equal(run.code, 0, run.stderr)
  const result = JSON.parse(run.stdout) as { phases: { plain: { requests: number } }; config: { concurrency: number; timeoutMs: number } }
  assert.equal(result.phases.plain.requests, 7)
  assert.equal(result.config.concurrency, 2)
  assert.equal(result.config.timeoutMs, 2000)
  assert.equal(s.received, 7)
  assert.deepEqual(s.seen[0], { 'x-a': '1', 'content-type': 'text/plain', accept: 'text/csv' })
  // A short and a long form of one flag is the same flag given twice.
  const twice = await runMain([s.url, '-n', '3', '--requests', '4', '--no-save'])
  assert.equal(twice.code, 2)
  assert.match(twice.stderr, /given more than once/)
})

test('--duration and --rate are -z and -q', async () => {
  const s = await startServer()
  servers.push(s)
  // 40 req/s for 500 ms is 20 requests, give or take the pacer's first and last tick.
  const run = await runMain([s.url, '--duration', '500ms', '--rate', '40', '--warmup', '0', '--mode', 'plain', '-o', 'json', '--no-save'])
  assert.equal(run.code, 0, run.stderr)
  const result = JSON.parse(run.stdout) as { phases: { plain: { requests: number } }; config: { durationMs: number; rate: number } }
  assert.equal(result.config.durationMs, 500)
  assert.equal(result.config.rate, 40)
  assert.ok(Math.abs(result.phases.plain.requests - 20) <= 2, `requests ${result.phases.plain.requests}`)
})

test('a run says on stderr where it was saved; --no-save writes nothing and says nothing', async () => {
  const s = await startServer()
  servers.push(s)
  const base = mkdtempSync(join(tmpdir(), 'hedgebench-saved-'))
  try {
    const dir = join(base, 'runs')
    const saved = await runMain([s.url, '-n', '5', '-c', '1', '--warmup', '0', '--mode', 'plain', '--out-dir', dir, '--label', 'x'])
    assert.equal(saved.code, 0, saved.stderr)
    const m = /^saved (\S+\.json) and (\S+\.csv)$/m.exec(saved.stderr)
    assert.ok(m, saved.stderr)
    assert.ok(m[1]!.startsWith(dir) && existsSync(m[1]!) && existsSync(m[2]!), `${m[1]} and ${m[2]} exist in ${dir}`)
    assert.doesNotMatch(saved.stdout, /saved /, 'the message is on stderr only')
    const other = join(base, 'none')
    const unsaved = await runMain([s.url, '-n', '5', '-c', '1', '--warmup', '0', '--mode', 'plain', '--out-dir', other, '--no-save'])
    assert.equal(unsaved.code, 0, unsaved.stderr)
    assert.doesNotMatch(unsaved.stderr, /saved /)
    assert.equal(existsSync(other), false, '--no-save creates no directory')
  } finally {
    rmSync(base, { recursive: true, force: true })
  }
})
