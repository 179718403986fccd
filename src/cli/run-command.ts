import type { CommandModule } from 'yargs'

export function runCommand(setExitCode: (code: number) => void): CommandModule {
  return {
    command: '$0 [urls..]',
    describe: 'run plain and hedged phases against replica URLs',
    handler: () => {
      setExitCode(2)
    },
  }
}
