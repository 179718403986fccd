/**
 * Every `hedgebench ...` command in README.md and docs/*.md runs here and
 * exits as its page says, so a page cannot name a flag the CLI refuses
 * (issue 44: docs/grpc.md offered `-o html` where only a sweep takes it).
 * docs/flags.md is left out: it is --help itself (docs-flags.test.ts).
 *
 * Which lines: in a fenced block (any language but a program's: those are
 * docs-snippets.test.ts's) or an indented one, a line starting with
 * `hedgebench`, after an optional `$ ` prompt or `npx `, with its `\`
 * continuations (test/helpers/docs-commands.ts, extractCommands).
 *
 * What a page says about the exit code: 0 unless an HTML comment on the
 * lines just before the block says otherwise:
 *   <!-- docs-commands: exit 0,1 -->        every command of the block
 *   <!-- docs-commands: 3: exit 1 -->       the block's third command
 *   <!-- docs-commands: 2: skip: why -->    not run here, for that reason
 * A skip is allowed only for the commands listed in SKIPPED below.
 *
 * How a command is run: as the page writes it, by /bin/sh (quotes, globs,
 * `$(...)`, `;`, `>` as a user's shell reads them), one block after another
 * in a directory of its own, with `hedgebench` on PATH being a shim that
 * runs the built CLI and records each exit code. Substitutions, so that it
 * runs here, against 127.0.0.1 only, in a second or two:
 *   - placeholders: `URL1`..`URL9` are the test's HTTP replicas, `grpc://…`
 *     its three gRPC replicas, and `…` elsewhere (a file name's stamp) is `*`;
 *     a trailing `&` is dropped (the shim stops what would serve forever);
 *   - every http:// and grpc:// URL's origin becomes one of the test's
 *     simulated replicas (src/sim, a fast profile; the first origin named
 *     the first replica...), path and query kept: other hosts run here too;
 *   - a run or a sweep: -n at most 40 (added when neither -n nor -z is
 *     given), -z 1s, -q at most 400, --warmup at most 20 (added when not
 *     given: a profile's own warm-up is 500); a watch: -z 1s (added: it
 *     would run until Ctrl-C), -q and --warmup as a run's; demo: -n at most
 *     40; --metrics-port 127.0.0.1:0;
 *   - serve: --port 0 (free ports), and SIGINT once it says it is ready:
 *     it must start and then stop with exit 0, as after a user's Ctrl-C;
 *   - the files a command reads: each block's directory starts with saved
 *     runs made once by this test against the same replicas:
 *     results/2026-11-30T10-00-00Z-before.json and -after.json (one run,
 *     twice, as docs/usage.md names it), results/*-shard-0.json and
 *     -shard-1.json (two shards), before.json and merged.json (their merge),
 *     staging.txt (docs/targets.md's targets file: GET /a and GET /b),
 *     calls.txt (its gRPC one: two messages of the simulated replicas'
 *     hedgebench.sim.v1.Replica/Work), and proto/ (the repository's).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { startTarget, type Target } from '../src/sim/target.js'
import { parseProfile } from '../src/sim/profile.js'
import { boundArgs, type DocCommand, extractCommands, fillPlaceholders, type Replicas } from './helpers/docs-commands.js'

const exec = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const HELPER = fileURLToPath(new URL('./helpers/docs-commands.js', import.meta.url))
const BIN = join(ROOT, 'bin', 'hedgebench.js')

/** The commands a page may mark as not run here, and why they cannot be: [page, the command's start]. */
const SKIPPED: Array<[string, string]> = [
  // A user's own gRPC service by reflection: the simulated replicas serve hedgebench.sim.v1.Replica only.
  ['README.md', 'hedgebench -n 1000 --call shop.Inventory/Get'],
]

/** Blocks run at a time: each command mostly waits on its replicas and its Node start-up. */
const AT_ONCE = 3

/** A fast target: the commands are checked for what they are refused or accept, not for what they measure. */
const FAST = parseProfile({
  name: 'docs',
  description: 'fast replicas for the docs commands test',
  replicas: 3,
  seed: 7,
  model: { base: { type: 'uniform', min: 1, max: 3 }, stalls: [] },
})

async function pages(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md') && f !== 'flags.md').sort()
  return ['README.md', ...docs.map((f) => `docs/${f}`)]
}

