/**
 * hedgebench on a real pseudo-terminal (util-linux `script`): what a user at
 * a terminal sees, and the keys they type (the terminal's line discipline
 * turns ^C into SIGINT for the foreground process).
 */
import { spawn, spawnSync } from 'node:child_process'
import { BIN } from './cli.js'

export const hasScript = spawnSync('script', ['--version']).status === 0

/** Every terminal started, so that a file's `after` can kill what a failed test left running. */
export const children: Array<ReturnType<typeof spawn>> = []

export interface PtyRun {
  /** Exit status of hedgebench, as the shell inside the terminal saw it. */
  code: number | null
  /** Everything the terminal showed (stdout and stderr are both the pty). */
  screen: string
  timedOut: boolean
  wallMs: number
}

export const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

/**
 * Runs hedgebench inside `script` with the terminal set to `cols` columns.
 * The shell prints its pid and then `exec`s node, so that pid is hedgebench's
 * own; `onPid` may signal it. Bounded by `timeoutMs` (then SIGKILL).
 */
export function runInPty(
  args: string[],
  cols: number,
  timeoutMs: number,
  onPid?: (pid: number) => void,
  onScreen?: (screen: string, keys: (s: string) => void) => void,
): Promise<PtyRun> {
  const inner = `stty cols ${cols} rows ${cols === 0 ? 0 : 24}; echo "PID $$"; exec ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}`
  // `; echo EXIT $?` cannot follow an exec: script itself returns the child's status with -e.
  const started = performance.now()
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm', NO_COLOR: '1' }
  delete env.CI // ora (and similar) disable themselves under CI; the test must see the terminal path.
  const child = spawn('script', ['-qfec', inner, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
  children.push(child)
  let screen = ''
  let pidSeen = false
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    // Keep the head and a bounded tail: the old spinner wrote gigabytes.
    screen = screen.length > 200_000 ? screen.slice(0, 100_000) + screen.slice(-100_000) + s : screen + s
    const pid = /PID (\d+)/.exec(screen)
    if (pid && !pidSeen) {
      pidSeen = true
      onPid?.(Number(pid[1]))
    }
    // What the user types: the terminal's line discipline turns ^C into SIGINT for the foreground process.
    onScreen?.(screen, (keys) => child.stdin.write(keys))
  })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    const pid = /PID (\d+)/.exec(screen)
    if (pid) {
      try {
        process.kill(Number(pid[1]), 'SIGKILL')
      } catch {
        // already gone
      }
    }
    child.kill('SIGKILL')
  }, timeoutMs)
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, screen, timedOut, wallMs: performance.now() - started })
    })
  })
}
