/**
 * `hedgebench report FILE` of a saved watch (issue 47's follow-up): the
 * file a real watch wrote, against simulated replicas, rendered again as
 * the watch rendered it at its end in each format; a watch killed before
 * its end, which saved no whole-window run; a damaged or hostile file, one
 * line and exit 2; `compare` pointing to `report`.
 */
import { test, after, before } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startTarget, type Target } from '../src/sim/target.js'
import { parseCsvObjects } from './helpers/csv.js'
import { cliSession } from './helpers/cli-session.js'
import type { CliRun } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'

const hedgebench = (...args: string[]): Promise<CliRun> => runMain(args)
const session = cliSession('hedgebench-watch-report-')

let target: Target
/** The watch's own run (its stdout ends with its report) and the file it saved. */
let watched: CliRun
let file: string
let text: string

before(
  async () => {
    target = await startTarget({ profile: 'pi', replicas: 3, seed: 47 })
    const dir = await session.tempDir()
    // Two segments, and a gate that never holds (a minute): the file keeps both, report applies the gate again.
    watched = await hedgebench(
      'watch',
      ...target.urls,
      '--warmup',
      '60',
      '--seed',
      '3',
      '-q',
      '200',
      '-z',
      '3s',
      '--mark-at',
      '1s=flip',
      '--fail-if',
      'hedged.p99>60s',
      '--allow-unjudged',
      '--out-dir',
      dir,
    )
    const files = readdirSync(dir).filter((f) => f.startsWith('watch-') && f.endsWith('.json'))
    assert.equal(files.length, 1, `one watch file in ${dir}: ${files}`)
    file = join(dir, files[0]!)
    text = readFileSync(file, 'utf8')
  },
  { timeout: 60_000 },
)
after(() => target?.close())

test('the watch ran: two segments, its gate judged', { timeout: 60_000 }, () => {
  // A lane whose generator saturated on a busy machine makes the gate inconclusive (exit 3): the file is the same.
  assert.ok(watched.code === 0 || watched.code === 3, `${watched.code}: ${watched.stderr}`)
  const saved = JSON.parse(text) as { segments: Array<{ name: string }>; failIf?: unknown }
  assert.deepEqual(
    saved.segments.map((s) => s.name),
    ['start', 'flip'],
  )
  assert.ok(saved.failIf)
})

test('report FILE prints the text the watch printed at its end, its gate included', { timeout: 60_000 }, async () => {
  const run = await hedgebench('report', file)
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stderr, '')
  assert.match(run.stdout, /^hedgebench watch: 3 URLs at 200 requests\/s, \d+ s, 2 segments\n/)
  assert.match(run.stdout, /^start -> flip, hedged lane$/m)
  assert.match(run.stdout, /^--fail-if, flip against start:\n {2}ok {3}hedged\.p99>60s$/m)
  // The watch's stdout is its live lines, then the report: the same bytes.
  assert.ok(watched.stdout.endsWith(run.stdout), `the watch's report:\n${watched.stdout}\nreport's:\n${run.stdout}`)
})

test('report FILE -o json prints the file as it is', { timeout: 60_000 }, async () => {
  const run = await hedgebench('report', file, '-o', 'json')
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stdout, text)
})

test('report FILE -o csv prints every comparison, each row after the two segments it compares', { timeout: 60_000 }, async () => {
  const run = await hedgebench('report', file, '-o', 'csv')
  assert.equal(run.code, 0, run.stderr)
  const rows = parseCsvObjects(run.stdout)
  assert.ok(rows.length > 0)
  assert.deepEqual([...new Set(rows.map((r) => r.compared))], ['start -> flip'])
  assert.deepEqual([...new Set(rows.map((r) => r.phase))].sort(), ['hedged', 'plain'])
  assert.deepEqual([...new Set(rows.map((r) => r.run))], ['start', 'flip'])
})

test('report FILE --html writes the watch page with the mark; --html - writes it to stdout instead', { timeout: 60_000 }, async () => {
  const page = join(await session.tempDir(), 'watch.html')
  const run = await hedgebench('report', file, '--html', page)
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stdout, /^hedgebench watch: /)
  const html = readFileSync(page, 'utf8')
  assert.equal(html.match(/data-mark="mark &quot;flip&quot; at 1 s \(mark-at\)"/g)?.length, 2)
  const toStdout = await hedgebench('report', file, '--html', '-')
  assert.equal(toStdout.code, 0, toStdout.stderr)
  assert.equal(toStdout.stdout, html)
})

/** The file as a watch saves it every second before its end (run/watch.ts snapshot): compact, no run, no comparisons, finishedAt null. */
async function killedCopy(): Promise<string> {
  const { run: _r, comparisons: _c, failIf: _f, sentUntilS: _s, ...live } = JSON.parse(text) as Record<string, unknown>
  const path = join(await session.tempDir(), 'watch-killed.json')
  await writeFile(path, `${JSON.stringify({ ...live, finishedAt: null, partial: true })}\n`)
  return path
}

