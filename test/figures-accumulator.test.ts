/**
 * FiguresAccumulator's status counts: HTTP and gRPC statuses (0-999) are
 * counted in an array, anything else in a map; the figures list each
 * status once with its count, in the same order either way.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FiguresAccumulator } from '../src/stats/figures.js'

test('every status is counted once under its own key, whichever store held it', () => {
  const acc = new FiguresAccumulator(100)
  const statuses = [200, 200, 503, 0, 14, 999, 1000, 200, 1000, 5.5]
  for (const s of statuses) acc.add(1, s, null, 0)
  acc.add(1, null, new Error('boom'), 0)
  const figures = acc.toFigures()
  assert.deepEqual(figures.statusCodes, { '0': 1, '1000': 2, '14': 1, '200': 3, '5.5': 1, '503': 1, '999': 1 })
  assert.deepEqual(
    [...acc.statusCodes()].sort((a, b) => a[0] - b[0]),
    [
      [0, 1],
      [5.5, 1],
      [14, 1],
      [200, 3],
      [503, 1],
      [999, 1],
      [1000, 2],
    ],
  )
  assert.equal(figures.requests, statuses.length + 1)
  // 200 three times and gRPC's OK (0); the rest, and the transport error, are errors.
  assert.equal(figures.ok, 4)
  assert.equal(figures.errors, statuses.length + 1 - 4)
})
