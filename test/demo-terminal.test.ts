/**
 * Ctrl-C typed at a real terminal during `hedgebench demo` (end-to-end tier:
 * the demo's warm-up and first phase take seconds): the run in progress ends
 * as an interrupted run does, the table shows what was measured, marked
 * PARTIAL, exit 0, and no later run starts.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { children, hasScript, runInPty } from './helpers/pty.js'
import { skipWithout } from './helpers/required-tool.js'

after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL')
})

describe('the demo at a terminal', { skip: skipWithout(hasScript, 'script', 'util-linux `script` is not installed') }, () => {
  test('Ctrl-C typed at the terminal during the demo: the table shows what was measured, PARTIAL, exit 0', async () => {
    let typed = false
    const run = await runInPty(['demo', '-n', '200000', '-c', '4,40'], 80, 60_000, undefined, (screen, keys) => {
      // Typed once the demo's first measured phase is under way (its bar names it).
      if (typed || !/c=4 plain/.test(screen)) return
      typed = true
      keys('\x03')
    })
    assert.equal(run.timedOut, false, `Ctrl-C was not honoured; last output: ${JSON.stringify(run.screen.slice(-300))}`)
    assert.ok(typed, `the plain phase never showed; screen: ${JSON.stringify(run.screen.slice(-500))}`)
    assert.equal(run.code, 0, run.screen.slice(-2000))
    assert.match(run.screen, /4 in flight/)
    assert.match(run.screen, /no hedge .* \d+ \/ \d+ {2}match/)
    assert.match(run.screen, /PARTIAL: interrupted during plain/)
    assert.doesNotMatch(run.screen, /40 in flight/, 'no run starts after Ctrl-C')
    assert.match(run.screen, /Each row: 200000 requests, or what an interrupted run measured\./)
  })
})
