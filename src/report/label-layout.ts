/**
 * Where a chart's point labels go so that none covers another or a point:
 * each label tries places around its point, nearest first (right, left,
 * above, below, then the corners, then the same farther out with a leader
 * line), and takes the first inside the plot that is free. Labels are
 * placed in the order given, so the ones that matter most (the recommended
 * setting, the plain lane) come first. Text widths are estimated from the
 * character count at a width no common sans-serif exceeds at 12 px.
 */

export interface Box {
  x: number
  y: number
  w: number
  h: number
}

export interface LabelRequest {
  /** The point's centre and the radius its marker covers. */
  x: number
  y: number
  r: number
  text: string
  /** Wider characters (bold). */
  bold?: boolean
}

export interface PlacedLabel {
  box: Box
  /** Placed away from its point: draw a line to it. */
  leader: boolean
}

/** Upper bounds of a 12 px sans-serif glyph (DejaVu Sans, the widest common default, is about 7.6 px for digits) and line box. */
export const LABEL_CHAR_PX = 7.6
const BOLD_CHAR_PX = 8.2
export const LABEL_HEIGHT_PX = 15
/** Distances tried from the marker's edge: the first ring needs no leader line. */
const RINGS = [4, 16, 30, 48, 70]
/** Directions, nearest reading first: right, left, above, below, then the four corners. */
const DIRECTIONS: Array<[number, number]> = [
  [1, 0],
  [-1, 0],
  [0, -1],
  [0, 1],
  [1, -1],
  [-1, -1],
  [1, 1],
  [-1, 1],
]

export function labelWidth(text: string, bold = false): number {
  return Math.ceil([...text].length * (bold ? BOLD_CHAR_PX : LABEL_CHAR_PX)) + 2
}

/** One placement per request, in order; null when no free place was found (the caller says so in words). */
export function placeLabels(requests: LabelRequest[], bounds: Box): Array<PlacedLabel | null> {
  const taken: Box[] = requests.map((p) => ({ x: p.x - p.r, y: p.y - p.r, w: 2 * p.r, h: 2 * p.r }))
  return requests.map((p) => {
    const w = labelWidth(p.text, p.bold)
    const h = LABEL_HEIGHT_PX
    for (const [ring, gap] of RINGS.entries()) {
      for (const [dx, dy] of DIRECTIONS) {
        const d = p.r + gap
        const x = dx > 0 ? p.x + d : dx < 0 ? p.x - d - w : p.x - w / 2
        const y = dy > 0 ? p.y + d : dy < 0 ? p.y - d - h : p.y - h / 2
        const box = { x, y, w, h }
        if (!within(box, bounds) || taken.some((t) => overlaps(box, t))) continue
        taken.push(box)
        return { box, leader: ring > 1 }
      }
    }
    return null
  })
}

export function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
}

function within(a: Box, outer: Box): boolean {
  return a.x >= outer.x && a.y >= outer.y && a.x + a.w <= outer.x + outer.w && a.y + a.h <= outer.y + outer.h
}
