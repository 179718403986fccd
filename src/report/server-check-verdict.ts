/**
 * The client/server cross-check's verdict, decided once for every renderer:
 * MATCH when the server counted every attempt the client sent; EXPLAINED
 * when the attempts it did not count are no more than the ones the client
 * cancelled within --cross-check-grace of writing them (a server may drop a
 * stream reset that early before its handler runs, and so never count it:
 * gRPC C-core does, for a hedge reset ~0.4 ms after it left); MISMATCH
 * otherwise, a count hedgebench cannot account for.
 */
import { formatThreshold } from '../core/duration.js'
import type { ServerCrossCheck } from '../results/run-result.js'

export type CrossCheckVerdict = 'MATCH' | 'EXPLAINED' | 'MISMATCH'

export function crossCheckVerdict(s: ServerCrossCheck): CrossCheckVerdict {
  if (s.match) return 'MATCH'
  const missing = s.clientAttempts - s.received
  return missing > 0 && s.earlyCancels !== undefined && missing <= s.earlyCancels.count ? 'EXPLAINED' : 'MISMATCH'
}

/**
 * The one line an EXPLAINED check is said in: "server saw 4115 of 4159
 * attempts; the 44 missing are within the 52 cancelled less than 1 ms after
 * sending, which a server may drop before its handler". Null for the others.
 * `covered`: what the count covers, said after the attempts.
 */
export function explainedText(s: ServerCrossCheck, covered = ''): string | null {
  if (crossCheckVerdict(s) !== 'EXPLAINED') return null
  const early = s.earlyCancels!
  return `server saw ${s.received} of ${s.clientAttempts} attempts${covered}; the ${s.clientAttempts - s.received} missing are within the ${early.count} cancelled less than ${formatThreshold(early.withinMs)} after sending, which a server may drop before its handler`
}

/** The verdict as a table cell reads it (HTML, the demo): "match", "explained: 44 missing of 52 early cancels", "MISMATCH". */
export function crossCheckLabel(s: ServerCrossCheck): string {
  const verdict = crossCheckVerdict(s)
  if (verdict === 'MATCH') return 'match'
  if (verdict === 'MISMATCH') return 'MISMATCH'
  return `explained: ${s.clientAttempts - s.received} missing, within ${s.earlyCancels!.count} cancelled < ${formatThreshold(s.earlyCancels!.withinMs)} after sending`
}
