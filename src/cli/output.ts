/**
 * What the commands share about output: the formats, when to colour, the
 * renderer picker, HTML files. Renderers are loaded when output is written,
 * not when the commands are defined (`--help` starts faster: issue 14).
 */
import type { HtmlOptions } from '../report/html.js'
import type { RunResult } from '../results/run-result.js'
import { streamColumns, wrapText } from '../core/wrap.js'

export const OUTPUT_FORMATS = ['text', 'json', 'csv'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]

/** `-o`/`--output` as the commands that print a saved result take it (report, compare). */
export const OUTPUT_OPTION = {
  alias: 'o',
  requiresArg: true,
  choices: OUTPUT_FORMATS,
  default: 'text' as OutputFormat,
  describe: `stdout format: ${OUTPUT_FORMATS.join(', ')} [default: text]`,
} as const

/** Colours and arrows only for a person at a terminal; NO_COLOR (no-color.org) turns them off. */
/** Colours on a terminal unless NO_COLOR; FORCE_COLOR forces them on (1, true, or empty) or off (0, false), as Node's own tools read it. */
export function stdoutColor(env: NodeJS.ProcessEnv = process.env, tty: boolean = process.stdout.isTTY === true): boolean {
  const force = env.FORCE_COLOR
  if (force !== undefined) return !['0', 'false'].includes(force.toLowerCase())
  return tty && !env.NO_COLOR
}

/**
 * Columns for stdout's text: the terminal's; without one, COLUMNS when set,
 * else 80 (core/wrap.ts): a file or a pipe read in a terminal later (a CI
 * log, `| less`) gets lines that fit one, as a terminal does.
 */
export function stdoutColumns(env: NodeJS.ProcessEnv = process.env, stdout: { isTTY?: boolean; columns?: number } = process.stdout): number {
  return streamColumns(env, stdout)
}

/** Text for stdout within its columns (the renderers' tables fit themselves; prose is filled). */
export function fitStdout(text: string): string {
  return wrapText(text, stdoutColumns())
}

/** A warning or a note on stderr, filled to stderr's columns with a hanging indent. */
export function writeStderrLine(line: string): void {
  process.stderr.write(`${wrapText(line, streamColumns(process.env, process.stderr))}\n`)
}

export async function renderOutput(result: RunResult, format: OutputFormat, color = false): Promise<string> {
  const out =
    format === 'json'
      ? (await import('../results/result-json.js')).renderJson(result)
      : format === 'csv'
        ? (await import('../report/csv.js')).renderCsvSummary(result)
        : fitStdout((await import('../report/text.js')).renderText(result, { color, width: stdoutColumns() }))
  return out.endsWith('\n') ? out : `${out}\n`
}

/**
 * A reader that closed stdout early (`| head`, `| jq` that exits, `| true`)
 * ends our output, not the command: EPIPE is an 'error' event on stdout,
 * which would otherwise be an uncaught exception that kills the process
 * before the run is saved. Later writes are dropped quietly, as hey does.
 * A terminal that was closed (SIGHUP, then EIO on every write) is the same
 * for stdout and stderr: the run is still saved. Any other failure to write
 * stdout (a full disk: `> /dev/full`) is said in one line and fails the
 * command (stdoutFailed), and the run is still saved.
 */
export function tolerateClosedStdout(): void {
  for (const stream of [process.stdout, process.stderr]) {
    if (stream.listenerCount('error') > 0) continue // once per process, however often main() runs
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'EIO' || stream !== process.stdout || stdoutFailure !== null) return
      stdoutFailure = err.code ?? err.message
      process.stderr.write(
        `hedgebench: cannot write the output to stdout (${err.code ? `${err.code}: ` : ''}${err.message.replace(/^\w+: /, '').replace(/, write$/, '')})\n`,
      )
    })
  }
}

let stdoutFailure: string | null = null

/** Whether writing stdout failed for a reason other than a reader that left (EPIPE) or a closed terminal (EIO). */
export function stdoutFailed(): boolean {
  return stdoutFailure !== null
}

/** `--html -`: the page goes to stdout, in place of the -o output (one document on stdout, as curl's `-o -`). */
export const TO_STDOUT = '-'

/** The -o output goes to stdout unless the HTML page does (`--html -`). */
export function stdoutTaken(html: string | undefined): boolean {
  return html === TO_STDOUT
}

/** Writes a self-contained HTML report, to a file or to stdout (the renderer is loaded only when a report is asked for). */
export async function writeHtmlReport(path: string, runs: RunResult[], opts: HtmlOptions = {}): Promise<void> {
  const { renderHtml } = await import('../report/html.js')
  await writePage(path, renderHtml(runs, opts))
}

/** An --html page, to the file or to stdout (`-`). */
export async function writePage(path: string, html: string): Promise<void> {
  if (path === TO_STDOUT) process.stdout.write(html)
  else await (await import('../report/results-store.js')).writeOutputFile(path, html, '--html')
}
