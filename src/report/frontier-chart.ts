/**
 * The sweep's frontier as a chart a person reads in seconds: extra load
 * across from 0 (the plain lane's point drawn whole at 0), a tail
 * percentile up on a log axis (hedging moves it by orders of magnitude),
 * each lane's 95 % intervals as whiskers, and each point named beside it
 * (label-layout.ts keeps the names apart): no legend to match by colour.
 * The recommended setting is ringed and named, the settings that cannot
 * be told apart from it marked ≈, and a marker's shape says its kind too
 * (colour is never the only carrier). Static SVG: the sweep page has no script.
 */
import { escapeHtml } from './escape.js'
import { logMsTicks } from './html-charts.js'
import { type Box, LABEL_HEIGHT_PX, placeLabels } from './label-layout.js'
import { niceTicks, OKABE_ITO, type Tick } from './svg-chart.js'
import type { LaneFigures, SweepFrontier } from './sweep-frontier.js'
import { msFigure, pctFigure } from './sweep-text.js'

export type FrontierPercentile = 'p99' | 'p99.9'

type Kind = 'plain' | 'recommended' | 'close' | 'frontier' | 'other'

interface Lane {
  id: string
  name: string
  kind: Kind
  lane: LaneFigures
}

/** A marker per kind: its colour (Okabe-Ito), size and shape. */
const STYLE: Record<Kind, { color: string; r: number }> = {
  plain: { color: OKABE_ITO.black, r: 5 },
  recommended: { color: OKABE_ITO.vermillion, r: 6 },
  close: { color: OKABE_ITO.orange, r: 5 },
  frontier: { color: OKABE_ITO.blue, r: 4.5 },
  other: { color: '#6b6b6b', r: 4 },
}

const WIDTH = 1000
const HEIGHT = 440
const M = { left: 74, right: 24, top: 34, bottom: 48 }

/** The chart, and the names it found no room for beside their points (the caller says them in words). */
export function frontierChart(frontier: SweepFrontier, key: FrontierPercentile): { svg: string; unplaced: string[] } {
  const lanes = lanesOf(frontier)
  const plot: Box = { x: M.left, y: M.top, w: WIDTH - M.left - M.right, h: HEIGHT - M.top - M.bottom }
  const xs = lanes.flatMap((l) => [l.lane.extraLoadPct.value, l.lane.extraLoadPct.interval?.[1] ?? 0])
  const xTicks = niceTicks(0, Math.max(1, ...xs))
  const xHi = xTicks[xTicks.length - 1]!.value
  // Below 0 by a margin: the plain lane sits at 0 and its marker and whisker are drawn whole.
  const xLo = -0.04 * xHi
  const x = (v: number): number => plot.x + ((v - xLo) / (xHi - xLo)) * plot.w
  const ys = lanes.flatMap((l) => [l.lane[key].value, ...(l.lane[key].interval ?? [])]).filter((v) => v > 0)
  const lo = Math.log10(Math.min(...ys))
  const hi = Math.log10(Math.max(...ys))
  const yTicks = logMsTicks(lo, hi)
  const span = Math.max(hi, yTicks[yTicks.length - 1]!.value) - Math.min(lo, yTicks[0]!.value) || 1
  const yLo = Math.min(lo, yTicks[0]!.value) - 0.05 * span
  const yHi = Math.max(hi, yTicks[yTicks.length - 1]!.value) + 0.08 * span
  const y = (v: number): number => plot.y + plot.h - ((Math.log10(Math.max(v, 10 ** yLo)) - yLo) / (yHi - yLo)) * plot.h
  const title = `Tail against cost: ${key} (log scale) by extra load, each setting at its point, 95 % intervals as whiskers`
  const named = labels(lanes, key, x, y, plot)
  const svg = [
    `<svg data-chart="sweep-frontier-${key}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" role="img" aria-label="${escapeHtml(title)}">`,
    `<text class="title" x="${M.left}" y="18">${escapeHtml(title)}</text>`,
    `<rect class="frame" x="${plot.x}" y="${plot.y}" width="${plot.w}" height="${plot.h}"/>`,
    ...yTicks.map((t) => yTick(t, y, plot)),
    ...xTicks.map((t) => xTick(t, x, plot)),
    `<text class="axis" transform="translate(14 ${fix(plot.y + plot.h / 2)}) rotate(-90)" text-anchor="middle">${key}, log scale</text>`,
    `<text class="axis" x="${fix(plot.x + plot.w / 2)}" y="${HEIGHT - 8}" text-anchor="middle">extra load: hedges sent per request, %</text>`,
    frontierLine(lanes, key, x, y),
    ...lanes.map((l) => whiskers(l, key, x, y)),
    ...lanes.map((l) => marker(l, key, x, y)),
    ...named.texts,
    '</svg>',
  ].join('\n')
  return { svg, unplaced: named.unplaced }
}

