/**
 * Issue 30: the verdict of real runs on the simulated replicas (a child
 * process). Independent stalls (the `pi` profile, its 1 s stalls scaled to
 * 200 ms as in hedging-stalls.test.ts) are removed by hedging: the verdict
 * says so and is green. Slowness shared by every replica is not: the verdict
 * says the tail did not improve and is red. Both runs interleave the lanes,
 * so both meet the same machine and the same pauses.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import { hedgeVerdict } from '../src/report/verdict.js'
import { loadProfile } from '../src/sim/profile.js'
import { profileTargets } from './helpers/profiles.js'

const target = profileTargets()

test('pi (independent stalls): the verdict names the slow requests removed, for the extra requests, and is green', async (t) => {
  const pi = loadProfile('pi')
  // 2 % of requests stall 200 ms, on 3 replicas answering in 2-6 ms; --slow 100ms sits between.
  const tg = await target(t, 'pi-scaled', {
    replicas: pi.replicas,
    seed: pi.seed,
    model: { base: { type: 'uniform', min: 2, max: 6 }, stalls: [{ type: 'independent', probability: 0.02, ms: 200 }] },
  })
  const result = await run({ urls: tg.urls, concurrency: 4, requests: 1500, warmup: 0, schedule: 'interleaved', slowMs: 100, seed: 33, hedge: { delay: 20 } })
  const { plain, hedged } = result.phases
  assert.ok(plain && hedged)
  const v = hedgeVerdict(plain, hedged, result)
  const context = `${v.decision}: ${v.headline} | ${v.details.join(' | ')}`
  // Plain ~Binomial(1500, 0.02) slow: mean 30, sd 5.4; hedged ~Poisson(1500 * 0.02 * 0.02 = 0.6). At 30 against
  // 0.6 the exact interval excludes "equally slow" by far (it does from 12 against 0).
  // The lanes' sizes differ by the coin that picks each request's lane, so the counts are given with them.
  const counts = `from ${plain.slow.count} of ${plain.requests} to ${hedged.slow.count} of ${hedged.requests}`
  const removed =
    plain.requests === hedged.requests
      ? `removed ${plain.slow.count - hedged.slow.count} of ${plain.slow.count} requests over 100 ms`
      : `cut requests over 100 ms ${counts}`
  assert.ok(v.headline.startsWith(`Hedging ${removed} (-`), context)
  assert.match(v.headline, /^[^(]*\(-\d+ %, 95 % CI -\d+ % to -\d+ %\)/, context)
  // Green: the tail improved and nothing else got worse beyond noise. The body's rows (p10-p95) compare two
  // samples of one distribution, each at the strict non-overlap test; a row can still trip by chance
  // (about 0.3 % each), and that is amber, never red.
  assert.notEqual(v.tone, 'bad', context)
  if (v.decision === 'improved') assert.equal(v.tone, 'good')
  else assert.match(v.headline, /; (the median|p\d+) rose [^;]*\.$/, context)
})

test('shared slowness: the verdict says the tail did not improve, and is red', async (t) => {
  // The shared-slow profile's model (one dependency behind every replica pauses, all replicas with it), paused
  // nearly all the time: 30-40 ms pauses about 1 ms apart, 2 ms of work. Every request waits in a pause
  // (it needs 2 ms of gaps; a gap that long comes e^-2 of the time, in 1/36 of it), in both lanes alike,
  // whatever replica its hedge goes to, so both lanes are all (or all but a few) over --slow 20ms. 150-odd
  // requests a lane cannot bound a p99 (needs 368): the slow count decides, and it cannot move.
  const shared = loadProfile('shared-slow')
  const tg = await target(t, 'shared-always', {
    replicas: shared.replicas,
    seed: shared.seed,
    model: { base: { type: 'fixed', ms: 2 }, stalls: [{ type: 'pause', everyMs: 1, durationMs: { min: 30, max: 40 }, scope: 'shared' }] },
  })
  const result = await run({ urls: tg.urls, concurrency: 10, requests: 150, warmup: 0, schedule: 'interleaved', slowMs: 20, seed: 34, hedge: { delay: 5 } })
  const { plain, hedged } = result.phases
  assert.ok(plain && hedged)
  assert.ok(hedged.hedging!.hedgesSent > 0, 'hedges were sent into the pauses')
  const v = hedgeVerdict(plain, hedged, result)
  const context = `${v.decision}: ${v.headline}`
  assert.equal(v.decision, 'not improved', context)
  assert.equal(v.tone, 'bad')
  assert.match(
    v.headline,
    new RegExp(
      `^Hedging did not improve the tail: requests over 20 ms ${plain.slow.count} -> ${hedged.slow.count} \\(within noise: [^)]*\\), for \\+\\d+\\.\\d % requests`,
    ),
    context,
  )
})
