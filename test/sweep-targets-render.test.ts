/**
 * A mix's sweep (--targets, issue 48) in every format: each target's
 * recommended setting and its figures in the text, the CSV (a `target`
 * column, a row per target and setting) and the HTML (a per-target table),
 * read back and checked against the sweep object; two targets of the same
 * method and path named apart in all of them; `report` of a saved sweep
 * printing its --verify runs as the sweep did.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { formatMs } from '../src/core/duration.js'
import { sweep } from '../src/run/sweep.js'
import type { SweepResult } from '../src/results/sweep-result.js'
import type { TargetResult } from '../src/results/run-result.js'
import { sweepFrontier } from '../src/report/sweep-frontier.js'
import { renderSweepCsv } from '../src/report/sweep-csv.js'
import { renderSweepHtml } from '../src/report/sweep-html.js'
import { renderSweepText } from '../src/report/sweep-text.js'
import { renderSweepJson } from '../src/report/sweep-store.js'
import { targetFrontiers } from '../src/report/sweep-targets.js'
import { makeSweep } from './helpers/sweep-fixture.js'
import { makeGrpcClient, makeHedgedRun } from './helpers/result-fixture.js'
import { parseCsvObjects } from './helpers/csv.js'
import { runMainCases } from './helpers/main-cases.js'
import { type FastTarget, startFastTarget } from './helpers/sim.js'

const dir = mkdtempSync(join(tmpdir(), 'hedgebench-sweep-targets-'))
let fast: FastTarget
before(async () => {
  fast = await startFastTarget()
})
after(async () => {
  await fast?.close()
  rmSync(dir, { recursive: true, force: true })
})

const NAMES = ['GET /a', 'GET /a #2', 'POST /c']

/**
 * A mix of three targets from the sweep fixture (real histograms, a plain
 * lane stalling 1 in 50 for 1 s: hedging helps, so each target has a
 * recommendation): two of the same method and path, and a write sent once.
 */
function mixSweep(): SweepResult {
  const delays = ['p90', '20ms']
  const merged = makeSweep({ delays, label: 'mix' })
  const own = [merged, makeSweep({ delays, seed: 2, stallEvery: 20 }), makeSweep({ delays, seed: 3 })]
  const targets: TargetResult[] = own.map((s, i) => ({
    name: NAMES[i]!,
    method: i === 2 ? 'POST' : 'GET',
    path: i === 2 ? '/c' : '/a',
    weight: i + 1,
    ...(i === 2 ? { sentOnce: true } : {}),
    phases: { plain: s.run.phases.plain! },
  }))
  return {
    ...merged,
    run: { ...merged.run, targets },
    targets: own.map((s, i) => ({ name: targets[i]!.name, method: targets[i]!.method, path: targets[i]!.path, settings: s.settings })),
  }
}

test("a mix's sweep in CSV: a row per target and setting, the target's own figures and recommendation, named in `target`", () => {
  const mix = mixSweep()
  const frontier = sweepFrontier(mix)
  const rows = parseCsvObjects(renderSweepCsv(mix, frontier))
  // The targets merged first (target empty), then each target's lanes in the file's order.
  assert.deepEqual(
    rows.map((r) => [r.target, r.setting]),
    [
      ['', 'p90'],
      ['', '20ms'],
      ...NAMES.flatMap((n) => [
        [n, 'p90'],
        [n, '20ms'],
      ]),
    ],
  )
  for (const [i, t] of mix.targets!.entries()) {
    const own = rows.filter((r) => r.target === t.name)
    const plain = mix.run.targets![i]!.phases.plain!
    for (const [j, s] of t.settings.entries()) {
      assert.equal(Number(own[j]!.p99_ms), s.hedged.latencyMs.p99, `${t.name} ${s.label} p99`)
      assert.equal(Number(own[j]!.p50_ms), s.hedged.latencyMs.p50, `${t.name} ${s.label} p50`)
      assert.equal(Number(own[j]!.requests), s.hedged.requests)
      assert.equal(Number(own[j]!.slow), s.hedged.slow.count)
      assert.equal(Number(own[j]!.delay_ms), s.delayMs)
      assert.equal(Number(own[j]!.extra_load_pct), s.hedged.hedging!.extraLoadPct, `${t.name} ${s.label} extra load`)
      assert.equal(Number(own[j]!.slow_plain), plain.slow.count, "the target's own plain lane")
    }
  }
  // Each hedged target recommends one of its settings; the write sent once none.
  const recommended = (name: string) => rows.filter((r) => r.target === name && r.recommended === 'true').map((r) => r.setting)
  const frontiers = targetFrontiers(mix)
  for (const f of frontiers.slice(0, 2)) {
    assert.ok(f.frontier.recommendation.label, `${f.name} has a recommendation`)
    assert.deepEqual(recommended(f.name), [f.frontier.recommendation.label])
  }
  assert.deepEqual(recommended('POST /c'), [])
})

