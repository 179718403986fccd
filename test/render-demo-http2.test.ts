/**
 * `demo --http2` output, as a pure renderer over fixed results: each block
 * names its protocol and what its cancels cost the connections, and the
 * closing table puts HTTP/1.1 and h2c side by side.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { renderDemo } from '../src/report/demo-text.js'
import type { RunResult } from '../src/results/run-result.js'
import { makeHedgedRun } from './helpers/result-fixture.js'

function withCost(run: RunResult, opened: number, closed: number, reset: number): RunResult {
  const hedged = { ...run.phases.hedged!, connectionsOpened: opened, connectionsClosedByCancel: closed, streamsResetByCancel: reset }
  return { ...run, phases: { ...run.phases, hedged } }
}

test('demo --http2: blocks per protocol with the cost of cancels, then HTTP/1.1 and h2c side by side', () => {
  const base = makeHedgedRun()
  const text = renderDemo({
    profile: 'pi',
    runs: [
      { concurrency: 4, protocol: 'HTTP/1.1', result: withCost(base, 38, 38, 0) },
      { concurrency: 4, protocol: 'h2c', result: withCost(base, 0, 0, 41) },
    ],
  })
  assert.match(text, /^4 in flight over HTTP\/1\.1 /m)
  assert.match(text, /^4 in flight over h2c /m)
  assert.match(text, /cancels cost: 0 streams reset, 38 connections closed; 38 connections opened/)
  assert.match(text, /cancels cost: 41 streams reset, 0 connections closed; 0 connections opened/)
  const rows = text.split('\n').filter((l) => /^4 in flight, /.test(l))
  assert.equal(rows.length, 2)
  assert.deepEqual(rows[0]!.split(/\s{2,}/).slice(1, 4), ['38', '38', '0'])
  assert.deepEqual(rows[1]!.split(/\s{2,}/).slice(1, 4), ['0', '0', '41'])
})

test('demo without --http2 keeps its one table per concurrency and no protocol comparison', () => {
  const text = renderDemo({ profile: 'pi', runs: [{ concurrency: 4, result: makeHedgedRun() }] })
  assert.match(text, /^4 in flight {2,}p99/m)
  assert.doesNotMatch(text, /cancels cost|conns opened/)
})
