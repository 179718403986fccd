/**
 * How `hedgebench` starts Node for a command that sends load: with a young
 * generation large enough that garbage collection rarely stops the clock.
 *
 * Each request allocates about 2.4 KB of short-lived JS objects (the
 * attempt and its handlers, the socket stream's chunks: `npm run bench`,
 * heap section). V8 starts the young generation at 1 MB and, because almost
 * nothing survives, grows it only to 8 MB: about 3.5-4 scavenges per 10,000
 * requests at -c 40, each one
 * stopping the thread that reads the clock while every answer in flight
 * waits. `--min-semi-space-size` is the flag that helps (a larger maximum
 * alone is never reached), and Node refuses it in NODE_OPTIONS, so the
 * launcher starts the command again in a child Node with it. Read-only
 * commands (report, compare, merge, help, version) and `serve` run in place.
 *
 * And without V8's allocation-site pretenuring: a burst in which many
 * requests' objects survive a scavenge (a short warm-up, a phase's start)
 * marks their allocation sites long-lived, and from then on every request's
 * objects are made in the old generation, where they keep the young ones
 * they point to alive: each scavenge copies most of the young generation
 * (20-120 ms instead of about 1) until a full collection, for the rest of
 * the run. docs/benchmarks.md has the figures.
 */
import { spawn } from 'node:child_process'

/**
 * 32 MB semi-spaces: 0.8-1.0 scavenges per 10,000 requests at -c 40 instead of 3.5-4.0, for ~45 MB more peak RSS
 * (npm run bench, heap section); every request's objects made young.
 */
export const YOUNG_GENERATION_FLAGS: readonly string[] = ['--min-semi-space-size=32', '--max-semi-space-size=32', '--no-allocation-site-pretenuring']

/** Set in the child, so that it never starts another one. */
const CHILD_MARK = 'HEDGEBENCH_LAUNCHED'

const IN_PLACE_COMMANDS = new Set(['report', 'compare', 'serve', 'merge'])
const IN_PLACE_FLAGS = new Set(['--help', '-h', '--version'])

/**
 * The Node flags to start the command with, or [] to run it in this process:
 * already the child, the user chose their own young generation, the command
 * sends no load, or Windows (where a child of its own process group gets a
 * console of its own).
 */
export function launchFlags(
  args: readonly string[],
  execArgv: readonly string[],
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): string[] {
  if (platform === 'win32' || env[CHILD_MARK] !== undefined) return []
  if (execArgv.some((a) => a.startsWith('--min-semi-space-size') || a.startsWith('--max-semi-space-size'))) return []
  if (args.some((a) => IN_PLACE_FLAGS.has(a))) return []
  const command = args.find((a) => !a.startsWith('-'))
  if (command !== undefined && IN_PLACE_COMMANDS.has(command)) return []
  return [...YOUNG_GENERATION_FLAGS]
}

/** Signals the launcher passes on: the child is in its own process group, so it hears only what is forwarded. */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGWINCH', 'SIGUSR2'] as const

/**
 * Runs `script args` in a child Node with `flags` and the same stdio;
 * resolves with its exit code (or re-raises the signal that ended it).
 *
 * The child gets a process group of its own, so a Ctrl-C from the terminal
 * reaches it once (forwarded from here), not twice (a second SIGINT means
 * "exit at once" to the run command). An IPC channel ties its life to
 * this process: if the launcher dies without forwarding anything (SIGKILL),
 * the child sees the channel close and stops as on SIGTERM, writing what
 * it measured.
 */
export function relaunch(flags: readonly string[], script: string, args: readonly string[]): Promise<number> {
  const child = spawn(process.execPath, [...flags, ...process.execArgv, script, ...args], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [CHILD_MARK]: '1' },
    detached: true,
  })
  const forward = (signal: NodeJS.Signals): void => void child.kill(signal)
  for (const s of FORWARDED) process.on(s, forward)
  return new Promise((resolve) => {
    child.once('error', (err) => {
      process.stderr.write(`hedgebench: could not start node: ${err.message}\n`)
      resolve(1)
    })
    child.once('exit', (code, signal) => {
      for (const s of FORWARDED) process.off(s, forward)
      if (signal !== null) process.kill(process.pid, signal)
      resolve(code ?? 1)
    })
  })
}

/** In the child: stop as on SIGTERM when the launcher goes away without a word. */
export function watchLauncher(): void {
  if (process.env[CHILD_MARK] === undefined || !process.channel) return
  process.channel.unref()
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'))
}
