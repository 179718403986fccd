/**
 * --targets (issue 48): a mix of requests read from vegeta's HTTP format or
 * JSON lines, every fault one line naming file:line before anything is
 * sent; the requests drawn by weight with the run's seed, the warm-up
 * giving each target its share, each target its own lane, delay and rows,
 * the run's phases the targets' merged exactly, a write in the mix never
 * hedged without the opt-in.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readTargetsFile } from '../src/run/targets-file.js'
import { resolveTargets } from '../src/run/target-spec.js'
import { weightedDraw } from '../src/run/target-draw.js'
import { seededRandom } from '../src/core/random.js'
import { run } from '../src/run/run.js'
import { UsageError } from '../src/core/errors.js'
import { fetchServerStats, resetServerStats, startTarget, type Target } from '../src/sim/target.js'
import { parseProfile } from '../src/sim/profile.js'
import { hedgebench } from './helpers/run-cli.js'
import { runMain } from './helpers/main-cases.js'
import { DEFAULT_BUDGET_BURST } from '../src/hedging/policy.js'
import type { PhaseResult, RunResult } from '../src/results/run-result.js'
import { NOT_HEDGED, targetCells, targetRows } from '../src/report/target-rows.js'
import { renderText } from '../src/report/text.js'
import { renderCsvSummary } from '../src/report/csv.js'
import { renderHtml } from '../src/report/html.js'
import { formatMs } from '../src/core/duration.js'
import { parseCsvObjects } from './helpers/csv.js'
import { mergeResults } from '../src/stats/result-merge.js'
import { sweep } from '../src/run/sweep.js'
import { targetFrontiers, targetsEnvoyFile, targetsSweepText } from '../src/report/sweep-targets.js'

let mix: RunResult | undefined
const dir = mkdtempSync(join(tmpdir(), 'hedgebench-targets-'))
let target: Target
before(async () => {
  const profile = parseProfile({ name: 'mix', description: 'a quick mix', replicas: 2, model: { base: { type: 'uniform', min: 1, max: 3 } } }, 'mix')
  target = await startTarget({ profile, seed: 4 })
})
after(async () => {
  await target?.close()
  rmSync(dir, { recursive: true, force: true })
})

function file(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

const REPLICAS = ['http://127.0.0.1:9001/api', 'http://127.0.0.1:9002/api']

test('vegeta HTTP format: request lines, headers, @body relative to the file, comments, a URL on a replica', () => {
  file('order.json', '{"item":1}')
  const path = file(
    'http.txt',
    [
      '# the checkout mix',
      'GET /a',
      'X-Test: 1',
      'Accept: text/plain',
      '',
      '',
      'GET http://127.0.0.1:9002/api/b?q=1',
      '',
      'POST /c',
      'Content-Type: application/json',
      '@order.json',
    ].join('\n'),
  )
  assert.deepEqual(readTargetsFile(path, REPLICAS), [
    {
      method: 'GET',
      path: '/a',
      headers: [
        ['X-Test', '1'],
        ['Accept', 'text/plain'],
      ],
      at: `${path}:2`,
    },
    { method: 'GET', path: '/b?q=1', at: `${path}:7` },
    { method: 'POST', path: '/c', headers: [['Content-Type', 'application/json']], body: Buffer.from('{"item":1}'), at: `${path}:9` },
  ])
})

test('JSON lines: headers as an object, body or bodyFile, weight and hedgeDelay', () => {
  file('payload.bin', 'xyz')
  const path = file(
    'mix.jsonl',
    [
      '{"method":"GET","path":"/a","weight":3,"hedgeDelay":"p90"}',
      '{"method":"PUT","path":"/b","headers":{"X-A":["1","2"]},"body":"hi","hedgeDelay":15}',
      '',
      '{"method":"POST","path":"/c","bodyFile":"payload.bin"}',
    ].join('\n'),
  )
  assert.deepEqual(readTargetsFile(path, REPLICAS), [
    { method: 'GET', path: '/a', weight: 3, hedgeDelay: 'p90', at: `${path}:1` },
    {
      method: 'PUT',
      path: '/b',
      hedgeDelay: 15,
      headers: [
        ['X-A', '1'],
        ['X-A', '2'],
      ],
      body: Buffer.from('hi'),
      at: `${path}:2`,
    },
    { method: 'POST', path: '/c', body: Buffer.from('xyz'), at: `${path}:4` },
  ])
})

test('each fault in a targets file is one line naming file:line', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['GET /a\n\nGET /b extra\n', 'x.txt', /x\.txt:3: expected "METHOD path-or-URL"/],
    ['GET /a\nno colon here\n', 'x.txt', /x\.txt:2: malformed header/],
    ['GET /a\n\nFETCH /b\n', 'x.txt', /x\.txt:3: unknown method "FETCH"/],
    ['POST /c\n@missing.json\n', 'x.txt', /x\.txt:2: body file missing\.json cannot be read \(ENOENT\)/],
    ['GET http://example.com/a\n', 'x.txt', /x\.txt:1: http:\/\/example\.com is not one of the replicas/],
    ['GET a-path\n', 'x.txt', /x\.txt:1: "a-path" is neither a path/],
    ['POST /c\n@order.json\nX-Late: 1\n', 'x.txt', /x\.txt:3: a header after the @body line/],
    ['{"method":"GET","path":"/a"}\n{"method":"GET",\n', 'y.jsonl', /y\.jsonl:2: not a JSON object/],
    ['{"method":"GET","path":"/a","wieght":2}\n', 'y.jsonl', /y\.jsonl:1: wieght is not a known field/],
    ['{"method":"BREW","path":"/a"}\n', 'y.jsonl', /y\.jsonl:1: unknown method "BREW"/],
    ['{"method":"GET","path":"/a","weight":0}\n', 'y.jsonl', /y\.jsonl:1: weight must be a number > 0/],
    ['{"method":"GET","path":"/a","hedgeDelay":"soon"}\n', 'y.jsonl', /y\.jsonl:1: hedgeDelay must be a delay/],
    ['{"method":"POST","path":"/a","body":"x","bodyFile":"order.json"}\n', 'y.jsonl', /y\.jsonl:1: give "body" or "bodyFile", not both/],
    ['\n# nothing\n', 'z.txt', /holds no target/],
  ]
  for (const [text, name, expected] of cases) {
    const path = file(name, text)
    assert.throws(
      () => readTargetsFile(path, REPLICAS),
      (err: Error) => err instanceof UsageError && expected.test(err.message) && !err.message.includes('\n'),
      `${JSON.stringify(text)} -> ${expected}`,
    )
  }
})

test('targets from a program are checked by the one schema, named by index', () => {
  const optIn = { idempotencyKey: false, unsafeHedge: false }
  assert.throws(() => resolveTargets([{ method: 'GET', path: 'a' }], [], optIn), /^UsageError: targets\[0\]\.path must be a path starting with "\/"/)
  assert.throws(() => resolveTargets([], [], optIn), /must hold at least one target/)
  const [get, post, keyed] = resolveTargets(
    [
      { method: 'GET', path: '/a' },
      { method: 'POST', path: '/b' },
      { method: 'POST', path: '/c', headers: [['Idempotency-Key', 'k']] },
    ],
    [['x-run', '1']],
    optIn,
  )!
  assert.deepEqual([get!.repeatable, post!.repeatable, keyed!.repeatable], [true, false, true])
  assert.deepEqual(get!.headers, [['x-run', '1']], "the run's -H first")
  assert.equal(resolveTargets([{ method: 'POST', path: '/b' }], [], { idempotencyKey: true, unsafeHedge: false })![0]!.repeatable, true)
})

test('weighted draws follow the weights, the same for the same seed', () => {
  const draw = (seed: number) => {
    const next = weightedDraw([1, 3, 6], seededRandom(seed))
    return Array.from({ length: 10_000 }, next)
  }
  const a = draw(11)
  assert.deepEqual(a, draw(11))
  const counts = [0, 1, 2].map((i) => a.filter((x) => x === i).length)
  // Seeded, so these are fixed; within 2 % of the shares.
  for (const [i, share] of [0.1, 0.3, 0.6].entries()) assert.ok(Math.abs(counts[i]! / 10_000 - share) < 0.02, `${i}: ${counts[i]}`)
})

test('a bad targets file: exit 2 with one line naming file:line, and nothing sent', async () => {
  await resetServerStats(target.statsUrl)
  const path = file('late-fault.txt', `GET /a\n\nGET /b\n\n${'GET /ok\n\n'.repeat(50)}BREW /tea\n`)
  const out = await hedgebench(['run', ...target.urls, '--targets', path, '-n', '10', '--no-save'])
  assert.equal(out.code, 2, out.stderr)
  assert.match(out.stderr.trim(), /late-fault\.txt:105: unknown method "BREW"/)
  assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr)
  assert.equal((await fetchServerStats(target.statsUrl)).totals.received, 0)
})

test('a mix: each target its lane, share, delay and rows; the phases are the targets merged; a POST is never hedged without the opt-in', async () => {
  await resetServerStats(target.statsUrl)
  const result = await run({
    urls: target.urls,
    targets: [
      { method: 'GET', path: '/a', weight: 2 },
      { method: 'GET', path: '/b', hedgeDelay: 0 },
      { method: 'POST', path: '/c', body: Buffer.from('{}'), headers: [['content-type', 'application/json']] },
    ],
    requests: 120,
    warmup: 60,
    concurrency: 4,
    seed: 7,
    serverStatsUrl: target.statsUrl,
    hedge: { budgetPct: 100 },
  })
  mix = result
  const targets = result.targets!
  assert.deepEqual(
    targets.map((t) => [t.name, t.weight]),
    [
      ['GET /a', 2],
      ['GET /b', 1],
      ['POST /c', 1],
    ],
  )
  // The warm-up: every target its equal share (a seeded shuffle of blocks).
  assert.deepEqual(
    targets.map((t) => t.phases.warmup!.requests),
    [20, 20, 20],
  )
  // GET /a's p95 rests on the second half of its 20: the advice is the run's --warmup, 3 targets x 2 x a p95's need.
  const few = result.warnings.find((w) => w.startsWith('GET /a: the hedge delay is the p95 of only 10 requests'))
  const needed = Number(/needs at least (\d+)/.exec(few ?? '')?.[1])
  assert.ok(few?.endsWith(`; use --warmup ${3 * 2 * needed} or more (each of the 3 targets warms up on 1/3 of it, its delay measured on the second half)`), few)
  for (const phase of ['warmup', 'plain', 'hedged'] as const) {
    const parts = targets.map((t) => t.phases[phase]!)
    const whole = result.phases[phase]!
    assert.equal(
      whole.requests,
      sum(parts, (p) => p.requests),
      phase,
    )
    assert.equal(
      whole.attempts,
      sum(parts, (p) => p.attempts),
      phase,
    )
    assert.equal(
      whole.errors,
      sum(parts, (p) => p.errors),
      phase,
    )
  }
  // Measured phases draw by weight: GET /a about half.
  const plain = targets.map((t) => t.phases.plain!.requests)
  assert.ok(plain[0]! > plain[1]! && plain[0]! > plain[2]!, String(plain))
  const [a, b, c] = targets.map((t) => t.phases.hedged!.hedging!)
  assert.equal(b!.delayMs, 0, "GET /b: the file's own delay")
  assert.notEqual(a!.delayMs, 0, 'GET /a: from its own warm-up')
  assert.ok(b!.hedgesSent > 0, 'GET /b hedges at once')
  assert.equal(c!.hedgesSent, 0, 'POST /c is not hedged')
  assert.equal(targets[2]!.sentOnce, true)
  // A write waits on no delay: nothing to warn about its warm-up's size.
  assert.ok(!result.warnings.some((w) => w.startsWith('POST /c:')), result.warnings.join('\n'))
  assert.match(result.phases.hedged!.hedging!.delaySource, /^per target, 0 µs to /)
  // The cross-check per target: its attempts in each window against the server's count of its path.
  for (const t of targets) {
    assert.deepEqual(
      t.server!.map((s) => s.phases),
      [['warmup'], ['plain'], ['hedged']],
      t.name,
    )
    for (const s of t.server!) {
      assert.equal(
        s.clientAttempts,
        sum(
          s.phases.map((p) => t.phases[p]!),
          (p) => p.attempts,
        ),
        t.name,
      )
      assert.equal(s.received, s.clientAttempts, `${t.name} ${s.phases}`)
    }
  }
  const stats = await fetchServerStats(target.statsUrl)
  assert.deepEqual(Object.keys(stats.totals.paths).sort(), ['/a', '/b', '/c'])
  assert.equal(
    stats.totals.byMethod.POST,
    sum(targets[2] ? Object.values(targets[2].phases) : [], (p) => p.attempts),
  )
})

test('--idempotency-key: a POST in the mix is hedged, every copy of a logical request carrying its one key (the server executes each once)', async () => {
  await resetServerStats(target.statsUrl)
  const result = await run({
    urls: target.urls,
    targets: [
      { method: 'GET', path: '/a' },
      { method: 'POST', path: '/c', body: Buffer.from('{"n":1}'), hedgeDelay: 0 },
    ],
    requests: 60,
    warmup: 20,
    concurrency: 3,
    seed: 9,
    hedge: { budgetPct: 100, idempotencyKey: true },
  })
  const post = result.targets![1]!
  assert.ok(post.phases.hedged!.hedging!.hedgesSent > 0, 'the POST is hedged')
  const posts = sum(Object.values(post.phases), (p) => p.requests)
  const stats = await fetchServerStats(target.statsUrl)
  assert.equal(
    sum(Object.values(post.phases), (p) => p.errors),
    0,
  )
  assert.equal(stats.totals.executions, posts, 'one execution per logical POST')
})

test("--workers 2: each target its rows, every thread's share merged exactly, the phases the targets merged, each path counted", async () => {
  await resetServerStats(target.statsUrl)
  const result = await run({
    urls: target.urls,
    targets: [
      { method: 'GET', path: '/a', weight: 2 },
      { method: 'GET', path: '/b' },
    ],
    requests: 80,
    warmup: 40,
    concurrency: 4,
    workers: 2,
    seed: 5,
    serverStatsUrl: target.statsUrl,
  })
  const targets = result.targets!
  assert.deepEqual(
    targets.map((t) => t.phases.warmup!.requests),
    [20, 20],
  )
  for (const phase of ['warmup', 'plain', 'hedged'] as const) {
    const parts = targets.map((t) => t.phases[phase]!)
    assert.equal(result.phases[phase]!.requests, phase === 'warmup' ? 40 : 80, phase)
    assert.equal(
      result.phases[phase]!.requests,
      sum(parts, (p) => p.requests),
      phase,
    )
    assert.equal(
      result.phases[phase]!.attempts,
      sum(parts, (p) => p.attempts),
      phase,
    )
  }
  for (const t of targets) for (const s of t.server!) assert.equal(s.received, s.clientAttempts, `${t.name} ${s.phases}`)
  assert.equal(targets[0]!.server!.length, 3)
})

test("a mix's rows per target in text, CSV and HTML: p50, p99, slow, errors, extra load, delay", () => {
  const result = mix!
  const rows = targetRows(result)
  assert.deepEqual(
    rows.map((r) => `${r.target} ${r.phase}`),
    ['GET /a plain', 'GET /a hedged', 'GET /b plain', 'GET /b hedged', 'POST /c plain', 'POST /c hedged'],
  )
  const text = renderText(result)
  const block = text.slice(text.indexOf('\nTargets:\n'))
  for (const r of rows)
    assert.match(block, new RegExp(`${r.target} +${r.weight} +${r.phase} +${r.requests} +${escapeRegExp(formatMs(r.p50))} +${escapeRegExp(formatMs(r.p99))}`))
  assert.match(block, /server count per path: every target's attempts received \(9 target windows\)/)
  const csv = parseCsvObjects(renderCsvSummary(result)).filter((r) => r.scope === 'target')
  assert.deepEqual(
    csv.map((r) => [r.request, r.phase, Number(r.requests), Number(r.p99_ms), r.delay_ms === '' || r.delay_ms === NOT_HEDGED ? null : Number(r.delay_ms)]),
    rows.map((r) => [r.target, r.phase, r.requests, Number(r.p99.toFixed(3)), r.delayMs === null ? null : Number(r.delayMs.toFixed(3))]),
  )
  // The write's hedged phase: no delay in any format, the same words in each.
  const write = rows.find((r) => r.target === 'POST /c' && r.phase === 'hedged')!
  assert.equal(write.delayMs, null)
  assert.equal(targetCells(write).at(-1), NOT_HEDGED)
  assert.match(block, /POST \/c .* hedged .*not hedged \(write\)/)
  assert.equal(csv.find((r) => r.request === 'POST /c' && r.phase === 'hedged')!.delay_ms, NOT_HEDGED)
  assert.equal(csv.find((r) => r.request === 'GET /a' && r.phase === 'hedged')!.delay_ms === NOT_HEDGED, false)
  const html = renderHtml(result)
  assert.match(html, /<h2>Targets<\/h2>/)
  for (const r of rows) assert.ok(html.includes(`<th scope="row">${r.target}</th>`), r.target)
  assert.ok(html.includes(NOT_HEDGED), 'the HTML says the write is not hedged')
})

test("hedgebench merge keeps a mix's rows: each target's phases added across the shards, exactly", async () => {
  const shard = (index: number) =>
    run({
      urls: target.urls,
      targets: [
        { method: 'GET', path: '/a', weight: 3 },
        { method: 'GET', path: '/b', hedgeDelay: 'p50' },
      ],
      requests: 40,
      warmup: 20,
      concurrency: 2,
      seed: 3 + index,
      runId: 'mix-shards',
      shard: { index, count: 2 },
    })
  const parts = [await shard(0), await shard(1)]
  const merged = mergeResults(parts.map((result, i) => ({ result, source: `shard${i}.json` })))
  assert.deepEqual(
    merged.targets!.map((t) => t.name),
    ['GET /a', 'GET /b'],
  )
  for (const [i, t] of merged.targets!.entries())
    for (const phase of ['warmup', 'plain', 'hedged'] as const) {
      const own = parts.map((p) => p.targets![i]!.phases[phase]!)
      assert.equal(
        t.phases[phase]!.requests,
        sum(own, (p) => p.requests),
        `${t.name} ${phase}`,
      )
      assert.equal(
        t.phases[phase]!.attempts,
        sum(own, (p) => p.attempts),
        `${t.name} ${phase}`,
      )
      assert.equal(
        t.phases[phase]!.slow.count,
        sum(own, (p) => p.slow.count),
        `${t.name} ${phase}`,
      )
    }
  const other = { ...parts[1]!, targets: parts[1]!.targets!.slice(0, 1) }
  assert.throws(
    () =>
      mergeResults([
        { result: parts[0]!, source: 'a.json' },
        { result: other, source: 'b.json' },
      ]),
    /b\.json sent the targets \[GET \/a x3\]/,
  )
})

test('sweep --targets: each target its lane of every setting, its own frontier, and an Envoy route per target with its own delay', async () => {
  const result = await sweep({
    urls: target.urls.map((u) => `${u}api/`),
    targets: [
      { method: 'GET', path: '/a?x=1', weight: 2 },
      { method: 'POST', path: '/c', body: Buffer.from('{}') },
    ],
    delays: ['p50', 5],
    requests: 30,
    warmup: 40,
    concurrency: 3,
    seed: 8,
    hedge: { idempotencyKey: true },
  })
  const targets = result.targets!
  assert.deepEqual(
    targets.map((t) => t.settings.map((s) => s.label)),
    [
      ['p50', '5ms'],
      ['p50', '5ms'],
    ],
  )
  // Each setting's lanes of the targets add up to the setting's lane.
  for (const [i, s] of result.settings.entries())
    assert.equal(
      s.hedged.requests,
      sum(
        targets.map((t) => t.settings[i]!.hedged),
        (p) => p.requests,
      ),
      s.label,
    )
  assert.deepEqual(
    targets.map((t) => t.settings[1]!.delayMs),
    [5, 5],
  )
  const frontiers = targetFrontiers(result)
  assert.deepEqual(
    frontiers.map((f) => [f.name, f.frontier.rows.length]),
    [
      ['GET /a?x=1', 2],
      ['POST /c', 2],
    ],
  )
  const envoy = targetsEnvoyFile(result, frontiers, 'p50')!.text
  const delays = targets.map((t) => t.settings[0]!.delayMs)
  assert.match(envoy, /path: "\/api\/a"\n {6}headers:\n {6}- name: ":method"\n {8}string_match: \{ exact: "GET" \}/)
  assert.match(envoy, /path: "\/api\/c"[\s\S]*exact: "POST"/)
  const timeouts = [...envoy.matchAll(/per_try_timeout: "([\d.]+)s"/g)].map((m) => Number(m[1]) * 1000)
  assert.deepEqual(
    timeouts.map((t) => Math.round(t)),
    delays.map((d) => Math.round(d)),
  )
  // A write the sweep sent once (no key, no --unsafe-hedge) gets no route: its hedging was never measured.
  assert.equal(result.run.targets![1]!.sentOnce, undefined)
  const once = { ...result, run: { ...result.run, targets: result.run.targets!.map((t, i) => (i === 1 ? { ...t, sentOnce: true } : t)) } }
  assert.deepEqual(
    [...targetsEnvoyFile(once, frontiers, 'p50')!.text.matchAll(/path: "([^"]+)"/g)].map((m) => m[1]),
    ['/api/a'],
  )
  // Its row in the text says so, in place of a recommendation measured on lanes that did not hedge.
  assert.ok(
    targetsSweepText(once, targetFrontiers(once)).includes('  POST /c: sent once, never hedged (a write: --idempotency-key or --unsafe-hedge would let it be)'),
  )
})

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

function sum(parts: PhaseResult[], of: (p: PhaseResult) => number): number {
  return parts.reduce((s, p) => s + of(p), 0)
}

test('sweep --targets --emit-for: a target whose warm-up had no successful answer gets no route, a note why; targets alike but for the query share one route, with a warning', {
  timeout: 120_000,
}, async () => {
  // Every /bad request fails (503): its p90 has nothing to be taken from.
  const servers = [0, 1].map(() =>
    createServer((req, res) => {
      res.writeHead(req.url === '/api/bad' ? 503 : 200, { 'content-type': 'text/plain' })
      res.end('x')
    }),
  )
  for (const server of servers) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const urls = servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`)
    const targets = file('emit.txt', ['GET /slow.txt', '', 'GET /slow.txt?x=1', '', 'GET /bad', ''].join('\n'))
    const out = join(dir, 'emit')
    const r = await runMain(
      [
        'sweep',
        ...urls,
        '--targets',
        targets,
        '--hedge-delay',
        'p90,5ms',
        '--emit-for',
        'p90',
        '-n',
        '60',
        '-c',
        '2',
        '--warmup',
        '60',
        '--seed',
        '3',
        '--out-dir',
        out,
        '-o',
        'json',
      ],
      { timeoutMs: 100_000 },
    )
    assert.equal(r.code, 0, r.stderr)
    const saved = JSON.parse(r.stdout) as { warnings: string[] }
    const deployDir = /configs to deploy for p90: (\S+)\//.exec(r.stderr)?.[1]
    assert.ok(deployDir, r.stderr)
    const envoy = readFileSync(join(deployDir, 'envoy-route.yaml'), 'utf8')
    // One route for /api/slow.txt (the second target would never match a route of its own), none for /bad.
    assert.deepEqual(
      [...envoy.matchAll(/path: "([^"]+)"/g)].map((m) => m[1]),
      ['/api/slow.txt'],
    )
    assert.equal([...envoy.matchAll(/per_try_timeout: "/g)].length, 1)
    assert.match(
      envoy,
      /# GET \/slow\.txt: setting p90, .*\(also serves GET \/slow\.txt\?x=1 at p90: one route per path and method, the first target's setting\)/,
    )
    assert.match(envoy, /^# GET \/bad: nothing emitted for it: its warm-up had no successful answer to take the p90 delay from/m)
    assert.doesNotMatch(envoy, /per_try_timeout: "1s"/)
    assert.deepEqual(
      saved.warnings.filter((w) => /nothing emitted|one Envoy route/.test(w)),
      [
        'GET /bad: nothing emitted for it: its warm-up had no successful answer to take the p90 delay from (it ran with a 1 s fallback)',
        "GET /slow.txt, GET /slow.txt?x=1: one Envoy route (same path without the query, same method), at GET /slow.txt's setting p90; GET /slow.txt?x=1's p90 not deployed",
      ],
    )
  } finally {
    for (const server of servers) await new Promise((resolve) => server.close(resolve))
  }
})

test("--hedge-budget per target: a slow target spends only its own requests' budget, not what a fast one left unused", { timeout: 60_000 }, async () => {
  const servers = [0, 1].map(() =>
    createServer((req, res) => {
      req.resume()
      setTimeout(() => res.end('ok'), req.url === '/slow' ? 20 : 0)
    }),
  )
  for (const server of servers) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const urls = servers.map((server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    const result = await run({
      urls,
      // /slow hedges every request it may (a 1 ms delay); /fast never does (1 s).
      targets: [
        { method: 'GET', path: '/slow', hedgeDelay: 1 },
        { method: 'GET', path: '/fast', hedgeDelay: 1000 },
      ],
      requests: 400,
      warmup: 0,
      concurrency: 4,
      seed: 1,
      mode: 'hedged',
      hedge: { budgetPct: 10, delay: 1 },
    })
    const [slow, fast] = result.targets!.map((t) => t.phases.hedged!)
    assert.equal(fast!.hedging!.hedgesSent, 0)
    assert.ok(slow!.hedging!.budgetDenied > 0, 'the budget held /slow back')
    // Its own bucket: 10 % of its own requests and the burst; a shared one would have allowed 10 % of all 400.
    assert.ok(
      slow!.hedging!.hedgesSent <= Math.floor(slow!.requests * 0.1) + DEFAULT_BUDGET_BURST,
      `${slow!.hedging!.hedgesSent} hedges for ${slow!.requests} requests`,
    )
  } finally {
    for (const server of servers) await new Promise((resolve) => server.close(resolve))
  }
})