test('the extractor finds command lines in fenced and indented blocks, with continuations and annotations', () => {
  const text = [
    'Run `hedgebench --nope` in prose: not a command line.',
    '```sh',
    'hedgebench -n 5 http://a/  # one',
    'npx hedgebench --help',
    'echo hedgebench',
    '```',
    '<!-- docs-commands: exit 0,1 -->',
    '<!-- docs-commands: 2: skip: elsewhere -->',
    '',
    '```',
    '$ hedgebench sweep URL1 \\',
    '    -n 9',
    '  hedgebench      grpc-js',
    'hedgebench compare a.json',
    '```',
    '```ts',
    'hedgebench()',
    '```',
    '',
    '    hedgebench --profile pi   # indented',
    '      output',
  ].join('\n')
  assert.deepEqual(extractCommands('x.md', text), [
    { source: 'x.md', line: 3, block: 2, command: 'hedgebench -n 5 http://a/  # one', exits: [0] },
    { source: 'x.md', line: 4, block: 2, command: 'hedgebench --help', exits: [0] },
    { source: 'x.md', line: 11, block: 10, command: 'hedgebench sweep URL1 \\\n    -n 9', exits: [0, 1] },
    { source: 'x.md', line: 14, block: 10, command: 'hedgebench compare a.json', exits: [0, 1], skip: 'elsewhere' },
    { source: 'x.md', line: 20, block: 20, command: 'hedgebench --profile pi   # indented', exits: [0] },
  ])
  assert.throws(() => extractCommands('y.md', '<!-- docs-commands: exit one -->\n```sh\nhedgebench\n```'), /y\.md:1: an annotation not understood/)
})

test('the bounds: URLs to the replicas by origin, -n, -z, -q and --warmup bounded or added, serve on free ports', () => {
  const r: Replicas = { http: ['http://127.0.0.1:1/', 'http://127.0.0.1:2/'], grpc: ['grpc://127.0.0.1:3'] }
  assert.deepEqual(boundArgs(['-n', '4000', 'http://a:8080/x?q=1', 'http://b:8080/x?q=1', '--server-stats', 'http://a:8080/s'], r), [
    '-n',
    '40',
    'http://127.0.0.1:1/x?q=1',
    'http://127.0.0.1:2/x?q=1',
    '--server-stats',
    'http://127.0.0.1:1/s',
    '--warmup',
    '20',
  ])
  assert.deepEqual(boundArgs(['sweep', '-z', '30s', '-q=2000', '--warmup', '5', 'grpc://a:50051'], r), [
    'sweep',
    '-z',
    '1s',
    '-q=400',
    '--warmup',
    '5',
    'grpc://127.0.0.1:3',
  ])
  assert.deepEqual(boundArgs(['--profile', 'pi'], r), ['--profile', 'pi', '-n', '40', '--warmup', '20'])
  assert.deepEqual(boundArgs(['serve', '--profile', 'pi', '--port', '8080'], r), ['serve', '--profile', 'pi', '--port', '0'])
  assert.deepEqual(boundArgs(['demo', '--http2'], r), ['demo', '--http2', '-n', '40'])
  assert.deepEqual(boundArgs(['report', 'a.json', '-o', 'json'], r), ['report', 'a.json', '-o', 'json'])
  assert.deepEqual(boundArgs(['--help'], r), ['--help'])
  assert.equal(
    fillPlaceholders('hedgebench sweep URL1 URL2 grpc://… results/…-before.json --server-stats URL1/s &  # bg', r),
    'hedgebench sweep http://127.0.0.1:1 http://127.0.0.1:2 grpc://127.0.0.1:3 results/*-before.json --server-stats http://127.0.0.1:1/s  # bg',
  )
})

interface Fixtures {
  dir: string
  replicas: Replicas
  targets: Target[]
}

async function makeFixtures(): Promise<Fixtures> {
  const http = await startTarget({ profile: FAST })
  const grpc = await startTarget({ profile: FAST, grpc: true })
  const replicas = { http: http.urls, grpc: grpc.urls }
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-docs-'))
  const results = join(dir, 'results')
  const cli = (args: string[]) => exec(process.execPath, [BIN, ...args, '--out-dir', results, '-o', 'json'], { cwd: dir, timeout: 60_000 })
  // Enough requests that a compare can judge p99 (the pages' gates compare these with themselves: no change).
  const base = [...replicas.http, '-n', '1000', '--warmup', '20', '--seed', '1']
  await cli([...base, '--label', 'before'])
  // One shard after the other: two at once beside the replicas could saturate a generator on 2 cores, and a saturated
  // fixture makes every page's gate on it inconclusive (exit 3) where the page says 0.
  for (const i of [0, 1]) await cli([...base, '--shard', `${i}/2`, '--run-id', 'docs-fixture', '--label', `shard-${i}`])
  await exec(
    process.execPath,
    [BIN, 'merge', ...(await readdir(results)).filter((f) => /-shard-\d\.json$/.test(f)).map((f) => join(results, f)), '--out', join(dir, 'merged.json')],
    {
      cwd: dir,
      timeout: 60_000,
    },
  )
  await copyFile(join(dir, 'merged.json'), join(dir, 'before.json'))
  const before = (await readdir(results)).find((f) => f.endsWith('-before.json'))!
  await rename(join(results, before), join(results, '2026-11-30T10-00-00Z-before.json'))
  await copyFile(join(results, '2026-11-30T10-00-00Z-before.json'), join(results, '2026-11-30T10-00-00Z-after.json'))
  for (const f of await readdir(results)) if (f.endsWith('.csv')) await rm(join(results, f))
  // docs/targets.md's targets file: two paths of the simulated replicas.
  await writeFile(join(dir, 'staging.txt'), 'GET /a\n\nGET /b\n')
  // Its gRPC targets file: the simulated replicas serve one method, called with two messages.
  await writeFile(
    join(dir, 'calls.txt'),
    'CALL hedgebench.sim.v1.Replica/Work\n# weight: 3\n{"payload": "small"}\n\nCALL hedgebench.sim.v1.Replica/Work\n# hedge-delay: p90\n{"payload": "large", "replyBytes": 4096}\n',
  )
  // The shim: `hedgebench` on the commands' PATH.
  const bin = join(dir, '.bin')
  await mkdir(bin)
  await writeFile(join(bin, 'hedgebench'), `#!${process.execPath}\nimport { shim } from ${JSON.stringify(HELPER)}\nawait shim(process.argv.slice(2))\n`)
  await chmod(join(bin, 'hedgebench'), 0o755)
  return { dir, replicas, targets: [http, grpc] }
}

