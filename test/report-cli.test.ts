import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { saveResult } from '../src/report/results-store.js'
import { assertCsvSummaryOf, parseCsvObjects } from './helpers/csv.js'
import { makeHedgedRun } from './helpers/result-fixture.js'
import type { CliRun } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'

/** `hedgebench ARGS` through main() in this file's one driver process (the command, not the process, is tested here). */
const hedgebench = (...args: string[]): Promise<CliRun> => runMain(args)

async function savedRun(t: { after: (fn: () => Promise<void>) => void }): Promise<{ dir: string; json: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-report-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const { json } = await saveResult(makeHedgedRun(), dir)
  return { dir, json }
}

test('report FILE prints the text report with its sections and the verdict', async (t) => {
  const { json } = await savedRun(t)
  const run = await hedgebench('report', json)
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stderr, '')
  for (const section of [
    'Summary:',
    'Response time histogram:',
    'Latency distribution:',
    'Status code distribution:',
    'Hedging:',
    'Replicas:',
    '=== plain vs hedged ===',
  ]) {
    assert.ok(run.stdout.includes(`\n${section}\n`), section)
  }
  assert.match(
    run.stdout,
    /^Verdict: Hedging removed 40 of 40 requests over 1 s \(-100 %, 95 % CI -100 % to -90 %\) and cut p99\.9 from 1\.02 s to 30\.9 ms, for \+3\.5 % requests\.$/m,
  )
})

test('report -o json reproduces the saved file byte for byte, and it is the run that was saved', async (t) => {
  const { json } = await savedRun(t)
  const run = await hedgebench('report', json, '-o', 'json')
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stdout, await readFile(json, 'utf8'))
  // Against the run object itself too: a renderer that lost a field would match its own earlier output.
  assert.deepEqual(JSON.parse(run.stdout), makeHedgedRun())
})

test('report -o csv prints the CSV summary of the saved run', async (t) => {
  const { json } = await savedRun(t)
  const run = await hedgebench('report', json, '-o', 'csv')
  assert.equal(run.code, 0, run.stderr)
  assert.equal(parseCsvObjects(run.stdout).length, 3 + 9)
  assertCsvSummaryOf(run.stdout, makeHedgedRun())
})

test('report --html writes a self-contained HTML file beside the normal output, making its folder as a run does', async (t) => {
  const { dir, json } = await savedRun(t)
  const out = join(dir, 'new', 'folder', 'run.html')
  const run = await hedgebench('report', json, '-o', 'json', '--html', out)
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stdout, await readFile(json, 'utf8'))
  const html = await readFile(out, 'utf8')
  assert.match(html, /^<!doctype html>/i)
  assert.match(html, /hedged-fixture/)
})

test('a file that is not JSON: exit 2, one stderr line naming it, no stack trace', async (t) => {
  const { dir, json } = await savedRun(t)
  const bad = join(dir, 'notes.json')
  await writeFile(bad, 'these are my notes\n')
  const run = await hedgebench('report', bad)
  assert.equal(run.code, 2)
  assert.equal(run.stdout, '')
  assert.match(run.stderr, new RegExp(`^hedgebench: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not JSON \\(Unexpected token .*\\)\n$`))
  // Cut short (an interrupted copy): the parser's reason says so.
  await writeFile(bad, (await readFile(json, 'utf8')).slice(0, 200))
  const cut = await hedgebench('report', bad)
  assert.equal(cut.code, 2)
  assert.match(cut.stderr, /: not JSON \((Unexpected end of JSON input|Unterminated string in JSON.*|Expected .*)\)\n$/)
})

test('report --html - writes the page to stdout in place of the text report', async (t) => {
  const { json } = await savedRun(t)
  const run = await hedgebench('report', json, '--html', '-')
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stdout, /^<!doctype html>/i)
  assert.doesNotMatch(run.stdout, /Response time histogram:/)
})

test('a saved run whose histogram was damaged still reports its figures, in every format, and says what is missing', async (t) => {
  const { dir, json } = await savedRun(t)
  const damaged = join(dir, 'damaged.json')
  const result = JSON.parse(await readFile(json, 'utf8')) as { phases: Record<string, { histogram: string }> }
  for (const phase of Object.values(result.phases)) phase.histogram = phase.histogram.slice(0, 21)
  await writeFile(damaged, JSON.stringify(result))
  const text = await hedgebench('report', damaged)
  assert.equal(text.code, 0, text.stderr)
  assert.match(text.stdout, /Response time histogram:\n {2}\(not shown: the saved histogram cannot be read; the file is damaged or was edited\)\n/)
  assert.match(text.stdout, /Latency distribution:/)
  for (const o of ['csv', 'json']) assert.equal((await hedgebench('report', damaged, '-o', o)).code, 0, o)
})

test('a missing file and a bad -o value exit 2 with one line', async (t) => {
  const { dir, json } = await savedRun(t)
  for (const args of [
    ['report', join(dir, 'missing.json')],
    ['report', json, '-o', 'xml'],
  ]) {
    const run = await hedgebench(...args)
    assert.equal(run.code, 2, args.join(' '))
    assert.equal(run.stderr.split('\n').filter(Boolean).length, 1, run.stderr)
    assert.doesNotMatch(run.stderr, /\n\s+at /)
  }
})
