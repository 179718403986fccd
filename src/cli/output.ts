/** What the commands share about output: the formats, when to colour, the renderer picker, HTML files. */
import { renderCsvSummary } from '../report/csv.js'
import type { HtmlOptions } from '../report/html.js'
import { renderJson } from '../results/result-json.js'
import { renderText } from '../report/text.js'
import { writeFileAtomic } from '../report/results-store.js'
import type { RunResult } from '../results/run-result.js'

export const OUTPUT_FORMATS = ['text', 'json', 'csv'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]

/** Colours and arrows only for a person at a terminal; NO_COLOR (no-color.org) turns them off. */
export function stdoutColor(): boolean {
  return process.stdout.isTTY === true && !process.env.NO_COLOR
}

export function renderOutput(result: RunResult, format: OutputFormat, color = false): string {
  const out = format === 'json' ? renderJson(result) : format === 'csv' ? renderCsvSummary(result) : renderText(result, { color })
  return out.endsWith('\n') ? out : `${out}\n`
}

/** Writes a self-contained HTML report (the renderer is loaded only when a report is asked for). */
export async function writeHtmlReport(path: string, runs: RunResult[], opts: HtmlOptions = {}): Promise<void> {
  const { renderHtml } = await import('../report/html.js')
  await writeFileAtomic(path, renderHtml(runs, opts), { overwrite: true })
}
