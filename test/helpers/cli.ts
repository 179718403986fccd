/**
 * Spawns bin/hedgebench.js as a user would, with a hard timeout, and keeps
 * track of every child so an after-hook can kill what is still running.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/**
 * The environment the CLI runs in under test: no colours, and a width no
 * report reaches, so that tests of what is said read it on one line
 * (without a terminal the output fits 80 columns; wrap-width.test.ts
 * checks that at COLUMNS=80 and 120).
 */
export const PLAIN_OUTPUT = { NO_COLOR: '1', COLUMNS: '1000' }

export const BIN = fileURLToPath(new URL('../../../bin/hedgebench.js', import.meta.url))

export interface CliRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** Killed by the helper's timeout. */
  timedOut: boolean
  wallMs: number
}

export interface CliChild {
  child: ChildProcess
  /** Everything written so far. */
  readonly stdout: string
  readonly stderr: string
  /** Settles when the process exits (or is killed at the timeout). */
  done: Promise<CliRun>
  /** Resolves once `pattern` appears on stderr (bounded by the timeout). */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<void>
}

const live = new Set<ChildProcess>()

export interface CliOptions {
  cwd?: string
  timeoutMs?: number
  env?: NodeJS.ProcessEnv
  /**
   * Node flags before the script. Give it YOUNG_GENERATION_FLAGS
   * (src/cli/launcher.ts) to run the command in the one process, as a user
   * who chose their own young generation does: no second Node is started
   * (half the start-up cost). Only for tests that are not about the launcher.
   */
  nodeArgs?: readonly string[]
}

export function startCli(args: string[], opts: CliOptions = {}): CliChild {
  const started = performance.now()
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), BIN, ...args], {
    cwd: opts.cwd ?? process.cwd(),
    env: { ...process.env, ...PLAIN_OUTPUT, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  live.add(child)
  let stdout = ''
  let stderr = ''
  const listeners = new Set<() => void>()
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s))
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    stderr += s
    for (const l of listeners) l()
  })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    child.kill('SIGKILL')
  }, opts.timeoutMs ?? 15_000)
  const done = new Promise<CliRun>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      live.delete(child)
      resolve({ code, signal, stdout, stderr, timedOut, wallMs: performance.now() - started })
    })
  })
  return {
    child,
    get stdout() {
      return stdout
    },
    get stderr() {
      return stderr
    },
    done,
    waitForStderr(pattern, timeoutMs = 10_000) {
      return new Promise<void>((resolve, reject) => {
        let settled = false
        const check = (): void => {
          if (pattern.test(stderr)) finish(null)
        }
        const t = setTimeout(() => finish(new Error(`timed out waiting for ${pattern} on stderr; got: ${stderr}`)), timeoutMs)
        const finish = (err: Error | null): void => {
          if (settled) return
          settled = true
          clearTimeout(t)
          listeners.delete(check)
          if (err) reject(err)
          else resolve()
        }
        listeners.add(check)
        void done.then(() => finish(pattern.test(stderr) ? null : new Error(`exited before ${pattern} on stderr; got: ${stderr}`)))
        check()
      })
    },
  }
}

export function runCli(args: string[], opts: CliOptions = {}): Promise<CliRun> {
  return startCli(args, opts).done
}

/** For after-hooks: kills every child still running. */
export function killAllChildren(): void {
  for (const child of live) child.kill('SIGKILL')
  live.clear()
}

/** The stderr lines, without the trailing newline. */
export function stderrLines(run: CliRun): string[] {
  return run.stderr.split('\n').filter((l) => l !== '')
}
