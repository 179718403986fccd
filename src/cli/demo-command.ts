import type { CommandModule } from 'yargs'

// Placeholder until its issue lands: registered so the CLI shape is fixed.
export function demoCommand(setExitCode: (code: number) => void): CommandModule {
  return {
    command: 'demo',
    describe: '(not built yet)',
    handler: () => {
      process.stderr.write('hedgebench: demo is not built yet\n')
      setExitCode(2)
    },
  }
}
