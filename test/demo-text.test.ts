/** The demo's text names the -c it ran, and counts in the singular when there is one. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { renderDemo } from '../src/report/demo-text.js'
import { makeHedgedRun } from './helpers/result-fixture.js'

test('the demo footer suggests the -c the demo ran last; one unsent attempt is "attempt"', () => {
  const result = makeHedgedRun()
  result.phases.hedged!.hedging!.unsent = 1
  const text = renderDemo({
    profile: 'shared-slow',
    runs: [
      { concurrency: 2, result },
      { concurrency: 4, result },
    ],
  })
  assert.match(text, /Run "hedgebench --profile shared-slow -c 4" for the full report/)
  assert.match(text, / 1 attempt never reached the wire/)
})

test('the demo prints the verdict the run report prints (issue 30 item 4)', () => {
  const text = renderDemo({ profile: 'pi', runs: [{ concurrency: 4, result: makeHedgedRun() }] })
  const lines = text.split('\n')
  const at = lines.indexOf(
    'Hedging removed 40 of 40 requests over 1 s (-100 %, 95 % CI -100 % to -90 %) and cut p99.9 from 1.02 s to 30.9 ms, for +3.5 % requests.',
  )
  assert.ok(at > 0, text)
  assert.match(lines[at - 1]!, /^hedge@14\.8ms /)
})
