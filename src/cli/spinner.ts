/**
 * Progress on stderr, only on a TTY (so it never mixes into -o json|csv on
 * stdout, and CI logs stay clean). Autocannon does the same with its bar.
 */
import ora, { type Ora } from 'ora'
import type { Progress } from '../run/run-options.js'

interface Spinner {
  update: (p: Progress) => void
  stop: () => void
}

export function startSpinner(): Spinner {
  if (!process.stderr.isTTY) return { update: () => {}, stop: () => {} }
  const spinner: Ora = ora({ stream: process.stderr, text: 'starting' }).start()
  return {
    update: (p) => {
      const total = p.total === null ? '' : `/${p.total}`
      spinner.text = `${p.phase}: ${p.done}${total} requests, ${(p.elapsedMs / 1000).toFixed(1)} s`
    },
    stop: () => spinner.stop(),
  }
}
