/**
 * Small inline-SVG line charts for the HTML report: no script, no external
 * resource, so the page renders under `default-src 'none'`. A chart is one
 * <svg data-chart="..."> with one or more panels stacked over a shared x
 * axis; every series is a <path data-series="..."> so tests can find it.
 */
import { escapeHtml } from './escape.js'

/** A point; a null y breaks the line (a second without a value). */
export type Point = [x: number, y: number | null]

export interface Series {
  /** The data-series attribute: "<phase or run name>:<metric>". */
  id: string
  /** Legend text; defaults to the id. */
  label?: string
  points: Point[]
  color: string
  dashed?: boolean
  /** An explicit line style (stroke-dasharray, '' solid); wins over `dashed`. */
  dash?: string
  /** Draw as steps (histograms) instead of straight segments. */
  step?: boolean
  /**
   * Also draw each point as a dot whose tooltip reads its value (hover: the
   * browser shows an SVG <title> with no script, so the page keeps its CSP).
   * `format` writes the tooltip's x and y.
   */
  markers?: { format: (x: number, y: number) => string }
  /** Only the markers, no line through them. */
  noLine?: boolean
  /** One value at every x (a hedge delay across the percentile chart): the live chart reads it at any x. */
  flat?: boolean
}

export interface Tick {
  value: number
  label: string
}

/** How the live chart (live-charts.ts) writes a panel's values. */
export type Unit = 'ms' | 'rate' | 'pct' | 'number'

export interface Panel {
  yLabel: string
  /** How the live chart writes its values; plain numbers when absent. */
  unit?: Unit
  series: Series[]
  /** Default: nice ticks from 0 to the largest y. */
  yTicks?: Tick[]
  /**
   * A log10 y axis: points keep their own values, ticks are given in log10 of
   * them (see logTicks); the axis starts at the first tick rather than at 0.
   */
  yLog?: boolean
}

/** What x is: seconds, log10(1/(1-p)) of a percentile, or log10 of milliseconds. */
export type XKind = 'seconds' | 'percentile' | 'log-ms' | 'number'

export interface ChartSpec {
  /** The data-chart attribute. */
  chart: string
  title: string
  xLabel: string
  /** A plain number axis when absent. */
  x?: XKind
  /** Ticks also fix the x range: from the first to the last tick, unless the data reach further. */
  xTicks?: Tick[]
  panels: Panel[]
  /** Moments to mark across every panel (a replica ejected, readmitted): a thin vertical line with a tooltip. */
  xMarks?: XMark[]
  width?: number
  panelHeight?: number
}

export interface XMark {
  x: number
  /** The tooltip, also the data-mark attribute tests find it by. */
  label: string
  color: string
}

/**
 * Okabe and Ito's colours, told apart with every common colour-vision
 * deficiency (jfly.uni-koeln.de/color); their yellow is left out: too light
 * to see on white.
 */
export const OKABE_ITO = {
  blue: '#0072B2',
  vermillion: '#D55E00',
  green: '#009E73',
  purple: '#CC79A7',
  orange: '#E69F00',
  sky: '#56B4E9',
  black: '#000000',
} as const

/** Series colours in order: a chart never holds more than 8 series (compare splits them), the eighth a grey. */
export const PALETTE = [...Object.values(OKABE_ITO), '#7f7f7f']

const MARGIN = { left: 74, right: 32, top: 28, bottom: 40 }
const PANEL_GAP = 28
const LEGEND_ROW = 18

export function renderChart(spec: ChartSpec): string {
  const width = spec.width ?? 860
  const panelHeight = spec.panelHeight ?? 220
  const allSeries = spec.panels.flatMap((p) => p.series)
  const xRange = rangeOf(
    allSeries.flatMap((s) => s.points.map((p) => p[0])),
    spec.xTicks?.map((t) => t.value) ?? [],
  )
  const xTicks = spec.xTicks ?? niceTicks(xRange[0], xRange[1])
  const plotWidth = width - MARGIN.left - MARGIN.right
  const x = (v: number): number => MARGIN.left + ((v - xRange[0]) / (xRange[1] - xRange[0] || 1)) * plotWidth
  const legendTop = MARGIN.top + spec.panels.length * (panelHeight + PANEL_GAP) + MARGIN.bottom - PANEL_GAP
  const height = legendTop + legendRows(allSeries, width) * LEGEND_ROW + 8
  const panels = spec.panels.map((panel, i) => renderPanel(panel, MARGIN.top + i * (panelHeight + PANEL_GAP), panelHeight, plotWidth, x))
  const lastBottom = MARGIN.top + spec.panels.length * (panelHeight + PANEL_GAP) - PANEL_GAP
  return [
    `<svg data-chart="${escapeHtml(spec.chart)}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(spec.title)}">`,
    `<text class="title" x="${MARGIN.left}" y="18">${escapeHtml(spec.title)}</text>`,
    ...panels,
    ...(spec.xMarks ?? []).map((m) => xMark(m, x, lastBottom)),
    xAxis(xTicks, x, lastBottom, spec.xLabel, width),
    legend(allSeries, legendTop, width),
    '</svg>',
  ].join('\n')
}

