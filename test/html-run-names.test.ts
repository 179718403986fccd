/** A compare page names its runs by their --label; an unlabelled run (or two of one label) by its file name. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { compareRuns } from '../src/report/compare.js'
import { renderHtml } from '../src/report/html.js'
import { makeHedgedRun } from './helpers/result-fixture.js'

test('runs named by label, the unlabelled one by its file name, in the table and in every chart', () => {
  const runs = [makeHedgedRun({ label: 'before' }), makeHedgedRun({ label: 'run' }, 1), makeHedgedRun({ label: 'after-the-connection-pool-change' }, 2)]
  const files = ['2026-12-04T10-00-00Z-before.json', '2026-12-04T10-05-00Z-run.json', '2026-12-04T10-10-00Z-after.json']
  const comparison = compareRuns(runs.map((result, i) => ({ name: files[i]!, result })))
  assert.deepEqual(
    comparison.runs.map((r) => r.tag),
    ['A', 'B', 'C'],
    'the terminal letters them (a long label makes a column too wide)',
  )
  const html = renderHtml(runs, { comparison })
  const names = ['before', '2026-12-04T10-05-00Z-run', 'after-the-connection-pool-change']
  const head = /<table class="comparison"><thead><tr>(.*?)<\/tr>/.exec(html)![1]!
  assert.deepEqual(
    [...head.matchAll(/<th>([^<]*)<\/th>/g)].map((m) => m[1]),
    ['metric', `${names[0]} (baseline)`, names[1], names[2]],
  )
  for (const name of names) assert.match(html, new RegExp(`data-series="${name}/hedged:percentiles"`))
})
