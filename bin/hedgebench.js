#!/usr/bin/env node
// Thin shim over the compiled CLI (npm run build writes dist/). A command
// that sends load runs in a child Node with a larger young generation
// (src/cli/launcher.ts); the others, and that child, run main() here.
import { fileURLToPath } from 'node:url'
import { launchFlags, relaunch, watchLauncher } from '../dist/src/cli/launcher.js'

// Node's own exit for a top-level await that can never settle (13) would print nothing: say so, and fail.
process.on('exit', (code) => {
  if (code !== 13) return
  process.stderr.write('hedgebench: internal error: the command stopped with work still pending and nothing left to wait for\n')
  process.exitCode = 1
})

const args = process.argv.slice(2)
const flags = launchFlags(args, process.execArgv, process.env)
if (flags.length > 0) {
  process.exitCode = await relaunch(flags, fileURLToPath(import.meta.url), args)
} else {
  watchLauncher()
  process.exitCode = await main()
}

/** main(), once its modules are loaded: Node's loader opens them many at a time, which an open-file limit of a few dozen can refuse. */
async function main() {
  let cli
  try {
    cli = await import('../dist/src/cli/main.js')
  } catch (err) {
    if (err?.code !== 'EMFILE') throw err
    process.stderr.write('hedgebench: the open-file limit (ulimit -n) is too low to load hedgebench itself: raise it (`ulimit -n 1024`) and run it again\n')
    return 1
  }
  return cli.main()
}