/** The plain lane, then the recommended setting, the ones close to it, the frontier, the rest: the order labels are placed in. */
function lanesOf(frontier: SweepFrontier): Lane[] {
  const rec = frontier.recommendation
  const kind = (label: string, onFrontier: boolean): Kind =>
    label === rec.label ? 'recommended' : rec.indistinguishable.includes(label) ? 'close' : onFrontier ? 'frontier' : 'other'
  const order: Kind[] = ['recommended', 'plain', 'close', 'frontier', 'other']
  const lanes: Lane[] = [
    { id: 'plain', name: 'no hedging', kind: 'plain', lane: frontier.plain },
    ...frontier.rows.map((r) => ({ id: `setting:${r.label}`, name: r.label, kind: kind(r.label, r.onFrontier), lane: r })),
  ]
  return lanes.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind))
}

/** The frontier's points (the plain lane's too) joined in order of extra load. */
function frontierLine(lanes: Lane[], key: FrontierPercentile, x: (v: number) => number, y: (v: number) => number): string {
  const on = lanes.filter((l) => l.kind !== 'other').sort((a, b) => a.lane.extraLoadPct.value - b.lane.extraLoadPct.value)
  if (on.length < 2) return ''
  const d = on.map((l, i) => `${i === 0 ? 'M' : 'L'}${fix(x(l.lane.extraLoadPct.value))},${fix(y(l.lane[key].value))}`).join(' ')
  return `<path data-series="frontier" d="${d}" fill="none" stroke="#9a9a9a" stroke-width="1.2" stroke-dasharray="5 4"/>`
}

/** The p interval as a vertical stroke and the extra load's as a horizontal one. */
function whiskers(l: Lane, key: FrontierPercentile, x: (v: number) => number, y: (v: number) => number): string {
  const fx = l.lane.extraLoadPct
  const fy = l.lane[key]
  const px = fix(x(fx.value))
  const py = fix(y(fy.value))
  const vertical = fy.interval ? `M${px},${fix(y(fy.interval[0]))} L${px},${fix(y(fy.interval[1]))}` : `M${px},${py} L${px},${py}`
  const horizontal = fx.interval ? ` M${fix(x(fx.interval[0]))},${py} L${fix(x(fx.interval[1]))},${py}` : ''
  return `<path data-series="${escapeHtml(l.id)}:intervals" d="${vertical}${horizontal}" fill="none" stroke="${STYLE[l.kind].color}" stroke-width="1.4" opacity="0.7"/>`
}

/** Square for the plain lane, a ringed dot for the recommended setting, a dashed ring for one close to it, filled on the frontier, hollow off it. */
function marker(l: Lane, key: FrontierPercentile, x: (v: number) => number, y: (v: number) => number): string {
  const { color, r } = STYLE[l.kind]
  const cx = fix(x(l.lane.extraLoadPct.value))
  const cy = fix(y(l.lane[key].value))
  const shape =
    l.kind === 'plain'
      ? `<rect x="${fix(Number(cx) - r)}" y="${fix(Number(cy) - r)}" width="${2 * r}" height="${2 * r}" fill="${color}"/>`
      : l.kind === 'recommended'
        ? `<circle cx="${cx}" cy="${cy}" r="${r}" fill="${color}"/><circle cx="${cx}" cy="${cy}" r="${r + 4}" fill="none" stroke="${color}" stroke-width="2"/>`
        : l.kind === 'close'
          ? `<circle cx="${cx}" cy="${cy}" r="${r}" fill="${color}"/><circle cx="${cx}" cy="${cy}" r="${r + 3}" fill="none" stroke="${color}" stroke-width="1.5" stroke-dasharray="2 2"/>`
          : l.kind === 'frontier'
            ? `<circle cx="${cx}" cy="${cy}" r="${r}" fill="${color}"/>`
            : `<circle cx="${cx}" cy="${cy}" r="${r}" fill="#fff" stroke="${color}" stroke-width="1.6"/>`
  const tip = `${l.name}: ${pctFigure(l.lane.extraLoadPct)} extra, ${key} ${msFigure(l.lane[key])}`
  return `<g data-markers="${escapeHtml(l.id)}" class="dot">${shape}<title>${escapeHtml(tip)}</title></g>`
}

