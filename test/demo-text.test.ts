/** The demo's text names the -c it ran, and counts in the singular when there is one. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { renderDemo } from '../src/report/demo-text.js'
import { makeHedgedRun } from './helpers/result-fixture.js'

test('the demo footer suggests the -c the demo ran last; one unsent attempt is "attempt"', () => {
  const result = makeHedgedRun()
  result.phases.hedged!.hedging!.unsent = 1
  const text = renderDemo({ profile: 'shared-slow', runs: [{ concurrency: 2, result }, { concurrency: 4, result }] })
  assert.match(text, /Run "hedgebench --profile shared-slow -c 4" for the full report/)
  assert.match(text, / 1 attempt never reached the wire/)
})
