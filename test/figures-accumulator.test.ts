/**
 * FiguresAccumulator, the add/close behind every Figures block: status
 * counts (HTTP's and gRPC's, 0-999, in an array, anything else in a map,
 * listed alike), slow and byte counts, what stays outside the figures
 * (interruptions, this machine's failures), messages and error kinds.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { errorKind, FiguresAccumulator } from '../src/stats/figures.js'
import { InterruptedError } from '../src/core/interruption.js'
import { MAX_MESSAGES, OTHER_MESSAGES } from '../src/results/run-result.js'

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

/** An error with a code, as undici and Node raise them. */
function coded(code: string, message = 'x', name = 'Error'): Error {
  const err = Object.assign(new Error(message), { code })
  err.name = name
  return err
}

test('slow means over the threshold; bytes add up; the ok and error counts split every request', () => {
  const acc = new FiguresAccumulator(100)
  acc.add(100, 200, null, 10) // at the threshold: not slow
  acc.add(100.5, 200, null, 20)
  acc.add(250, 503, null, 5)
  acc.add(3, null, coded('ECONNRESET'), 0)
  acc.add(300, 200, null, 0)
  const f = acc.toFigures()
  assert.deepEqual(f.slow, { thresholdMs: 100, count: 3 })
  assert.equal(f.bytes, 35)
  assert.equal(f.requests, 5)
  assert.equal(f.ok, 3)
  assert.equal(f.errors, 2)
  assert.equal(f.latencyMs.max, 300)
  assert.deepEqual(f.errorKinds, { ECONNRESET: 1 })
  assert.equal(f.errorMessages, undefined)
  assert.equal(f.generatorFailures, undefined)
  assert.equal(f.interrupted, undefined)
})

test("hedgebench's own aborts after an interruption, and this machine's failures, stay outside every other figure", () => {
  const acc = new FiguresAccumulator(100)
  acc.add(5, 200, null, 1)
  acc.add(150, null, new InterruptedError(), 0)
  acc.add(100, null, new InterruptedError(), 0) // at the threshold: not slow
  acc.add(120, null, new InterruptedError(), 0)
  acc.add(40, null, new Error('wrapped', { cause: new InterruptedError() }), 0)
  acc.add(1, null, coded('EMFILE'), 0)
  acc.add(1, null, coded('EMFILE'), 0)
  const f = acc.toFigures()
  assert.equal(f.requests, 1)
  assert.equal(f.errors, 0)
  assert.deepEqual(f.errorKinds, {})
  assert.equal(f.interrupted, 4)
  assert.equal(f.interruptedSlow, 2)
  assert.equal(f.interruptedMaxMs, 150)
  assert.deepEqual(f.generatorFailures, { EMFILE: 2 })
  assert.equal(f.latencyMs.max, 5)
})

test('failed answers are counted by message while few are distinct, the rest under one name', () => {
  const acc = new FiguresAccumulator(100)
  for (let i = 0; i < MAX_MESSAGES + 5; i++) acc.add(1, 500, null, 0, `m${i}`)
  acc.add(1, 500, null, 0, 'm0')
  const messages = acc.toFigures().errorMessages!
  assert.equal(Object.keys(messages).length, MAX_MESSAGES)
  assert.equal(messages.m0, 2)
  assert.equal(messages[`m${MAX_MESSAGES - 2}`], 1)
  assert.equal(messages[`m${MAX_MESSAGES - 1}`], undefined)
  assert.equal(messages[OTHER_MESSAGES], 6)
})

test('an error kind is its code, a GOAWAY reset, the HTTP/1.1 parser reason, else its class name', () => {
  assert.equal(errorKind(coded('UND_ERR_SOCKET', 'stream closed: "GOAWAY" frame received with code 0')), 'HTTP2_GOAWAY')
  assert.equal(errorKind(coded('UND_ERR_SOCKET', 'other side closed')), 'UND_ERR_SOCKET')
  assert.equal(errorKind(coded('ECONNREFUSED')), 'ECONNREFUSED')
  assert.equal(errorKind(coded('', 'bad status line', 'HTTPParserError')), 'HTTPParserError (bad status line)')
  assert.equal(errorKind(coded('', '', 'HTTPParserError')), 'HTTPParserError')
  assert.equal(errorKind(Object.assign(new TypeError('t'), { code: 42 })), 'TypeError')
  const nameless = new Error('n')
  nameless.name = ''
  assert.equal(errorKind(nameless), 'Error')
})
