/**
 * Command lines through main() in one child Node (main-driver.ts), for tests
 * of what main() does with them: each case gets the exit code main() returned
 * and what it printed, as runCli's would be, with one start-up for all.
 * Tests about the process itself (signals, the launcher, a closed pipe, the
 * exit status as the shell sees it) spawn the CLI with runCli instead.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Socket } from 'node:net'
import { fileURLToPath } from 'node:url'
import { YOUNG_GENERATION_FLAGS } from '../../src/cli/launcher.js'
import { after } from 'node:test'
import { PLAIN_OUTPUT, type CliRun } from './cli.js'
import type { DriverCase, DriverResult } from './main-driver.js'

const DRIVER = fileURLToPath(new URL('./main-driver.js', import.meta.url))

/** A batch, run synchronously: for cases that need nothing from this process while they run (no server of its own). */
export function runMainCases(cases: DriverCase[], timeoutMs = 60_000): CliRun[] {
  const dir = mkdtempSync(join(tmpdir(), 'hedgebench-main-'))
  const out = join(dir, 'results.json')
  try {
    const r = spawnSync(process.execPath, [...YOUNG_GENERATION_FLAGS, DRIVER], {
      input: JSON.stringify(cases),
      env: { ...process.env, ...PLAIN_OUTPUT, MAIN_DRIVER_OUT: out },
      timeout: timeoutMs,
      encoding: 'utf8',
    })
    if (r.status !== 0) throw new Error(`main() driver exited ${r.status ?? r.signal}: ${r.stderr}`)
    const results = JSON.parse(readFileSync(out, 'utf8')) as DriverResult[]
    return results.map((x) => ({ ...x, signal: null, timedOut: false }))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export interface MainOptions {
  cwd?: string
  /** Set for this case only, over the driver's environment (NO_COLOR=1, as runCli's). */
  env?: Record<string, string | undefined>
  /** A bound for a hang, not for the machine's speed: a loaded machine took over 15 s for a 3-call gRPC run (default 60 s). */
  timeoutMs?: number
}

interface Driver {
  child: ChildProcess
  /** Output outside any case's capture (a timer firing after its case returned): shown if the driver dies. */
  stray: string
  /** Settles the case in the driver now, if any. */
  current: ((run: CliRun) => void) | null
}

let driver: Driver | null = null
const queue: Array<{ c: DriverCase; timeoutMs: number; resolve(run: CliRun): void }> = []

function startDriver(): Driver {
  const child = spawn(process.execPath, [...YOUNG_GENERATION_FLAGS, DRIVER], {
    env: { ...process.env, ...PLAIN_OUTPUT },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  const d: Driver = { child, stray: '', current: null }
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (d.stray += s))
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (d.stray += s))
  child.on('message', (result: DriverResult) => d.current?.({ ...result, signal: null, timedOut: false }))
  child.on('exit', (code, signal) => {
    if (driver === d) driver = null
    d.current?.({ code: null, signal, stdout: '', stderr: `main() driver exited ${code ?? signal} during the case: ${d.stray}`, timedOut: false, wallMs: 0 })
  })
  // Idle, the driver keeps neither process alive: it exits when the channel closes with this one.
  child.unref()
  child.channel?.unref()
  ;(child.stdout as Socket).unref()
  ;(child.stderr as Socket).unref()
  return d
}

/** Sends the next case once the driver is free: one at a time, so that a case's timeout counts its own time only. */
function pump(): void {
  if (queue.length === 0 || driver?.current) return
  const job = queue.shift()!
  const d = driver ?? (driver = startDriver())
  const started = performance.now()
  const finish = (run: CliRun): void => {
    clearTimeout(timer)
    d.current = null
    d.child.channel?.unref()
    job.resolve(run)
    pump()
  }
  const timer = setTimeout(() => {
    // This driver goes; the next case starts another.
    if (driver === d) driver = null
    d.child.kill('SIGKILL')
    finish({
      code: null,
      signal: 'SIGKILL',
      stdout: '',
      stderr: `main() driver: the case took over ${job.timeoutMs} ms: ${d.stray}`,
      timedOut: true,
      wallMs: performance.now() - started,
    })
  }, job.timeoutMs)
  d.current = finish
  d.child.channel?.ref()
  d.child.send(job.c)
}

/**
 * One command line through main() in this file's driver (started on first use, one for the file),
 * resolved as runCli's would be. Cases run one at a time, in the order given. A case that outlives
 * its timeout is reported as timed out and its driver killed; the next case starts another.
 */
export function runMain(args: string[], opts: MainOptions = {}): Promise<CliRun> {
  const c: DriverCase = { args, cwd: opts.cwd ?? process.cwd(), ...(opts.env ? { env: opts.env } : {}) }
  return new Promise<CliRun>((resolve) => {
    queue.push({ c, timeoutMs: opts.timeoutMs ?? 60_000, resolve })
    pump()
  })
}

/** Closes this file's driver and waits for it to exit (registered below for every file that imports this one). */
export async function closeMain(): Promise<void> {
  const d = driver
  if (d === null) return
  driver = null
  const exited = new Promise<void>((resolve) => d.child.once('exit', () => resolve()))
  if (d.child.connected) d.child.disconnect()
  else d.child.kill('SIGKILL')
  await exited
}

after(closeMain)
