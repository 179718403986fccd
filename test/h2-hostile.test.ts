/**
 * Hostile HTTP/2 servers (test/helpers/hostile-h2.ts) against the CLI as a
 * user runs it, over h2c and TLS: each attack ends the connection with the
 * GOAWAY code RFC 9113 gives it, its requests are counted as errors under
 * the limit's name (never as answers), the run ends by itself with exit 0
 * or 1, and the client's peak RSS stays within the budget of 300 MB
 * whatever the server sends. The CLI runs in one process (the young
 * generation flags given, so no second Node is started) whose peak RSS is
 * read by test/helpers/report-max-rss.ts.
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { YOUNG_GENERATION_FLAGS } from '../src/cli/launcher.js'
import { killAllChildren, runCli, startCli, type CliRun } from './helpers/cli.js'
import { hostileServer, type Attack } from './helpers/hostile-h2.js'
import { skipWithout } from './helpers/required-tool.js'
import { NO_OPENSSL, selfSigned } from './helpers/tls-cert.js'

after(killAllChildren)

const MAX_RSS = fileURLToPath(new URL('./helpers/report-max-rss.js', import.meta.url))
const NODE_ARGS = [...YOUNG_GENERATION_FLAGS, '--import', MAX_RSS]
const RSS_BUDGET_KIB = 300 * 1024
/** The bound for a `-t 3s -n 4` run against any of them; the test's own guard, not a figure it measures. */
const RUN_BOUND_MS = 30_000

const ENHANCE_YOUR_CALM = 0xb
const FLOW_CONTROL_ERROR = 0x3

const tls = selfSigned()
const skipTls = skipWithout(tls !== null, 'openssl', NO_OPENSSL)

interface Case {
  attack: Attack
  kind: string
  /** The GOAWAY code the client must send, when the server still reads (the floods stop reading). */
  goaway: number | null
}

const CASES: Case[] = [
  { attack: 'continuation-flood', kind: 'h2: header list over 64 KiB', goaway: null },
  { attack: 'header-list-16mb', kind: 'h2: header list over 64 KiB', goaway: null },
  { attack: 'nine-continuations', kind: 'h2: more than 8 CONTINUATION frames', goaway: ENHANCE_YOUR_CALM },
  { attack: 'hpack-bomb', kind: 'h2: header list over 64 KiB', goaway: ENHANCE_YOUR_CALM },
  { attack: 'ping-flood', kind: 'h2: PING flood', goaway: null },
  { attack: 'settings-flood', kind: 'h2: SETTINGS flood', goaway: null },
  { attack: 'window-overflow', kind: 'h2: flow-control error', goaway: FLOW_CONTROL_ERROR },
]

interface Outcome {
  run: CliRun
  errorKinds: Record<string, number>
  statusCodes: Record<string, number>
  maxRssKiB: number
}

async function attackRun(url: string, concurrency: number, extra: string[] = []): Promise<Outcome> {
  const n = Math.max(4, concurrency)
  const args = [
    '--http2',
    '-k',
    '--mode',
    'plain',
    '--warmup',
    '0',
    '-n',
    String(n),
    '-c',
    String(concurrency),
    '-t',
    '3s',
    '--no-save',
    '-o',
    'json',
    ...extra,
    url,
  ]
  const run = await runCli(args, { nodeArgs: NODE_ARGS, timeoutMs: RUN_BOUND_MS })
  assert.equal(run.timedOut, false, `the run ended by itself; stderr: ${run.stderr}`)
  assert.ok(run.code === 0 || run.code === 1, `exit ${run.code}; stderr: ${run.stderr}`)
  const rss = /test: max RSS (\d+) KiB/.exec(run.stderr)
  assert.ok(rss, `peak RSS reported; stderr: ${run.stderr}`)
  const result = JSON.parse(run.stdout) as { phases: { plain: { errorKinds: Record<string, number>; statusCodes: Record<string, number> } } }
  return { run, ...result.phases.plain, maxRssKiB: Number(rss[1]) }
}

function check(c: Case, o: Outcome, requests: number): void {
  assert.deepEqual(o.statusCodes, {}, 'no answer from an attacked exchange is counted')
  assert.deepEqual(o.errorKinds, { [c.kind]: requests }, 'every request failed under the limit it broke')
  assert.ok(o.maxRssKiB < RSS_BUDGET_KIB, `peak RSS ${Math.round(o.maxRssKiB / 1024)} MB within 300 MB`)
  const line = o.run.stderr.split('\n').filter((l) => l.includes(c.kind))
  assert.equal(line.length, 1, `one stderr line names it; stderr: ${o.run.stderr}`)
}

for (const c of CASES) {
  test(`h2c, ${c.attack}: the connection ends (${c.kind}), the run goes on and ends, within 300 MB`, { timeout: 60_000 }, async (t) => {
    const server = await hostileServer(c.attack)
    t.after(() => server.close())
    const o = await attackRun(server.url, 1)
    check(c, o, 4)
    if (c.goaway !== null) assert.ok(server.goaways.length >= 1 && server.goaways.every((g) => g === c.goaway), `GOAWAY codes ${server.goaways}`)
  })
}

for (const attack of ['continuation-flood', 'hpack-bomb', 'ping-flood'] as const) {
  const c = CASES.find((x) => x.attack === attack)!
  test(`h2c, ${attack} at -c 40: every request an error, within 300 MB`, { timeout: 60_000 }, async (t) => {
    const server = await hostileServer(attack)
    t.after(() => server.close())
    check(c, await attackRun(server.url, 40), 40)
  })
  test(`TLS, ${attack}: the same over h2 with ALPN`, { skip: skipTls, timeout: 60_000 }, async (t) => {
    const server = await hostileServer(attack, tls!)
    t.after(() => server.close())
    check(c, await attackRun(server.url, 1), 4)
  })
}

test('a raised limit lets the same block through: --h2-max-continuations 9', { timeout: 60_000 }, async (t) => {
  const server = await hostileServer('nine-continuations')
  t.after(() => server.close())
  const o = await attackRun(server.url, 1, ['--h2-max-continuations', '9'])
  assert.deepEqual(o.statusCodes, { 200: 4 })
  assert.deepEqual(o.errorKinds, {})
})

test('SIGINT while a PING flood arrives: the run stops within 2 s and writes what it measured', { timeout: 60_000 }, async (t) => {
  const server = await hostileServer('ping-flood')
  t.after(() => server.close())
  const cli = startCli(['--http2', '--mode', 'plain', '--warmup', '0', '-z', '20s', '-c', '4', '-t', '3s', '--no-save', '-o', 'json', server.url], {
    nodeArgs: NODE_ARGS,
    timeoutMs: RUN_BOUND_MS,
  })
  // Flood under way: the server has seen a request.
  for (let i = 0; i < 100 && server.requests === 0; i++) await new Promise((r) => setTimeout(r, 50))
  assert.ok(server.requests > 0)
  const sent = performance.now()
  cli.child.kill('SIGINT')
  const run = await cli.done
  const tookMs = performance.now() - sent
  assert.equal(run.timedOut, false)
  assert.equal(run.code, 0, run.stderr)
  const result = JSON.parse(run.stdout) as { partial?: boolean }
  assert.equal(result.partial, true)
  assert.ok(tookMs < 2000, `stopped ${Math.round(tookMs)} ms after SIGINT`)
})
