/** `hedgebench demo` (npm run demo): the Raspberry Pi article's experiment in one command. */
import type { CommandModule } from 'yargs'
import { UsageError } from '../core/errors.js'
import { assertNoRepeats, integer } from './run-flags.js'
import { fitStdout } from './output.js'
import { valuesRequired } from './argv.js'

interface DemoArgs {
  /** A string, so a bad value is named in the error, not shown as NaN. */
  n?: string
  profile: string
  c: string
  http2: boolean
}

export function demoCommand(setExitCode: (code: number) => void): CommandModule<object, DemoArgs> {
  return {
    command: 'demo',
    describe: 'show what hedging does: a profile at 4 and 40 in flight, plain vs hedged',
    builder: (y) =>
      valuesRequired(
        y
          .option('n', { alias: 'requests', type: 'string', describe: "requests per phase [default: the profile's, 4000 for pi]" })
          .option('profile', { type: 'string', default: 'pi', describe: 'profile to run [default: pi]' })
          .option('c', { alias: 'concurrency', type: 'string', default: '4,40', describe: 'concurrencies to compare, comma-separated [default: 4,40]' })
          .option('http2', { type: 'boolean', default: false, describe: 'run each concurrency over HTTP/1.1, then over h2c, and compare what cancels cost' }),
      ),
    handler: async (argv) => {
      assertNoRepeats(argv as unknown as Record<string, unknown>)
      const concurrencies = argv.c.split(',').map((s) => Number(s.trim()))
      if (concurrencies.some((c) => !(Number.isInteger(c) && c > 0))) throw new UsageError(`invalid -c "${argv.c}" (e.g. 4,40)`)
      const requests = argv.n === undefined ? undefined : integer(argv.n, '-n')
      if (requests !== undefined && requests <= 0) throw new UsageError(`invalid -n "${argv.n}" (a whole number above 0)`)
      // Loaded when the demo runs, not for --help (issue 14: start-up time).
      const [{ runDemo }, { renderDemo }, { startProgress }, { onInterrupt }] = await Promise.all([
        import('./demo.js'),
        import('../report/demo-text.js'),
        import('./progress.js'),
        import('./run-command.js'),
      ])
      const progress = startProgress()
      // Ctrl-C ends the run in progress as an interrupted run ends, and the table shows what was measured.
      const interrupt = onInterrupt(undefined)
      try {
        const demo = await runDemo({
          profile: argv.profile,
          concurrencies,
          http2: argv.http2,
          ...(requests ? { requests } : {}),
          onProgress: (c, p) => progress.update({ ...p, phase: `c=${c} ${p.phase}` as typeof p.phase }),
          signal: interrupt.signal,
          stopNow: interrupt.stopNow,
        })
        progress.stop()
        process.stdout.write(fitStdout(renderDemo(demo)))
        setExitCode(interrupt.twice() ? 130 : 0)
      } finally {
        progress.stop()
        interrupt.dispose()
      }
    },
  }
}