/** A vertical line from the top panel to the x axis, hoverable (a wide transparent twin). */
function xMark(m: XMark, x: (v: number) => number, bottom: number): string {
  const px = fix(x(m.x))
  const line = (attrs: string): string => `<line x1="${px}" x2="${px}" y1="${MARGIN.top}" y2="${fix(bottom)}" ${attrs}/>`
  return `<g data-mark="${escapeHtml(m.label)}">${line('stroke="transparent" stroke-width="8"')}${line(`stroke="${m.color}" stroke-width="1.2" stroke-dasharray="2 3"`)}<title>${escapeHtml(m.label)}</title></g>`
}

function renderPanel(panel: Panel, top: number, height: number, plotWidth: number, x: (v: number) => number): string {
  const scale = panel.yLog ? (v: number): number => Math.log10(Math.max(v, 1e-6)) : (v: number): number => v
  const ys = panel.series.flatMap((s) => s.points.map((p) => p[1]).filter((v): v is number => v !== null)).map(scale)
  const yTicks = panel.yTicks ?? niceTicks(0, Math.max(0, ...ys))
  const yMin = panel.yLog ? Math.min(yTicks[0]?.value ?? 0, ...ys) : 0
  const yMax = Math.max(yTicks[yTicks.length - 1]?.value ?? 1, ...ys)
  const span = yMax - yMin || 1
  const y = (v: number): number => top + height - ((scale(v) - yMin) / span) * height
  const tickY = (t: number): number => top + height - ((t - yMin) / span) * height
  const grid = yTicks.map(
    (t) =>
      `<line class="grid" x1="${MARGIN.left}" x2="${MARGIN.left + plotWidth}" y1="${fix(tickY(t.value))}" y2="${fix(tickY(t.value))}"/><text class="tick" x="${MARGIN.left - 6}" y="${fix(tickY(t.value) + 4)}" text-anchor="end">${escapeHtml(t.label)}</text>`,
  )
  const label = `<text class="axis" transform="translate(12 ${fix(top + height / 2)}) rotate(-90)" text-anchor="middle">${escapeHtml(panel.yLabel)}</text>`
  const frame = `<rect class="frame" x="${MARGIN.left}" y="${top}" width="${plotWidth}" height="${height}"/>`
  const paths = panel.series.map((s) => seriesPath(s, x, y))
  return [frame, ...grid, label, ...paths].join('\n')
}

function seriesPath(s: Series, x: (v: number) => number, y: (v: number) => number): string {
  const dash = dashAttr(s)
  const path = `<path data-series="${escapeHtml(s.id)}" d="${pathData(s.points, x, y, s.step ?? false)}" fill="none" stroke="${s.color}" stroke-width="1.8"${dash}><title>${escapeHtml(s.label ?? s.id)}</title></path>`
  if (!s.markers) return path
  return (s.noLine ? '' : path) + markers(s, s.markers.format, x, y)
}

/** A dot per point, each with a tooltip ("hedged:p99 at 1.5 s: 12.3 ms"); a wider transparent ring makes it easy to hover. */
function markers(s: Series, format: (x: number, y: number) => string, x: (v: number) => number, y: (v: number) => number): string {
  const dots = s.points
    .filter((p): p is [number, number] => p[1] !== null && Number.isFinite(p[1]) && Number.isFinite(p[0]))
    .map(
      ([px, py]) =>
        `<g class="dot"><circle cx="${fix(x(px))}" cy="${fix(y(py))}" r="7" fill="transparent"/><circle cx="${fix(x(px))}" cy="${fix(y(py))}" r="2.6" fill="${s.color}"/><title>${escapeHtml(`${s.label ?? s.id} ${format(px, py)}`)}</title></g>`,
    )
  return `<g data-markers="${escapeHtml(s.id)}">${dots.join('')}</g>`
}

/** Half the width of the dash that stands for an isolated point. */
const DOT_HALF_WIDTH = 3

/**
 * SVG path commands; a null y lifts the pen. A point with no drawn neighbour
 * (a phase shorter than a second has one timeline point) becomes a short
 * horizontal dash: a lone "M" draws nothing in a browser.
 */
