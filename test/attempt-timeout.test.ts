/**
 * -t stops every attempt on time whatever -c is. The deadline queue behind
 * -t (engine/request-timeout.ts) used to re-arm its one timer a full
 * timeout away when an expiry started the next request at once, so the
 * older pending attempts waited for it: `-t 100ms -c 10` against a server
 * that never answers gave timeouts of ~200 ms.
 *
 * Margins: what the product promises, plus a fixed margin that does not
 * widen with the lateness of this run's own timers. The queue test checks
 * the queue's state (when its one timer is due), not a timer's lateness;
 * the run test bounds the mean service time between the promise (100 ms)
 * and what the defect gives (~172 ms).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Deadline, DeadlineQueue } from '../src/engine/request-timeout.js'
import { run } from '../src/run/run.js'
import { spawnFixedDelayServer } from './helpers/fixed-delay-server.js'

class Entry extends Deadline {
  late = -1
  constructor(readonly onExpire: (e: Entry) => void = () => {}) {
    super()
  }
  expire(): void {
    this.late = performance.now() - this.at
    this.onExpire(this)
  }
}

test('deadline queue: an attempt added while another expires does not delay the older ones', async () => {
  const timeoutMs = 200
  const q = new DeadlineQueue(timeoutMs)
  // The first expiry starts the next request at once, as the load generator does; once that expiry pass is
  // over, the queue's timer must be due at the oldest pending deadline (second's), not at next's.
  const next = new Entry()
  let armedFor: number | null = null
  let secondDoneFirst = false
  const first = new Entry(() => {
    q.add(next)
    setImmediate(() => {
      armedFor = q.timerAt
      secondDoneFirst = second.late >= 0
    })
  })
  q.add(first)
  await new Promise((r) => setTimeout(r, 5))
  const second = new Entry()
  q.add(second)
  await new Promise((r) => setTimeout(r, 2 * timeoutMs + 50))
  assert.ok(first.late >= 0 && second.late >= 0 && next.late >= 0, `all expired: ${first.late}, ${second.late}, ${next.late}`)
  // Before the fix the timer stayed armed a full timeout away, for next, and second waited for it: 195 ms late.
  // (A machine frozen past second's deadline expires both in one pass: then nothing is left to wait for.)
  assert.ok(
    secondDoneFirst || armedFor === second.at,
    `after first expired the timer was due at ${armedFor}: second is due at ${second.at}, next at ${next.at}`,
  )
  assert.equal(q.pending, 0)
  assert.equal(q.timerAt, null)
})

test('-t 100ms -c 10 against a server that never answers: every request ends at 100 ms', async (t) => {
  // -q 200/s spaces the dispatches 5 ms apart, so deadlines are distinct, and
  // keeps all 10 slots busy (100 ms each: 100/s), so each expiry starts the
  // next request at once: the case the queue got wrong, every time. (Closed
  // loop hit it only when the dispatches happened to spread over > 1 ms.)
  // In a child process (its own event loop) and answering after 10 s: never, for a 100 ms -t.
  const server = await spawnFixedDelayServer(10_000)
  t.after(() => server.close())
  const url = server.url
  const options = { urls: [url], timeoutMs: 100, concurrency: 10, rate: 200, mode: 'plain' as const, warmup: 0, seed: 5 }
  const result = await run({ ...options, requests: 50 })
  const phase = result.phases.plain!
  assert.equal(phase.requests, 50)
  assert.deepEqual(phase.errorKinds, { UND_ERR_HEADERS_TIMEOUT: 50 })
  // Latency runs from the write, the deadline from the dispatch. Open loop:
  // the service time (from the actual send) is what -t bounds. A deadline
  // re-armed when the slot's next request starts (the defect) holds more than
  // half the requests for two -t: a mean of ~172 ms against ~101 ms. The
  // bound sits between, a fixed margin that does not widen with this run's
  // own timer lateness; the mean, not the max, because one stall of the
  // machine late-fires the few deadlines due inside it, not most of 50
  // spread over 350 ms (a 100 ms stall over a third of them adds ~17 ms).
  const service = phase.serviceTime!.latencyMs
  assert.ok(service.mean! < 140, `mean ${service.mean} ms: deadlines run from the dispatch, not re-armed: ${JSON.stringify(service)}`)
})

test('a hedge delay not below -t is warned about: no hedge could ever fire', async (t) => {
  const server = await spawnFixedDelayServer(1)
  t.after(() => server.close())
  const options = { urls: [server.url], timeoutMs: 100, concurrency: 1, requests: 3, mode: 'hedged' as const, warmup: 0, seed: 6 }
  const late = await run({ ...options, hedge: { delay: 100 } })
  assert.ok(
    late.warnings.some((w) => /hedge delay \(100(\.0)? ?ms\) is not below -t \(100(\.0)? ?ms\)/.test(w)),
    late.warnings.join('\n'),
  )
  const early = await run({ ...options, hedge: { delay: 99 } })
  assert.ok(!early.warnings.some((w) => /not below -t/.test(w)), early.warnings.join('\n'))
})
