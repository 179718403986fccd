/**
 * Text within the terminal's width: every renderer's lines and every
 * warning on stderr go through here. Prose is filled into lines with a
 * hanging indent (a continuation two columns in from its line's own
 * indent, so a wrapped warning reads as one); a table's row (cells two or
 * more spaces apart) is never broken, since a broken row is no longer a
 * row: the renderers that print tables fit them themselves.
 */

/** What the terminal is assumed to have when nothing says: 80 columns, as POSIX's default. */
export const DEFAULT_COLUMNS = 80

/** An ANSI colour sequence takes no column. */
const ANSI = /\u001b\[[0-9;]*m/g

/** Columns a string takes on the terminal (code points, colours left out). */
export function textWidth(s: string): number {
  return [...s.replace(ANSI, '')].length
}

/** Columns for text written to `stream`: the terminal's, else COLUMNS when set, else 80. */
export function streamColumns(env: NodeJS.ProcessEnv, stream: { isTTY?: boolean; columns?: number }): number {
  if (stream.isTTY && stream.columns && stream.columns > 0) return stream.columns
  const columns = Number(env.COLUMNS)
  return Number.isInteger(columns) && columns > 0 ? columns : DEFAULT_COLUMNS
}

/** Words filled into lines of at most `columns` (a word longer than a line keeps its own): the first line starts with `first`, the rest with `rest`. */
export function fill(text: string, columns: number, first = '', rest = first): string {
  const lines: string[] = []
  let line = first
  for (const word of text.split(' ')) {
    const indent = lines.length === 0 ? first : rest
    if (line.length > indent.length && textWidth(`${line} ${word}`) > columns) {
      lines.push(line)
      line = rest + word
    } else line = line.length > indent.length ? `${line} ${word}` : line + word
  }
  return [...lines, line].join('\n')
}

/**
 * Each line of `text` within `columns`. Prose is filled with a hanging
 * indent; a label and its value ("Delay:   32.2 ms (p95 of ...)") keep the
 * label, the value filled under its own column; a row of three or more
 * cells two spaces apart is a table's, left whole.
 */
export function wrapText(text: string, columns: number): string {
  if (!Number.isFinite(columns)) return text
  return text
    .split('\n')
    .map((line) => (textWidth(line) <= columns ? line : wrapLine(line, columns)))
    .join('\n')
}

function wrapLine(line: string, columns: number): string {
  const indent = /^\s*/.exec(line)![0]
  const cells = line.slice(indent.length).split(/ {2,}/)
  if (cells.length > 2) return line
  if (cells.length === 1) return fill(cells[0]!, columns, indent, `${indent}  `)
  const label = line.slice(0, line.length - cells[1]!.length)
  const at = textWidth(label)
  // A value that starts past the middle would be a narrow column: it continues under the label instead.
  return fill(cells[1]!, columns, label, ' '.repeat(at <= columns / 2 ? at : textWidth(indent) + 4))
}
