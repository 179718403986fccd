/**
 * The terminal view of a watch (cli/watch-view.ts), drawn into a string: a
 * mark ignored is a fleeting note, gone at the window's start or a few
 * seconds later; a mark taken stays.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { FLEETING_S, terminalView } from '../src/cli/watch-view.js'
import type { LaneSecond, WatchResult, WatchSecond } from '../src/results/watch-result.js'

function lane(t: number): LaneSecond {
  return { t, requests: 100, errors: 0, slow: 0, attempts: 100, hedges: 0, hedgeWins: 0, cancelled: 0, budgetDenied: 0, p50Ms: 1, p99Ms: 2, delayMs: null }
}

const second = (t: number): WatchSecond => ({ t, plain: lane(t), hedged: { ...lane(t), delayMs: 3 } })

const state = { rate: 200, marks: [], seconds: [] } as unknown as WatchResult

/** The block as it stands after the last redraw. */
function screen(): { view: ReturnType<typeof terminalView>; last(): string } {
  let text = ''
  const view = terminalView(
    (t) => {
      text = t
    },
    () => 120,
  )
  return { view, last: () => text }
}

test('a mark ignored in the warm-up leaves the screen when the window starts', () => {
  const { view, last } = screen()
  view.note('mark ignored: no traffic yet (the measured window has not started)', true)
  view.second(second(1), state)
  assert.doesNotMatch(last(), /mark ignored/)
  view.close()
})

test(`a mark ignored in the window stays ${FLEETING_S} s; a mark taken stays on`, () => {
  const { view, last } = screen()
  view.second(second(1), state)
  view.note('mark ignored: no traffic yet in segment "at 2s"', true)
  view.note('mark "flip" (key): a new segment from 1.4 s')
  for (let t = 2; t <= 1 + FLEETING_S; t++) {
    view.second(second(t), state)
    assert.match(last(), /mark ignored/, `still shown at ${t} s`)
  }
  view.second(second(2 + FLEETING_S), state)
  assert.doesNotMatch(last(), /mark ignored/)
  assert.match(last(), /mark "flip"/)
  view.close()
})