/** The rows of the table under `<h2>heading</h2>`: each row's header cell then its cells, as text. */
function tableUnder(html: string, heading: string): string[][] {
  const start = html.indexOf(`<h2>${heading}</h2>`)
  assert.ok(start >= 0, `a ${heading} section`)
  const section = html.slice(start, html.indexOf('</table>', start))
  return [...section.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<t[hd][^>]*>([^<]*)<\/t[hd]>/g)].map((c) => c[1]!))
}

test("a mix's sweep in HTML and text: each target without hedging and at its recommended setting, with p50, p99, slow, errors, extra load, delay", () => {
  const mix = mixSweep()
  const frontier = sweepFrontier(mix)
  const [header, ...rows] = tableUnder(renderSweepHtml(mix, frontier), 'Per target')
  assert.deepEqual(header, ['target', 'weight', 'setting', 'requests', 'p50', 'p99', 'slow', 'errors', 'extra load', 'delay'])
  const frontiers = targetFrontiers(mix)
  const expected = mix.targets!.flatMap((t, i) => {
    const plain = mix.run.targets![i]!.phases.plain!
    const none = [
      t.name,
      String(i + 1),
      'none',
      String(plain.requests),
      formatMs(plain.latencyMs.p50),
      formatMs(plain.latencyMs.p99),
      String(plain.slow.count),
      String(plain.errors),
      '-',
      '-',
    ]
    if (i === 2) return [none]
    const s = t.settings.find((x) => x.label === frontiers[i]!.frontier.recommendation.label)!
    const h = s.hedged
    const load = `+${h.hedging!.extraLoadPct.toFixed(1)}%`
    return [
      none,
      [
        t.name,
        String(i + 1),
        s.label,
        String(h.requests),
        formatMs(h.latencyMs.p50),
        formatMs(h.latencyMs.p99),
        String(h.slow.count),
        String(h.errors),
        load,
        formatMs(s.delayMs),
      ],
    ]
  })
  assert.deepEqual(rows, expected)
  // The same rows in the text, and each target's recommendation in words.
  const text = renderSweepText(mix, frontier)
  const block = text.slice(text.indexOf('Per target'))
  for (const row of expected) assert.match(block, new RegExp(row.map(escapeRegExp).join(' +')))
  assert.match(block, /^ {2}POST \/c: sent once, never hedged/m)
  for (const f of frontiers.slice(0, 2)) assert.ok(block.includes(`  ${f.name}: ${f.frontier.recommendation.sentence}`), f.name)
})

