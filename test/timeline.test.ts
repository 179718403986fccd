/**
 * The per-second (and per-100 ms) timeline, fed hand-picked times, so each
 * point's expected figures are worked out here rather than by a second
 * recorder: which bucket a request lands in, what a closed bucket reports,
 * that a bucket starts from zero, and where the points stop.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { MAX_POINTS, TimelineRecorder } from '../src/stats/timeline.js'

const ORIGIN = 5_000
// Latencies under 2.048 ms: an HDR histogram of 3 significant digits (in microseconds) keeps them exactly.

test('each second reports its own requests, errors, hedges, p50/p99 and mean hedge delay; a quiet second has no point', () => {
  const r = new TimelineRecorder(ORIGIN)
  // Second 0: four requests, one failed, delays 10 and 13 on two of them.
  r.request(ORIGIN + 0, 0.2, false, 10)
  r.request(ORIGIN + 400, 0.4, true, null)
  r.request(ORIGIN + 999.9, 0.6, false, 13)
  r.request(ORIGIN + 500, 2, false, null) // late (earlier than the last): still second 0
  r.hedge(ORIGIN + 999)
  // Second 1: one request, two hedges of which one is taken back.
  r.request(ORIGIN + 1000, 0.8, false, null)
  r.hedge(ORIGIN + 1500)
  r.hedge(ORIGIN + 1600)
  r.unhedge(ORIGIN + 1700)
  // Second 2: only a hedge (its request finished later): a point still.
  r.hedge(ORIGIN + 2999)
  // Second 3: nothing. Second 4: a taken-back hedge with none to take back.
  r.unhedge(ORIGIN + 4100)
  r.request(ORIGIN + 4200, 1.5, true, 7)
  const points = r.finish(ORIGIN + 4300)
  assert.deepEqual(points, [
    { t: 0, requests: 4, errors: 1, p50Ms: 0.4, p99Ms: 2, hedges: 1, delayMs: 11.5 },
    { t: 1, requests: 1, errors: 0, p50Ms: 0.8, p99Ms: 0.8, hedges: 1, delayMs: null },
    { t: 2, requests: 0, errors: 0, p50Ms: 0, p99Ms: 0, hedges: 1, delayMs: null },
    { t: 4, requests: 1, errors: 1, p50Ms: 1.5, p99Ms: 1.5, hedges: 0, delayMs: 7 },
  ])
})

test('the mean hedge delay is rounded to the microsecond; a 100 ms bucket is named in seconds', () => {
  const r = new TimelineRecorder(ORIGIN, 100)
  r.request(ORIGIN + 50, 1, false, 10)
  r.request(ORIGIN + 60, 1, false, 10)
  r.request(ORIGIN + 70, 1, false, 11)
  r.request(ORIGIN + 250, 3, false, null)
  r.request(ORIGIN + 1_730, 5, false, null)
  assert.deepEqual(
    r.finish(ORIGIN + 1_800).map((p) => [p.t, p.requests, p.delayMs]),
    [
      [0, 3, 10.333],
      [0.2, 1, null],
      [1.7, 1, null],
    ],
  )
})

test('finish closes the last, partial second once; nothing after it is lost or counted twice', () => {
  const r = new TimelineRecorder(ORIGIN)
  r.request(ORIGIN + 10, 3, false, null)
  r.request(ORIGIN + 1_010, 3, false, null)
  const points = r.finish(ORIGIN + 1_500)
  assert.deepEqual(
    points.map((p) => [p.t, p.requests]),
    [
      [0, 1],
      [1, 1],
    ],
  )
  assert.equal(r.points, points, 'the recorder keeps the points it returned')
})

test(`at most ${MAX_POINTS} points (an hour of seconds): later seconds add none`, () => {
  const r = new TimelineRecorder(ORIGIN)
  for (let s = 0; s < MAX_POINTS + 5; s++) r.request(ORIGIN + s * 1000, 1, false, null)
  const points = r.finish(ORIGIN + (MAX_POINTS + 5) * 1000)
  assert.equal(points.length, MAX_POINTS)
  assert.equal(points.at(-1)!.t, MAX_POINTS - 1)
})