interface Outcome {
  command: DocCommand
  codes: number[]
  output: string
  ms: number
}

/** One block's commands in order, in a copy of the fixtures. */
async function runBlock(block: DocCommand[], f: Fixtures, n: number): Promise<Outcome[]> {
  const cwd = join(f.dir, `block-${n}`)
  await mkdir(cwd)
  await cp(join(f.dir, 'results'), join(cwd, 'results'), { recursive: true })
  for (const file of ['before.json', 'merged.json', 'staging.txt', 'calls.txt']) await copyFile(join(f.dir, file), join(cwd, file))
  await symlink(join(ROOT, 'proto'), join(cwd, 'proto'))
  const out: Outcome[] = []
  for (const [i, command] of block.entries()) {
    const log = join(cwd, `.exit-${i}`)
    await writeFile(log, '')
    const line = fillPlaceholders(command.command, f.replicas)
    const started = performance.now()
    const env = {
      ...process.env,
      NO_COLOR: '1',
      PATH: `${join(f.dir, '.bin')}:${process.env.PATH}`,
      DOCS_COMMANDS_LOG: log,
      DOCS_COMMANDS_REPLICAS: JSON.stringify(f.replicas),
    }
    const r = await exec('/bin/sh', ['-c', line], { cwd, env, timeout: 60_000, maxBuffer: 64 << 20 }).then(
      (ok) => ok.stderr,
      (err: { stderr?: string; message: string }) => err.stderr ?? err.message,
    )
    const codes = (await readFile(log, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { code: number }).code)
    out.push({ command, codes, output: r.trim().split('\n').slice(-3).join(' | '), ms: performance.now() - started })
  }
  return out
}

test('every hedgebench command of the README and docs/*.md runs against the simulated replicas and exits as its page says', async (t) => {
  const commands: DocCommand[] = []
  for (const page of await pages()) commands.push(...extractCommands(page, await readFile(join(ROOT, page), 'utf8')))
  // About 45 commands today, in every page that shows one: finding a handful would prove nothing.
  assert.ok(commands.length >= 40, `found ${commands.length} commands`)
  const skipped = commands.filter((c) => c.skip).map((c) => [c.source, c.command])
  assert.deepEqual(
    skipped.map(([source, command]) => [source, SKIPPED.find(([s, start]) => s === source && command!.startsWith(start))?.[1] ?? command]),
    SKIPPED,
    'a command is skipped only when it is listed in SKIPPED, and every listed one is marked',
  )
  const started = performance.now()
  const f = await makeFixtures()
  t.diagnostic(`fixtures: ${Math.round(performance.now() - started)} ms`)
  t.after(async () => {
    await Promise.all(f.targets.map((x) => x.close()))
    await rm(f.dir, { recursive: true, force: true })
  })
  // A block's commands share a directory (a run, then the report of it); blocks are independent.
  const blocks = new Map<string, DocCommand[]>()
  for (const c of commands.filter((c) => !c.skip)) {
    const key = `${c.source}#${c.block}`
    blocks.set(key, [...(blocks.get(key) ?? []), c])
  }
  // The demos and sweeps take longest (several phases each): started first, so that the test does not end on one of them.
  const long = (b: DocCommand[]) => (b.some((c) => /^hedgebench (demo|sweep)/m.test(c.command)) ? 0 : 1)
  const queue = [...blocks.values()].map((b, n) => [b, n] as const).sort(([a], [b]) => long(a) - long(b))
  const outcomes: Outcome[] = []
  await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) outcomes.push(...(await runBlock(next[0], f, next[1])))
    }),
  )
  // Where the time went, for whoever keeps this file under its budget.
  for (const o of [...outcomes].sort((a, b) => b.ms - a.ms).slice(0, 8)) t.diagnostic(`${Math.round(o.ms)} ms ${o.command.source}:${o.command.line}`)
  const wrong = outcomes
    .filter((o) => o.codes.length !== 1 || !o.command.exits.includes(o.codes[0]!))
    .map(
      (o) =>
        `${o.command.source}:${o.command.line}: ${o.command.command} -> exit ${o.codes.join(',') || 'none'} (the page says ${o.command.exits.join(' or ')}): ${o.output}`,
    )
  assert.deepEqual(wrong, [])
})
