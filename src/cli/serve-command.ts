/**
 * `hedgebench serve`: the built-in simulated replicas as a process. Prints
 * exactly the replica URLs on stdout, one per line (scripts and spawnTarget
 * read them), and everything else on stderr; serves until SIGINT/SIGTERM.
 */
import type { Argv, CommandModule } from 'yargs'
import { SIM_SERVICE } from '../sim/grpc-sim-service.js'
import { quietGrpcJs } from './grpc-flags.js'
import { profileNames } from '../sim/profile.js'
import { DEFAULT_HEDGE_HEADER } from '../hedging/policy.js'
import { assertNoRepeats, integer } from './run-flags.js'
import { valuesRequired } from './argv.js'

/** Numbers arrive as strings, so a bad one is named in the error ("invalid --port "abc""), not as NaN. */
interface ServeArgs {
  profile: string
  replicas?: string
  port?: string
  host: string
  seed?: string
  hedgeHeader: string
  grpc: boolean
  exitWithParent: boolean
}

export function serveCommand(setExitCode: (code: number) => void): CommandModule {
  return {
    command: 'serve',
    describe: 'start simulated replicas from a profile and print their URLs (HTTP/1.1 and h2c)',
    builder: (y: Argv) =>
      valuesRequired(
        y
          .option('profile', {
            type: 'string',
            demandOption: true,
            describe: `built-in profile (${profileNames().join(', ')}) or path to a profile .json`,
          })
          .option('replicas', { type: 'string', describe: "number of replicas (default: the profile's)" })
          .option('port', { type: 'string', describe: 'first port; replicas use consecutive ports (default: 0 = any free ports)' })
          .option('host', { type: 'string', default: '127.0.0.1', describe: 'address to listen on [default: 127.0.0.1]' })
          .option('seed', { type: 'string', describe: "seed for the simulated latencies (default: the profile's, else random)" })
          .option('hedge-header', {
            type: 'string',
            default: DEFAULT_HEDGE_HEADER,
            describe: `header counted as marking a hedge [default: ${DEFAULT_HEDGE_HEADER}]`,
          })
          .option('grpc', {
            type: 'boolean',
            default: false,
            describe: 'serve gRPC (hedgebench.sim.v1.Replica/Work, proto/hedgebench-sim.proto) on grpc:// URLs',
          })
          // Set by spawnTarget: stop when the parent's stdin pipe closes, so no orphan outlives it.
          .option('exit-with-parent', { type: 'boolean', default: false, hidden: true }),
      ),
    handler: async (raw) => {
      assertNoRepeats(raw)
      const argv = raw as unknown as ServeArgs
      if (argv.grpc) await quietGrpcJs()
      // Loaded when it serves, not for --help (issue 14: start-up time).
      const { startTarget } = await import('../sim/target.js')
      const target = await startTarget({
        profile: argv.profile,
        replicas: optionalInteger(argv.replicas, '--replicas'),
        port: optionalInteger(argv.port, '--port'),
        host: argv.host,
        seed: optionalInteger(argv.seed, '--seed'),
        hedgeHeader: argv.hedgeHeader,
        grpc: argv.grpc,
      })
      // Listening for Ctrl-C before saying ready: a script that stops it on the ready line must not find the default (death by SIGINT).
      const stopped = untilStopped(argv.exitWithParent)
      process.stdout.write(`${target.urls.join('\n')}\n`)
      const [speaks, stats] = argv.grpc ? ['gRPC', `stats by ${SIM_SERVICE}/Stats`] : ['HTTP/1.1 and h2c', `stats at ${target.statsUrl}`]
      process.stderr.write(
        `hedgebench: serving profile "${target.profile}" on ${target.urls.length} replicas (${speaks}), seed ${target.seed}; ${stats}; ready (Ctrl-C stops)\n`,
      )
      await stopped
      await target.close()
      setExitCode(0)
    },
  }
}

const optionalInteger = (raw: string | undefined, flag: string): number | undefined => (raw === undefined ? undefined : integer(raw, flag))

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
