import type { CommandModule } from 'yargs'

// Placeholder until its issue lands: registered so the CLI shape is fixed.
export function reportCommand(setExitCode: (code: number) => void): CommandModule {
  return {
    command: 'report',
    describe: '(not built yet)',
    handler: () => {
      process.stderr.write('hedgebench: report is not built yet\n')
      setExitCode(2)
    },
  }
}
