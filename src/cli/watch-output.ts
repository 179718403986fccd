/**
 * What a watch writes at its end, and `report` writes again from its file:
 * the -o format on stdout (text, the saved JSON, or the comparisons' CSV)
 * and the --html page. Every renderer is the report layer's.
 */
import type { SegmentComparison, WatchGates } from '../report/watch-compare.js'
import type { WatchResult } from '../results/watch-result.js'
import { stdoutColor, stdoutColumns, stdoutTaken, writePage, writeStderrLine } from './output.js'

export interface WatchOutput {
  o: 'text' | 'json' | 'csv'
  /** --html FILE (- : to stdout, instead of -o); the page needs the whole window's run. */
  html: string | undefined
  /** The file's JSON: what -o json prints. */
  json: string
}

export async function writeWatchReport(watch: WatchResult, comparisons: SegmentComparison[], gates: WatchGates, out: WatchOutput): Promise<void> {
  const [{ renderWatchText, NOTHING_MEASURED }, { renderWatchCsv }] = await Promise.all([import('../report/watch-text.js'), import('../report/watch-csv.js')])
  if (!stdoutTaken(out.html)) {
    if (out.o === 'json') process.stdout.write(out.json)
    else if (out.o === 'csv') process.stdout.write(renderWatchCsv(comparisons))
    else process.stdout.write(renderWatchText(watch, comparisons, gates, { color: stdoutColor(), width: stdoutColumns() }))
  }
  if (out.html !== undefined && watch.run) {
    const { renderWatchHtml } = await import('../report/watch-html.js')
    await writePage(out.html, renderWatchHtml({ ...watch, run: watch.run }, comparisons, gates))
  }
  // Stopped in the warm-up: the text report is that one line; the other formats say it on stderr, their stdout being the report's.
  if (watch.segments.length === 0 && out.o !== 'text') writeStderrLine(`hedgebench: ${NOTHING_MEASURED}`)
}