test('two targets of the same method and path are named apart in the sweep and every format', { timeout: 60_000 }, async () => {
  const result = await sweep({
    urls: fast.target.urls,
    targets: [
      { method: 'GET', path: '/a', headers: [['x-tenant', 'a']] },
      { method: 'GET', path: '/a', headers: [['x-tenant', 'b']] },
      { method: 'GET', path: '/b' },
      { method: 'GET', path: '/a' },
    ],
    delays: [5],
    requests: 40,
    warmup: 40,
    concurrency: 2,
    seed: 3,
  })
  const names = ['GET /a', 'GET /a #2', 'GET /b', 'GET /a #3']
  assert.deepEqual(
    result.run.targets!.map((t) => t.name),
    names,
  )
  assert.deepEqual(
    result.targets!.map((t) => t.name),
    names,
  )
  const frontier = sweepFrontier(result)
  const csv = parseCsvObjects(renderSweepCsv(result, frontier))
  assert.deepEqual([...new Set(csv.map((r) => r.target))], ['', ...names])
  const html = tableUnder(renderSweepHtml(result, frontier), 'Per target')
  assert.deepEqual([...new Set(html.slice(1).map((r) => r[0]))], names)
  const json = JSON.parse(renderSweepJson(result, frontier)) as SweepResult
  assert.deepEqual(
    json.targets!.map((t) => t.name),
    names,
  )
  const text = renderSweepText(result, frontier)
  for (const n of names) assert.match(text, new RegExp(`^ {2}${escapeRegExp(n)} +1 +none `, 'm'))
})

test('report of a saved sweep prints its --verify runs as the sweep did, and -o json gives the file back', { timeout: 60_000 }, () => {
  const mix = mixSweep()
  const frontier = sweepFrontier(mix)
  const verified = (hedgesSent: number) => ({ ...makeHedgedRun(), grpcClient: makeGrpcClient(hedgesSent, { slow: { thresholdMs: 1000, count: 3 } }) })
  const verifications = [
    { call: 'shop.Inventory/Get', label: 'p90', result: verified(7) },
    { call: 'shop.Inventory/Put', label: '20ms', result: verified(11) },
  ]
  const file = join(dir, 'mix-sweep.json')
  writeFileSync(file, renderSweepJson(mix, frontier, { verifications, targetFrontiers: targetFrontiers(mix) }))
  const [text, json, csv] = runMainCases(
    [
      ['report', file],
      ['report', file, '-o', 'json'],
      ['report', file, '-o', 'csv'],
    ].map((args) => ({ args, cwd: dir })),
  )
  assert.equal(text!.code, 0, text!.stderr)
  const out = text!.stdout
  // Each verification in the order saved, grpc-js's extra load from its own counts (7 and 11 hedges of 200 calls).
  const at = ['shop.Inventory/Get p90', 'shop.Inventory/Put 20ms'].map((l) => out.indexOf(`Verified ${l} through grpc-js with the emitted service config`))
  assert.ok(at[0]! > 0 && at[1]! > at[0]!, out)
  assert.match(out.slice(at[0]!, at[1]!), /extra load: grpc-js 3\.5 % against/)
  assert.match(out.slice(at[1]!), /extra load: grpc-js 5\.5 % against/)
  assert.match(out.slice(at[0]!), /over --slow: 3 of 200 calls/)
  // The per-target block of a saved sweep too, before the verifications.
  assert.ok(out.indexOf('Per target') > 0 && out.indexOf('Per target') < at[0]!)
  assert.equal(json!.code, 0, json!.stderr)
  assert.equal(json!.stdout, readFileSync(file, 'utf8'), "-o json: the file, byte for byte (its verifications and targets' frontiers kept)")
  // With a document on stdout, the words go to stderr, as the sweep wrote them.
  assert.equal(csv!.code, 0, csv!.stderr)
  assert.doesNotMatch(csv!.stdout, /Verified/)
  assert.match(csv!.stderr, /Verified shop\.Inventory\/Get p90 through grpc-js/)
})

test('a saved sweep whose verification is not a run is refused in one line naming it', { timeout: 60_000 }, () => {
  const mix = mixSweep()
  const file = join(dir, 'bad-verify-sweep.json')
  writeFileSync(file, renderSweepJson(mix, sweepFrontier(mix), { verifications: [{ call: 'a.B/C', label: 'p90', result: { schema: 'nope' } }] }))
  const [r] = runMainCases([{ args: ['report', file], cwd: dir }])
  assert.equal(r!.code, 2)
  assert.match(r!.stderr, /bad-verify-sweep\.json \(verifications\[0\]\.result\): not a hedgebench result/)
  assert.equal(r!.stderr.trim().split('\n').length, 1, r!.stderr)
})

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
