import type { CommandModule } from 'yargs'

// Placeholder until its issue lands: registered so the CLI shape is fixed.
export function serveCommand(setExitCode: (code: number) => void): CommandModule {
  return {
    command: 'serve',
    describe: '(not built yet)',
    handler: () => {
      process.stderr.write('hedgebench: serve is not built yet\n')
      setExitCode(2)
    },
  }
}