function pathData(points: Point[], x: (v: number) => number, y: (v: number) => number, step: boolean): string {
  const parts: string[] = []
  let penDown = false
  let lone = -1
  const dash = (): void => {
    if (lone < 0) return
    const [px, py] = points[lone]! as [number, number]
    parts[parts.length - 1] = `M${fix(x(px) - DOT_HALF_WIDTH)},${fix(y(py))} H${fix(x(px) + DOT_HALF_WIDTH)}`
    lone = -1
  }
  for (const [i, [px, py]] of points.entries()) {
    if (py === null || !Number.isFinite(py) || !Number.isFinite(px)) {
      dash()
      penDown = false
      continue
    }
    if (penDown && step) parts.push(`H${fix(x(px))}`)
    parts.push(`${penDown ? 'L' : 'M'}${fix(x(px))},${fix(y(py))}`)
    lone = penDown ? -1 : i
    penDown = true
  }
  dash()
  return parts.join(' ')
}

function xAxis(ticks: Tick[], x: (v: number) => number, bottom: number, label: string, width: number): string {
  const marks = ticks.map(
    (t) =>
      `<line class="grid" x1="${fix(x(t.value))}" x2="${fix(x(t.value))}" y1="${MARGIN.top}" y2="${bottom}"/><text class="tick" x="${fix(x(t.value))}" y="${bottom + 14}" text-anchor="middle">${escapeHtml(t.label)}</text>`,
  )
  return [
    ...marks,
    `<text class="axis" x="${fix(MARGIN.left + (width - MARGIN.left - MARGIN.right) / 2)}" y="${bottom + 32}" text-anchor="middle">${escapeHtml(label)}</text>`,
  ].join('\n')
}

/** Legend items flow left to right, each as wide as its text (about 6.6 px a character at 12 px), wrapping at the chart's width. */
const CHAR_PX = 6.6
const SWATCH_PX = 28
const ITEM_GAP_PX = 18

function legendLayout(series: Series[], width: number): Array<{ s: Series; x: number; row: number }> {
  const items: Array<{ s: Series; x: number; row: number }> = []
  let x = MARGIN.left
  let row = 0
  for (const s of series.filter((s) => !s.noLine)) {
    const w = SWATCH_PX + (s.label ?? s.id).length * CHAR_PX + ITEM_GAP_PX
    if (x > MARGIN.left && x + w > width) {
      row++
      x = MARGIN.left
    }
    items.push({ s, x, row })
    x += w
  }
  return items
}

function legendRows(series: Series[], width: number): number {
  const items = legendLayout(series, width)
  return items.length === 0 ? 0 : items[items.length - 1]!.row + 1
}

function dashAttr(s: Series): string {
  const dash = s.dash ?? (s.dashed ? '6 4' : '')
  return dash ? ` stroke-dasharray="${dash}"` : ''
}

function legend(series: Series[], top: number, width: number): string {
  return legendLayout(series, width)
    .map(({ s, x: lx, row }) => {
      const ly = top + row * LEGEND_ROW
      const dash = dashAttr(s)
      return `<line x1="${lx}" x2="${lx + 22}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${dash}/><text class="legend" x="${lx + 28}" y="${ly + 4}">${escapeHtml(s.label ?? s.id)}</text>`
    })
    .join('\n')
}

function rangeOf(values: number[], extra: number[]): [number, number] {
  const all = [...values, ...extra].filter(Number.isFinite)
  if (all.length === 0) return [0, 1]
  const min = Math.min(...all)
  const max = Math.max(...all)
  return min === max ? [min, min + 1] : [min, max]
}

/** About five round-numbered ticks covering [min, max]. */
export function niceTicks(min: number, max: number, count = 5, format: (v: number) => string = formatTick): Tick[] {
  if (!(max > min))
    return [
      { value: min, label: format(min) },
      { value: min + 1, label: format(min + 1) },
    ]
  const raw = (max - min) / count
  const magnitude = 10 ** Math.floor(Math.log10(raw))
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude
  const ticks: Tick[] = []
  for (let v = Math.floor(min / step) * step; v <= max + step * 0.999; v += step) ticks.push({ value: fixFloat(v), label: format(fixFloat(v)) })
  return ticks
}

function formatTick(v: number): string {
  return Math.abs(v) >= 1000 ? `${fixFloat(v / 1000)}k` : String(fixFloat(v))
}

function fixFloat(v: number): number {
  return Number(v.toPrecision(10))
}

/** Two decimals keep the markup small. */
function fix(v: number): string {
  return String(Math.round(v * 100) / 100)
}
