/**
 * A saved result edited by hand (issue 32): whatever field is removed,
 * nulled or given the wrong type, reading it either works or fails with one
 * line naming the file and the field (exit 2 on the CLI), for report,
 * compare and merge; never a JavaScript error from a renderer. Control
 * characters in a saved file, or in what a target said, never reach the
 * terminal.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { renderOutput } from '../src/cli/output.js'
import { UsageError } from '../src/core/errors.js'
import { seededRandom } from '../src/core/random.js'
import { compareWithin } from '../src/report/compare.js'
import { renderCompareText } from '../src/report/compare-text.js'
import { renderHtml } from '../src/report/html.js'
import { parseResult, renderJson } from '../src/results/result-json.js'
import { run } from '../src/run/run.js'
import { stderrLines } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { makeHedgedRun } from './helpers/result-fixture.js'

type Json = Record<string, unknown> | unknown[]

/** Paths to every object field and the first two items of every array (histograms and other strings are leaves). */
function paths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value !== 'object' || value === null) return []
  const keys: Array<string | number> = Array.isArray(value) ? value.slice(0, 2).map((_, i) => i) : Object.keys(value)
  return keys.flatMap((k) => [[...prefix, k], ...paths((value as Record<string | number, unknown>)[k], [...prefix, k])])
}

function edited(base: unknown, path: Array<string | number>, replacement: unknown): string {
  const copy = structuredClone(base) as Json
  let node = copy as Record<string | number, unknown>
  for (const k of path.slice(0, -1)) node = node[k] as Record<string | number, unknown>
  const last = path[path.length - 1]!
  if (replacement === undefined && !Array.isArray(node)) delete node[last]
  else node[last] = replacement ?? null
  return JSON.stringify(copy)
}

const REPLACEMENTS: unknown[] = [undefined, null, {}, 'x']
/** Deeper paths: removed or the wrong type (null and {} break the same reads). */
const DEEP_REPLACEMENTS: unknown[] = [undefined, 'x']

test('every field of a saved result removed, nulled, emptied or a string: it renders, or one line naming the file', async () => {
  const base = JSON.parse(renderJson(makeHedgedRun())) as unknown
  const all = paths(base)
  const random = seededRandom(32)
  // Every path near the top (where the fields renderers read are), a seeded sample of the deeper ones.
  const chosen = all.filter((p) => p.length <= 3 || random() < 0.1)
  const crashes: string[] = []
  for (const path of chosen) {
    for (const replacement of path.length <= 3 ? REPLACEMENTS : DEEP_REPLACEMENTS) {
      const text = edited(base, path, replacement)
      const what = `${path.join('.')} = ${replacement === undefined ? '(removed)' : JSON.stringify(replacement)}`
      let result
      try {
        result = parseResult(text, 'edited.json')
      } catch (err) {
        if (!(err instanceof UsageError) || !/^edited\.json: [^\n]+$/.test(err.message)) crashes.push(`${what}: parse threw ${String(err)}`)
        continue
      }
      try {
        for (const format of ['text', 'json', 'csv'] as const) await renderOutput(result, format)
        renderHtml(result)
        if (result.phases.plain && result.phases.hedged) renderCompareText(compareWithin(result))
      } catch (err) {
        crashes.push(`${what}: ${String(err).split('\n')[0]}`)
      }
    }
  }
  assert.ok(chosen.length > 100, `${chosen.length} paths`)
  assert.deepEqual(crashes, [])
})

test('report, compare and merge of a hand-edited file: one line naming the file and the field, exit 2', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-edited-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const base = JSON.parse(renderJson(makeHedgedRun())) as unknown
  const cases: Array<[string, string, RegExp]> = [
    ['no-urls.json', edited(base, ['config', 'urls'], undefined), /config\.urls must be/],
    ['empty-hedging.json', edited(base, ['phases', 'hedged', 'hedging'], {}), /phases\.hedged\.hedging\.\w+ must be/],
    ['null-replica.json', edited(base, ['phases', 'plain', 'replicas', 0], null), /phases\.plain\.replicas\[0\] must be an object/],
  ]
  for (const [name, text] of cases) await writeFile(join(dir, name), text)
  const runs = await Promise.all(
    cases
      .flatMap(([name]) => [
        ['report', name],
        ['compare', name, name],
        ['merge', name, name],
      ])
      .map(async (args) => ({ args, run: await runMain(args, { cwd: dir, timeoutMs: 60_000 }) })),
  )
  for (const { args, run } of runs) {
    const [, name] = args
    const field = cases.find(([n]) => n === name)![2]
    const shown = `${args.join(' ')}: ${run.stderr}`
    assert.equal(run.code, 2, shown)
    const lines = stderrLines(run)
    assert.equal(lines.length, 1, shown)
    assert.ok(lines[0]!.startsWith(`hedgebench: ${name}: invalid result: `), shown)
    assert.match(lines[0]!, field, shown)
  }
})

test('control characters a saved file carries (a warning that clears the screen) are never printed by report or compare', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-edited-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const run = makeHedgedRun({
    label: 'x\u001b]0;title\u0007',
    warnings: ['\u001b[2J\u001b[Hscreen cleared', 'bell\u0007 and \u009b31m C1 and \u202e override'],
  })
  run.phases.hedged!.errorKinds = { 'EVIL\u001b[31m': 1 }
  const file = join(dir, 'escapes.json')
  await writeFile(file, renderJson(run))
  const outputs = await Promise.all(
    [
      ['report', file],
      ['report', file, '-o', 'csv'],
      ['compare', file],
    ].map((args) => runMain(args, { timeoutMs: 60_000 })),
  )
  for (const out of outputs) {
    assert.equal(out.code, 0, out.stderr)
    assert.doesNotMatch(out.stdout + out.stderr, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/)
  }
  assert.match(outputs[0]!.stdout, /\ufffd\[2J\ufffd\[Hscreen cleared/, 'the warning is still shown, its controls visible as U+FFFD')
})

test("what a target says (a stats endpoint's replica names) reaches the report without its control characters", async (t) => {
  // A stats endpoint in the shape --server-stats reads, naming its replica with an escape that clears the screen.
  let busyMs = 0
  const target = createServer((req, res) => {
    if (req.url === '/stats') {
      busyMs += 5
      res.setHeader('content-type', 'application/json')
      res.end(
        JSON.stringify({
          totals: { received: 1e9, completed: 1e9, cancelled: 1e9, hedgeHeader: 0 },
          replicas: [{ url: 'http://evil\u001b[2J\u001b]0;pwned\u0007/', busyMs }],
        }),
      )
      return
    }
    res.end('ok')
  })
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => target.close(() => resolve())))
  const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}`
  const result = await run({ urls: [`${url}/x`], serverStatsUrl: `${url}/stats`, requests: 4, concurrency: 1, warmup: 0, mode: 'plain' })
  assert.match(JSON.stringify(result.phases.plain!.server?.utilisation), /evil\ufffd\[2J/)
  const text = await renderOutput(result, 'text')
  assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
  assert.match(text, /evil\ufffd\[2J/)
})