test('a watch killed before its end: its segments shown, not compared, one line saying why; --html refused in one line', { timeout: 60_000 }, async () => {
  const killed = await killedCopy()
  const run = await hedgebench('report', killed)
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stderr.split('\n').filter(Boolean).length, 1, run.stderr)
  assert.match(run.stderr, /^hedgebench: .*watch-killed\.json: the watch did not end \(killed, or still running\): its segments as saved, not compared/)
  assert.match(run.stdout, /^start +0-1 +plain +\d+/m)
  assert.match(run.stdout, /^flip +1-\d+ +hedged +\d+/m)
  assert.doesNotMatch(run.stdout, /->/)
  const json = await hedgebench('report', killed, '-o', 'json')
  assert.equal(json.stdout, readFileSync(killed, 'utf8'))
  const html = await hedgebench('report', killed, '--html', join(await session.tempDir(), 'x.html'))
  assert.equal(html.code, 2)
  assert.match(html.stderr, /^hedgebench: .*watch-killed\.json: --html needs a watch that ended: [^\n]*\n$/)
  assert.equal(html.stdout, '')
})

/** A damaged copy of the file: its text changed by `edit`. */
async function damaged(name: string, edit: (text: string) => string): Promise<string> {
  const path = join(await session.tempDir(), name)
  await writeFile(path, edit(text))
  return path
}

test('a truncated, damaged or hostile watch file: one line, exit 2, nothing on stdout', { timeout: 60_000 }, async () => {
  const withSegment = (change: (segment: Record<string, Record<string, Record<string, unknown>>>) => void) => (t: string) => {
    const value = JSON.parse(t) as { segments: Array<Record<string, Record<string, Record<string, unknown>>>> }
    change(value.segments[0]!)
    return JSON.stringify(value)
  }
  const cases: Array<[string, (t: string) => string, RegExp, string[]?]> = [
    ['truncated.json', (t) => t.slice(0, Math.floor(t.length / 2)), /: not JSON \(/],
    ['count.json', withSegment((s) => (s.lanes!.plain!.requests = -1)), /: invalid watch: segments\[0\]\.lanes\.plain\.requests must be a whole number/],
    [
      'histogram.json',
      withSegment((s) => (s.lanes!.hedged!.histogram = 'AAAA')),
      /: invalid watch: segments\[0\]\.lanes\.hedged\.histogram is not a histogram$/,
    ],
    ['mark.json', (t) => t.replace('"source": "mark-at"', '"source": 7'), /: invalid watch: marks\[0\]\.source must be one of "key"/],
    ['run.json', (t) => t.replace('"schema": "hedgebench/result@2"', '"schema": "hedgebench/result@9"'), /\(its run\): not a hedgebench result/],
    [
      'deep.json',
      (t) => t.replace('"label":', `"deep": ${'['.repeat(100_000)}${']'.repeat(100_000)}, "label":`),
      /: not a hedgebench result \(nested deeper than 64 levels/,
    ],
    ['large.json', (t) => t, /: \d+ bytes, over the limit of 0\.01 MB for a result file/, ['--max-result-size', '0.01']],
  ]
  for (const [name, edit, message, flags] of cases) {
    const run = await hedgebench('report', await damaged(name, edit), ...(flags ?? []))
    assert.equal(run.code, 2, `${name}: ${run.stderr}`)
    assert.equal(run.stdout, '', name)
    assert.match(run.stderr, /^hedgebench: [^\n]*\n$/, name)
    assert.match(run.stderr.trimEnd(), message, name)
  }
})

test('what would drive a terminal, in a mark name: shown as U+FFFD in the text, escaped in -o json (the same JSON value)', { timeout: 60_000 }, async () => {
  const path = await damaged('controls.json', (t) => t.replaceAll('"flip"', '"fl\u009b2J\u202eip"'))
  const run = await hedgebench('report', path)
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stdout, /^fl\ufffd2J\ufffdip +1-/m)
  assert.doesNotMatch(run.stdout, /[\u009b\u202e]/)
  const json = await hedgebench('report', path, '-o', 'json')
  assert.equal(json.code, 0, json.stderr)
  assert.doesNotMatch(json.stdout, /[\u009b\u202e]/)
  assert.deepEqual(JSON.parse(json.stdout), JSON.parse(readFileSync(path, 'utf8')))
})

test('compare given a watch: one line naming report, exit 2', { timeout: 60_000 }, async () => {
  const run = await hedgebench('compare', file, file)
  assert.equal(run.code, 2)
  assert.equal(run.stdout, '')
  assert.equal(
    run.stderr,
    `hedgebench: ${file}: a saved watch: its segments are compared within it, each against the one before; hedgebench report ${file} prints them\n`,
  )
})
