/**
 * eventNow: one clock read per callback. Within one synchronous stretch
 * every stamp is the same reading; after the callback (its microtasks) and
 * in the next one, a new reading is taken.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { performance } from 'node:perf_hooks'
import { eventNow } from '../src/core/event-clock.js'

/** Waits until performance.now() has moved past `t` (bounded: a clock that moves at all does so within a few µs). */
function spinPast(t: number): void {
  for (let i = 0; i < 1e7 && performance.now() <= t; i++);
  assert.ok(performance.now() > t, 'the clock moved')
}

test('within one callback every stamp is the first reading, however much time passes', () => {
  const first = eventNow()
  spinPast(first)
  assert.equal(eventNow(), first)
  assert.ok(performance.now() > first)
})

test('the reading is forgotten once the callback has ended: a later callback reads the clock again', async () => {
  const first = eventNow()
  spinPast(first)
  await new Promise<void>((resolve) => setImmediate(resolve))
  const next = eventNow()
  assert.ok(next > first, `${next} > ${first}`)
  // And the new reading holds for the rest of this callback.
  spinPast(next)
  assert.equal(eventNow(), next)
})

test('a promise reaction queued after the reading was forgotten reads the clock again', async () => {
  const first = eventNow()
  spinPast(first)
  // The forgetting microtask was queued by the first read: reactions queued after it see a new reading.
  await Promise.resolve()
  await Promise.resolve()
  assert.ok(eventNow() > first)
})
