/** Picks the renderer for -o: every format is a pure function over the one RunResult. */
import { renderCsvSummary } from '../render/csv.js'
import { renderJson } from '../render/json.js'
import { renderText } from '../render/text.js'
import type { RunResult } from '../types.js'

export type OutputFormat = 'text' | 'json' | 'csv'

export function renderOutput(result: RunResult, format: OutputFormat, color = false): string {
  const out = format === 'json' ? renderJson(result) : format === 'csv' ? renderCsvSummary(result) : renderText(result, { color })
  return out.endsWith('\n') ? out : `${out}\n`
}
