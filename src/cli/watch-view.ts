/**
 * What `watch` shows while it runs. In a terminal, a block redrawn in place
 * every second (as oha's TUI): per lane its p50, p99, slow, errors, extra
 * load and hedge delay, with sparklines of the p99 and the slow count over
 * the last minutes, the segment, and the last notes (marks, changes). Not
 * in a terminal: one plain line per second, and each note on a line of its
 * own (what scripts and tests read).
 */
import { formatMs } from '../core/duration.js'
import { extraLoadPctOf } from '../results/extra-load.js'
import type { WatchResult, WatchSecond } from '../results/watch-result.js'
import type { LaneSecond } from '../stats/lane-seconds.js'

export interface WatchView {
  second(s: WatchSecond, state: WatchResult): void
  /** A fleeting note (a mark ignored) leaves the terminal's block after FLEETING_S, or when the window starts; a line stays in a log. */
  note(line: string, fleeting?: boolean): void
  /** Leaves the terminal as it was (the cursor shown, below the block). */
  close(): void
}

const BARS = '▁▂▃▄▅▆▇█'
const NOTES_SHOWN = 3
/** Seconds of the window a fleeting note stays on screen. */
export const FLEETING_S = 5

/** One line per second: "12 s  plain p50 9.8 ms p99 31.2 ms slow 0 errors 0 | hedged p50 … extra 4.1% delay 24 ms". */
export function secondLine(s: WatchSecond): string {
  return `${s.t} s  plain ${laneWords(s.plain)} | hedged ${laneWords(s.hedged)} extra ${extraText(s.hedged)} delay ${s.hedged.delayMs === null ? '-' : formatMs(s.hedged.delayMs)}`
}

function laneWords(l: LaneSecond): string {
  return `requests ${l.requests} p50 ${ms(l.p50Ms)} p99 ${ms(l.p99Ms)} slow ${l.slow} errors ${l.errors}`
}

const ms = (x: number | null): string => (x === null ? '-' : formatMs(x))
const extraText = (l: LaneSecond): string => `${extraLoadPctOf(l.hedges, l.requests).toFixed(1)}%`

/** The values as bars from ▁ to █ on one scale from 0 to `max`; a second without a value is a space. */
export function sparkline(values: ReadonlyArray<number | null>, max: number): string {
  return values
    .map((v) => {
      if (v === null) return ' '
      const i = max > 0 ? Math.min(BARS.length - 1, Math.floor((v / max) * (BARS.length - 1) + 0.5)) : 0
      return BARS[i]!
    })
    .join('')
}

export function plainView(out: (line: string) => void, notes: (line: string) => void): WatchView {
  return { second: (s) => out(secondLine(s)), note: (line) => notes(line), close: () => {} }
}

/** The block redrawn in place: the cursor goes up over the last drawing and each line is cleared as it is rewritten. */
export function terminalView(write: (text: string) => void, columns: () => number): WatchView {
  let drawn = 0
  /** Each with the last second it is shown in (Infinity: a mark, a change, until newer notes push it out). */
  let notes: Array<{ line: string; untilT: number }> = []
  let last: { s: WatchSecond; state: WatchResult } | null = null
  const draw = (): void => {
    if (!last) return
    const lines = block(
      last.s,
      last.state,
      notes.map((n) => n.line),
      columns(),
    )
    write(`${drawn > 0 ? `\x1b[${drawn}F` : ''}${lines.map((l) => `\x1b[2K${l}\n`).join('')}`)
    drawn = lines.length
  }
  write('\x1b[?25l')
  return {
    second(s, state) {
      last = { s, state }
      notes = notes.filter((n) => s.t <= n.untilT)
      draw()
    },
    note(line, fleeting = false) {
      // Before the window (no second drawn yet), a fleeting note goes with its first second.
      notes.push({ line, untilT: fleeting ? (last ? last.s.t + FLEETING_S : 0) : Infinity })
      if (notes.length > NOTES_SHOWN) notes.shift()
      draw()
    },
    close() {
      write('\x1b[?25h')
    },
  }
}

function block(s: WatchSecond, state: WatchResult, notes: readonly string[], columns: number): string[] {
  const header = `hedgebench watch  ${s.t} s  ${state.rate} req/s  segment "${state.marks[state.marks.length - 1]?.name ?? 'start'}"  [m] mark  [q] stop`
  const width = Math.max(10, Math.min(300, columns - 64))
  const recent = state.seconds.slice(-width)
  const p99max = Math.max(0, ...recent.flatMap((r) => [r.plain.p99Ms ?? 0, r.hedged.p99Ms ?? 0]))
  const slowMax = Math.max(0, ...recent.flatMap((r) => [r.plain.slow, r.hedged.slow]))
  const row = (name: 'plain' | 'hedged'): string[] => {
    const l = s[name]
    const cells = [
      name.padEnd(7),
      ms(l.p50Ms).padStart(9),
      ms(l.p99Ms).padStart(9),
      String(l.slow).padStart(5),
      String(l.errors).padStart(6),
      (name === 'hedged' ? extraText(l) : '-').padStart(6),
      (l.delayMs === null ? '-' : formatMs(l.delayMs)).padStart(8),
    ].join(' ')
    return [
      `${cells}  p99  ${sparkline(
        recent.map((r) => r[name].p99Ms),
        p99max,
      )}`,
      `${' '.repeat(cells.length)}  slow ${sparkline(
        recent.map((r) => r[name].slow),
        slowMax,
      )}`,
    ]
  }
  const head = `${''.padEnd(7)} ${'p50'.padStart(9)} ${'p99'.padStart(9)} ${'slow'.padStart(5)} ${'errors'.padStart(6)} ${'extra'.padStart(6)} ${'delay'.padStart(8)}  last ${recent.length} s, p99 up to ${formatMs(p99max)}`
  const clip = (line: string): string => (line.length > columns ? line.slice(0, columns) : line)
  return [header, head, ...row('plain'), ...row('hedged'), ...notes, ...Array(NOTES_SHOWN - notes.length).fill('')].map(clip)
}
