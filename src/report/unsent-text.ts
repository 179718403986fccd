/**
 * What `unsent` counts, in words: attempts stopped before they reached the
 * wire are hedges (the request was decided while they waited), or originals
 * still waiting for a connection when a hedge won. Results saved before the
 * two were counted apart say both.
 */
import type { HedgingStats } from '../results/run-result.js'

/** " (12 hedges, 3 originals …)", or "" when nothing was stopped. */
export function unsentBreakdown(h: HedgingStats): string {
  if (h.unsent === 0) return ''
  const originals = h.unsentOriginals
  if (originals === undefined) return ' (hedges, or originals still waiting for a connection when a hedge won)'
  const hedges = h.unsent - originals
  const parts = [
    ...(hedges > 0 ? [`${hedges} hedge${hedges === 1 ? '' : 's'}`] : []),
    ...(originals > 0 ? [`${originals} original${originals === 1 ? '' : 's'} still waiting for a connection when a hedge won`] : []),
  ]
  return ` (${parts.join(', ')})`
}