/** The name each point carries on the chart: the recommended setting says so, one close to it is marked ≈. */
export function pointName(l: { name: string; kind: Kind }): string {
  return l.kind === 'recommended' ? `${l.name}: recommended` : l.kind === 'close' ? `≈ ${l.name}` : l.name
}

/**
 * Points drawn on top of each other (within a few pixels) share one label,
 * "p95, p99"; every label is placed clear of the others and of the points.
 */
function labels(
  lanes: Lane[],
  key: FrontierPercentile,
  x: (v: number) => number,
  y: (v: number) => number,
  plot: Box,
): { texts: string[]; unplaced: string[] } {
  const groups: Array<{ lanes: Lane[]; px: number; py: number }> = []
  for (const l of lanes) {
    const px = x(l.lane.extraLoadPct.value)
    const py = y(l.lane[key].value)
    const near = groups.find((g) => Math.abs(g.px - px) < 4 && Math.abs(g.py - py) < 4)
    if (near) near.lanes.push(l)
    else groups.push({ lanes: [l], px, py })
  }
  const requests = groups.map((g) => ({
    x: g.px,
    y: g.py,
    r: STYLE[g.lanes[0]!.kind].r + (g.lanes[0]!.kind === 'recommended' ? 5 : 3),
    text: g.lanes.map(pointName).join(', '),
    bold: g.lanes[0]!.kind === 'recommended',
  }))
  const placed = placeLabels(requests, plot)
  const unplaced = requests.filter((_, i) => placed[i] === null).map((r) => r.text)
  const texts = placed.flatMap((p, i) => {
    if (!p) return []
    const g = requests[i]!
    const { box } = p
    const leader = p.leader
      ? `<line class="leader" x1="${fix(g.x)}" y1="${fix(g.y)}" x2="${fix(clamp(g.x, box.x, box.x + box.w))}" y2="${fix(clamp(g.y, box.y, box.y + box.h))}" stroke="#8a8a8a" stroke-width="1"/>`
      : ''
    const weight = g.bold ? ' font-weight="700"' : ''
    return [`${leader}<text class="point-label" x="${fix(box.x + 1)}" y="${fix(box.y + LABEL_HEIGHT_PX - 4)}"${weight}>${escapeHtml(g.text)}</text>`]
  })
  return { texts, unplaced }
}

function yTick(t: Tick, y: (v: number) => number, plot: Box): string {
  const py = fix(y(10 ** t.value))
  return `<line class="grid" x1="${plot.x}" x2="${plot.x + plot.w}" y1="${py}" y2="${py}"/><text class="tick" x="${plot.x - 6}" y="${fix(Number(py) + 4)}" text-anchor="end">${escapeHtml(t.label)}</text>`
}

function xTick(t: Tick, x: (v: number) => number, plot: Box): string {
  const px = fix(x(t.value))
  const bottom = plot.y + plot.h
  return `<line class="grid" x1="${px}" x2="${px}" y1="${plot.y}" y2="${bottom}"/><text class="tick" x="${px}" y="${bottom + 16}" text-anchor="middle">${escapeHtml(t.label)}</text>`
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v))
}

function fix(v: number): string {
  return String(Math.round(v * 100) / 100)
}

/** Whether the lanes hold enough requests to bound a percentile (the plain lane's count: every lane has its share). */
export function chartsFor(frontier: SweepFrontier, judgeable: (n: number, p: number) => boolean): FrontierPercentile[] {
  const n = Math.min(frontier.plain.requests, ...frontier.rows.map((r) => r.requests))
  return judgeable(n, 99.9) ? ['p99', 'p99.9'] : ['p99']
}
