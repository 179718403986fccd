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
  const { main } = await import('../dist/src/cli/main.js')
  process.exitCode = await main()
}
