/** Colours: on a terminal unless NO_COLOR; FORCE_COLOR forces them on or off, as Node's own tools read it. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { stdoutColor } from '../src/cli/output.js'

test('NO_COLOR, FORCE_COLOR and the terminal decide the colours', () => {
  assert.equal(stdoutColor({}, true), true)
  assert.equal(stdoutColor({}, false), false)
  assert.equal(stdoutColor({ NO_COLOR: '1' }, true), false)
  assert.equal(stdoutColor({ FORCE_COLOR: '1' }, false), true, 'forced on in a pipe')
  assert.equal(stdoutColor({ FORCE_COLOR: '' }, false), true)
  assert.equal(stdoutColor({ FORCE_COLOR: '0' }, true), false, 'forced off on a terminal')
  assert.equal(stdoutColor({ FORCE_COLOR: 'false' }, true), false)
})
