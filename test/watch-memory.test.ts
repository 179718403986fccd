/**
 * The soak's claim (docs/watch.md, "A soak": memory flat over hours at
 * 1,000 requests/s) in a test short enough for the suite: a watch at
 * 1,000 requests/s keeps nothing per request. Read from heap snapshots
 * (counts of reachable objects, not RSS) at two seconds of the same watch:
 * the requests' own objects are only those in flight, and what the heap
 * gained between them is a small fraction of the requests sent meanwhile
 * (the per-second points, kept by design, are a few objects a second).
 * scripts/soak.sh is the hour-long measurement.
 */
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnTarget } from '../src/sim/target.js'
import { Watch } from '../src/index.js'
import { heapCounts, type HeapCounts } from './helpers/heap-counts.js'

// In a process of its own: the replicas' objects are not the client's.
const target = await spawnTarget({ profile: 'pi', replicas: 3, seed: 49 })
after(() => target.close())

const RATE = 1000
const CONCURRENCY = 100
const MAX_ATTEMPTS = 2
/** The objects of one request and its attempts (engine/hedged-request.ts, engine/attempt.ts, the load generator's call). */
const PER_REQUEST = ['HedgedRequest', 'Attempt', 'Call']
/** Seconds of the window at which the heap is counted: the first after the code has mostly been compiled (it grows the heap once, by about a thousand nodes, in the first seconds). */
const FIRST_S = 8
const SECOND_S = 18

test('a watch at 1,000 requests/s keeps nothing per request: the heap grows by far fewer objects than requests sent', { timeout: 90_000 }, async () => {
  const counts = new Map<number, { heap: HeapCounts; requests: number }>()
  let taking: Promise<void> = Promise.resolve()
  const w: Watch = new Watch({
    urls: target.urls,
    rate: RATE,
    concurrency: CONCURRENCY,
    durationMs: (SECOND_S + 2) * 1000,
    warmup: 200,
    seed: 7,
    // A delay window by count: the default one holds the last 30 s of attempts, by design, and would grow through the test.
    hedge: { adaptiveWindow: { requests: 2000 }, maxAttempts: MAX_ATTEMPTS },
    onSecond: (s) => {
      if (s.t !== FIRST_S && s.t !== SECOND_S) return
      const requests = w.snapshot().segments.reduce((sum, g) => sum + g.lanes.plain.requests + g.lanes.hedged.requests, 0)
      taking = taking.then(async () => void counts.set(s.t, { heap: await heapCounts(PER_REQUEST), requests }))
    },
  })
  const result = await w.run()
  await taking
  const first = counts.get(FIRST_S)
  const second = counts.get(SECOND_S)
  assert.ok(first && second, `the heap counted at ${FIRST_S} s and ${SECOND_S} s: ${[...counts.keys()]}`)
  const sent = second.requests - first.requests
  // Both lanes sent; the generator kept (most of) its rate, so that thousands of requests lie between the two counts.
  assert.ok(sent > (RATE * (SECOND_S - FIRST_S)) / 2, `${sent} requests between the counts`)
  // A request's objects live while it is in flight: at most the in-flight cap, each with its attempts.
  for (const [t, { heap }] of counts)
    for (const name of PER_REQUEST) assert.ok(heap.byName[name]! <= CONCURRENCY * MAX_ATTEMPTS, `${heap.byName[name]} ${name} objects at ${t} s`)
  // Anything kept per request is at least one node a request: `sent` more. What is kept by design grows by the second
  // (each second's points of both lanes and their numbers, the detectors' samples: about 100 nodes a second, seen),
  // not by the request, plus code compiled meanwhile: it stays under one node per two requests even at half the rate.
  const grown = second.heap.nodes - first.heap.nodes
  assert.ok(grown < sent / 2, `the heap grew by ${grown} nodes while ${sent} requests were sent`)
  assert.equal(result.partial, false)
})
