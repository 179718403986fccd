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
/** The second of the first count: after the code has mostly been compiled (it grows the heap once, by about a thousand nodes, in the first seconds). */
const FIRST_S = 8
/** Requests finished between the two counts (10 s at the rate). Counted, not timed: a snapshot stops the process for a while (seconds on a busy machine), and the open loop does not make up for it. */
const BETWEEN = 10_000
/** The watch's bound, should the generator fall far behind. */
const LONGEST_MS = 60_000

test('a watch at 1,000 requests/s keeps nothing per request: the heap grows by far fewer objects than requests sent', { timeout: 90_000 }, async () => {
  const counts: Array<{ heap: HeapCounts; requests: number }> = []
  let taking: Promise<void> | null = null
  const stop = new AbortController()
  const requests = (): number => {
    const t = w.totals()
    return t ? t.plain.requests + t.hedged.requests : 0
  }
  const w: Watch = new Watch({
    urls: target.urls,
    rate: RATE,
    concurrency: CONCURRENCY,
    durationMs: LONGEST_MS,
    warmup: 200,
    seed: 7,
    signal: stop.signal,
    // A delay window by count: the default one holds the last 30 s of attempts, by design, and would grow through the test.
    hedge: { adaptiveWindow: { requests: 2000 }, maxAttempts: MAX_ATTEMPTS },
    onSecond: (s) => {
      if (taking === null && s.t >= FIRST_S) {
        // The requests read after the snapshot: those finished while it streamed are not counted as between.
        taking = heapCounts(PER_REQUEST).then((heap) => void counts.push({ heap, requests: requests() }))
      } else if (counts.length === 1 && requests() - counts[0]!.requests >= BETWEEN) {
        const now = requests()
        taking = taking!.then(async () => {
          counts.push({ heap: await heapCounts(PER_REQUEST), requests: now })
          stop.abort()
        })
      }
    },
  })
  await w.run()
  await taking
  const [first, second] = counts
  assert.ok(first && second, `${BETWEEN} requests between two counts within ${LONGEST_MS / 1000} s: ${counts.map((c) => c.requests)}`)
  const sent = second.requests - first.requests
  // A request's objects live while it is in flight: at most the in-flight cap, each with its attempts.
  for (const [i, { heap }] of counts.entries())
    for (const name of PER_REQUEST) assert.ok(heap.byName[name]! <= CONCURRENCY * MAX_ATTEMPTS, `${heap.byName[name]} ${name} objects at count ${i + 1}`)
  // Anything kept per request is at least one node a request: `sent` more, beside what is kept by design, which grows by
  // the second (each second's points of both lanes, the detectors' samples: about 100 nodes a second, seen) and by the
  // code compiled meanwhile (1,500 nodes at most, seen), not by the request.
  const grown = second.heap.nodes - first.heap.nodes
  assert.ok(grown < sent, `the heap grew by ${grown} nodes while ${sent} requests were sent`)
})
