/**
 * ora's spinner for the waits that have no count and measure nothing: the
 * pre-run check (with reading the schema by reflection), the wait for
 * --start-at, and saving and rendering (--html) after the run. Measured phases keep the progress
 * bar (progress.ts), which owns no timer: ora redraws on an interval, and
 * that would take event-loop time from the requests being timed, so the
 * spinner is always stopped before a phase begins.
 *
 * Only on a terminal of known width: a pipe, a file, TERM=dumb or a
 * 0-column terminal (where the spinner this project once had looped
 * forever) get nothing at all, not even a line. ora neither takes stdin
 * (Ctrl-C stays the run's own signal) nor hides the cursor (which would
 * hook the process's exit signals to show it again).
 */
import type { Ora } from 'ora'

export type WaitKind = 'check' | 'start' | 'save' | 'render'

const TEXT: Record<WaitKind, string> = {
  check: 'checking the targets',
  start: 'waiting for the agreed start (--start-at)',
  save: 'saving the results',
  render: 'writing the HTML report',
}

export interface WaitSpinner {
  /** Show what is being waited for, or stop the spinner (null: a measured phase begins). */
  show: (kind: WaitKind | null) => void
}

const silent: WaitSpinner = { show: () => {} }

/** A terminal the spinner may draw on. */
export function spinnerAllowed(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && stream.columns > 0 && env.TERM !== 'dumb'
}

export async function startWaitSpinner(stream: NodeJS.WriteStream = process.stderr): Promise<WaitSpinner> {
  if (!spinnerAllowed(stream)) return silent
  const { default: ora } = await import('ora')
  let spinner: Ora | null = null
  return {
    show: (kind) => {
      if (kind === null) {
        spinner?.stop()
        spinner = null
      } else if (spinner) spinner.text = TEXT[kind]
      else spinner = ora({ text: TEXT[kind], stream, isEnabled: true, discardStdin: false, hideCursor: false }).start()
    },
  }
}
