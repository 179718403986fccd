/** Plain-text tables for the text report: columns padded to their widest cell. */

type Align = 'left' | 'right'

/** Rows (the first is the header) padded into aligned lines; `align` per column, default left for the first, right for the rest. */
export function formatTable(rows: string[][], align: Align[] = []): string[] {
  const columns = Math.max(0, ...rows.map((r) => r.length))
  const widths = Array.from({ length: columns }, (_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)))
  return rows.map((row) =>
    widths
      .map((w, c) => {
        const cell = row[c] ?? ''
        return (align[c] ?? (c === 0 ? 'left' : 'right')) === 'left' ? cell.padEnd(w) : cell.padStart(w)
      })
      .join('  ')
      .trimEnd(),
  )
}
