/**
 * Extra load against a dead replica (defect #4): originals sent to a
 * replica that refuses connections never reach the wire, so attempts can be
 * fewer than requests; the extra load must still count the hedges that were
 * sent (never negative), in the result, the text report and the verdict.
 * The target runs in its own process; replica 2 of 3 dies after 3 requests
 * (a count, not a clock), ejection is off so it keeps receiving originals.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'
import { spawnTarget } from '../src/sim/target.js'
import { extraLoadPct, extraLoadPctOf } from '../src/results/extra-load.js'
import { simSession, writeTempProfile } from './helpers/sim.js'

const { targets, temps } = simSession()

test('a dead replica: extra load is hedges sent per request, positive when hedges were sent', async () => {
  const temp = writeTempProfile({
    name: 'one-dead',
    description: 'three fast replicas; the third dies after 3 requests',
    replicas: 3,
    model: { base: { type: 'uniform', min: 1, max: 3 }, overrides: [{ index: 2, dieAfter: 3 }] },
  })
  temps.push(temp)
  const target = await spawnTarget({ profile: temp.path, seed: 5 })
  targets.push(target)
  const N = 150
  const result = await run({ urls: target.urls, mode: 'hedged', requests: N, concurrency: 4, warmup: 0, eject: false, hedge: { delay: 50 }, seed: 3 })
  const phase = result.phases.hedged!
  const h = phase.hedging!
  // About a third of the originals go to the dead replica and fail at connect (never on the wire).
  assert.ok(
    phase.attempts < phase.requests + h.hedgesSent,
    `attempts ${phase.attempts}, requests ${phase.requests}, hedges ${h.hedgesSent}: some originals never reached the wire`,
  )
  assert.ok(h.hedgesSent > 0, 'connection errors trigger hedges at once')
  const expected = Math.round((h.hedgesSent / phase.requests) * 100 * 1000) / 1000
  assert.equal(h.extraLoadPct, expected)
  assert.equal(extraLoadPct(phase), expected)
  const text = renderText(result)
  assert.match(text, new RegExp(`Hedges sent:\\s+${h.hedgesSent} \\(\\+${expected.toFixed(1)}% extra load\\)`))
  assert.doesNotMatch(text, /-\d+(\.\d+)?% (extra load|requests)/)
})

test('extra load is hedges sent per call, in percent to 0.001: fan-out calls when there are any, none without hedging or calls', () => {
  assert.equal(extraLoadPctOf(1, 3), 33.333)
  assert.equal(extraLoadPctOf(2, 3), 66.667, 'rounded, not cut')
  assert.equal(extraLoadPctOf(5, 0), 0)
  assert.equal(extraLoadPctOf(0, 10), 0)
  const hedged = { requests: 100, hedging: { hedgesSent: 7 } }
  assert.equal(extraLoadPct(hedged), 7)
  assert.equal(extraLoadPct({ ...hedged, calls: { requests: 500 } as never }), 1.4, 'per fan-out call, each hedged on its own')
  assert.equal(extraLoadPct({ requests: 100 }), 0)
})
