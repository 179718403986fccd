/**
 * The sweep's frontier chart read as a person reads it: extra load from 0
 * with the plain lane's point whole, the tail on a log axis (p99.9 too when
 * the lanes can bound it), every lane named at its point with no two names
 * over each other or over a point, the recommended setting named and the
 * ones that cannot be told from it marked ≈, in the chart and its caption.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { frontierChart } from '../src/report/frontier-chart.js'
import { type Box, labelWidth, LABEL_HEIGHT_PX, overlaps, placeLabels } from '../src/report/label-layout.js'
import { sweepFrontier } from '../src/report/sweep-frontier.js'
import { renderSweepHtml } from '../src/report/sweep-html.js'
import { makeSweep, TWELVE_DELAYS } from './helpers/sweep-fixture.js'

const sweep = makeSweep({ delays: TWELVE_DELAYS, label: 'twelve' })
const frontier = sweepFrontier(sweep)

/** Each point label's text and the box its estimated width gives it. */
function labelBoxes(svg: string): Array<Box & { text: string }> {
  return [...svg.matchAll(/<text class="point-label" x="([\d.]+)" y="([\d.]+)"(?: font-weight="700")?>([^<]*)<\/text>/g)].map((m) => {
    const text = m[3]!.replaceAll('&amp;', '&')
    const bold = m[0].includes('font-weight')
    return { text, x: Number(m[1]) - 1, y: Number(m[2]) - LABEL_HEIGHT_PX + 4, w: labelWidth(text, bold), h: LABEL_HEIGHT_PX }
  })
}

function markerBoxes(svg: string): Box[] {
  return [
    ...svg.matchAll(/<g data-markers="[^"]*" class="dot"><(circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"|rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)")/g),
  ].map((m) =>
    m[2] !== undefined
      ? { x: Number(m[2]) - Number(m[4]), y: Number(m[3]) - Number(m[4]), w: 2 * Number(m[4]), h: 2 * Number(m[4]) }
      : { x: Number(m[5]), y: Number(m[6]), w: Number(m[7]), h: Number(m[7]) },
  )
}

test('twelve settings: every lane named at its point, no name over another or over a point, the recommended one named', () => {
  assert.equal(frontier.recommendation.label, '20ms')
  assert.deepEqual(frontier.recommendation.indistinguishable, ['22ms'])
  const { svg, unplaced } = frontierChart(frontier, 'p99')
  assert.deepEqual(unplaced, [])
  const labels = labelBoxes(svg)
  const names = labels.flatMap((l) => l.text.split(', '))
  assert.deepEqual([...names].sort(), ['no hedging', '20ms: recommended', '≈ 22ms', ...TWELVE_DELAYS.filter((d) => d !== '20ms' && d !== '22ms')].sort())
  const markers = markerBoxes(svg)
  assert.equal(markers.length, 13, 'the plain lane and twelve settings')
  for (const [i, a] of labels.entries()) {
    for (const b of labels.slice(i + 1)) assert.ok(!overlaps(a, b), `"${a.text}" over "${b.text}"`)
    for (const m of markers) assert.ok(!overlaps(a, m), `"${a.text}" over a point ${JSON.stringify(m)}`)
  }
  assert.doesNotMatch(svg, /class="legend"/, 'no legend to match by colour')
})

test('the plain lane is drawn whole at 0 % inside the plot; the tail on a log axis of 1-2-5 ticks', () => {
  const { svg } = frontierChart(frontier, 'p99')
  const frame = /<rect class="frame" x="([\d.]+)"/.exec(svg)!
  const plain = /<g data-markers="plain" class="dot"><rect x="([\d.]+)"/.exec(svg)!
  assert.ok(Number(plain[1]) > Number(frame[1]), `the plain square (x ${plain[1]}) inside the plot (from ${frame[1]})`)
  const zero = /<text class="tick" x="([\d.]+)" y="[\d.]+" text-anchor="middle">0<\/text>/.exec(svg)!
  assert.ok(Number(zero[1]) > Number(frame[1]), 'the x axis starts at 0, a margin inside the plot')
  const yTicks = [...svg.matchAll(/<text class="tick" x="[\d.]+" y="[\d.]+" text-anchor="end">([^<]*)<\/text>/g)].map((m) => m[1])
  assert.deepEqual(yTicks, ['20 ms', '50 ms', '100 ms', '200 ms', '500 ms', '1 s'])
})

test('p99.9 is charted when the lanes hold enough requests to bound it; the caption names the recommended setting and the ones close to it', () => {
  const page = renderSweepHtml(sweep, frontier)
  assert.match(page, /data-chart="sweep-frontier-p99"/)
  assert.doesNotMatch(page, /data-chart="sweep-frontier-p99.9"/, '2,000 requests a lane cannot bound p99.9')
  assert.match(page, /<figcaption>Recommended: 20ms, ringed and named at its point\. Marked ≈: cannot be told apart from it on the tail: 22ms\./)
  const big = makeSweep({ delays: ['20ms', 'p90'], requests: 4000 })
  assert.match(renderSweepHtml(big, sweepFrontier(big)), /data-chart="sweep-frontier-p99\.9"/)
})

test('labels take the nearest free place, farther out with a leader line, and none when the plot has no room', () => {
  const bounds = { x: 0, y: 0, w: 200, h: 100 }
  const placed = placeLabels(
    [
      { x: 100, y: 50, r: 4, text: 'aaaa' },
      { x: 100, y: 50, r: 4, text: 'bbbb' },
      { x: 100, y: 50, r: 4, text: 'cccc' },
    ],
    bounds,
  )
  assert.deepEqual(placed[0], { box: { x: 108, y: 42.5, w: labelWidth('aaaa'), h: LABEL_HEIGHT_PX }, leader: false }, 'right of its point')
  assert.equal(placed[1]!.box.x + placed[1]!.box.w, 92, 'the next on the left')
  assert.equal(placed[1]!.leader, false)
  const tiny = placeLabels([{ x: 5, y: 5, r: 4, text: 'a label far too long for this plot' }], { x: 0, y: 0, w: 40, h: 20 })
  assert.deepEqual(tiny, [null])
})
