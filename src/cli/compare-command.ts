import type { CommandModule } from 'yargs'

// Placeholder until its issue lands: registered so the CLI shape is fixed.
export function compareCommand(setExitCode: (code: number) => void): CommandModule {
  return {
    command: 'compare',
    describe: '(not built yet)',
    handler: () => {
      process.stderr.write('hedgebench: compare is not built yet\n')
      setExitCode(2)
    },
  }
}
