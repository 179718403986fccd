/**
 * `hedgebench serve`: the built-in simulated replicas as a process. Prints
 * exactly the replica URLs on stdout, one per line (scripts and spawnTarget
 * read them), and everything else on stderr; serves until SIGINT/SIGTERM.
 */
import type { Argv, CommandModule } from 'yargs'
import { profileNames } from '../sim/profile.js'
import { DEFAULT_HEDGE_HEADER, startTarget } from '../sim/target.js'

interface ServeArgs {
  profile: string
  replicas?: number
  port: number
  host: string
  seed?: number
  hedgeHeader: string
  exitWithParent: boolean
}

export function serveCommand(setExitCode: (code: number) => void): CommandModule {
  return {
    command: 'serve',
    describe: 'start simulated replicas from a profile (prints their URLs)',
    builder: (y: Argv) =>
      y
        .option('profile', {
          type: 'string',
          demandOption: true,
          describe: `built-in profile (${profileNames().join(', ')}) or path to a profile .json`,
        })
        .option('replicas', { type: 'number', describe: "number of replicas (default: the profile's)" })
        .option('port', { type: 'number', default: 0, describe: 'first port; replicas use consecutive ports (0 = any free ports)' })
        .option('host', { type: 'string', default: '127.0.0.1', describe: 'address to listen on' })
        .option('seed', { type: 'number', describe: "seed for the simulated latencies (default: the profile's, else random)" })
        .option('hedge-header', { type: 'string', default: DEFAULT_HEDGE_HEADER, describe: 'header counted as marking a hedge' })
        // Set by spawnTarget: stop when the parent's stdin pipe closes, so no orphan outlives it.
        .option('exit-with-parent', { type: 'boolean', default: false, hidden: true }),
    handler: async (raw) => {
      const argv = raw as unknown as ServeArgs
      const target = await startTarget({
        profile: argv.profile,
        replicas: argv.replicas,
        port: argv.port,
        host: argv.host,
        seed: argv.seed,
        hedgeHeader: argv.hedgeHeader,
      })
      process.stdout.write(`${target.urls.join('\n')}\n`)
      process.stderr.write(
        `hedgebench: serving profile "${target.profile}" on ${target.urls.length} replicas, seed ${target.seed}; stats at ${target.statsUrl}; ready (Ctrl-C stops)\n`,
      )
      await untilStopped(argv.exitWithParent)
      await target.close()
      setExitCode(0)
    },
  }
}

/** Resolves on SIGINT/SIGTERM (or the parent's pipe closing), then lets go of every handle. */
function untilStopped(watchStdin: boolean): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      if (watchStdin) {
        process.stdin.off('end', stop)
        process.stdin.off('close', stop)
        process.stdin.destroy()
      }
      resolve()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    if (watchStdin) {
      process.stdin.once('end', stop)
      process.stdin.once('close', stop)
      process.stdin.resume()
    }
  })
}
