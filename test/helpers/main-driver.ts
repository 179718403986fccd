/**
 * Runs command lines through main() in this one process, one after another,
 * each in its own working directory, and reports what each printed and
 * returned: one Node start-up for many cases instead of one each (and the
 * launcher's second one). Started by main-cases.ts, never imported by a test.
 *
 * Two ways in: a batch as JSON on stdin, answered in the file named by
 * MAIN_DRIVER_OUT (runMainCases, for cases that need nothing from the test
 * process while they run); or, started with an IPC channel, one case per
 * message, answered by message (mainSession, for cases against the test's
 * own servers, whose event loop must keep running meanwhile).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { main } from '../../src/cli/main.js'

export interface DriverCase {
  args: string[]
  cwd: string
  /** Set for this case only, then restored (runCli's env option). */
  env?: Record<string, string | undefined>
}

export interface DriverResult {
  code: number
  stdout: string
  stderr: string
  /** From main()'s call to its return: the case's own time, without its wait behind the cases before it. */
  wallMs: number
}

type Write = typeof process.stdout.write

/** Collects what is written to a stream while `fn` runs; callbacks are still called, as a stream would. */
async function capture<T>(fn: () => Promise<T>): Promise<{ value: T; stdout: string; stderr: string }> {
  const text = { stdout: '', stderr: '' }
  const originals = { stdout: process.stdout.write, stderr: process.stderr.write }
  const into = (name: 'stdout' | 'stderr'): Write =>
    ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      text[name] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
      const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined
      if (cb) queueMicrotask(cb)
      return true
    }) as Write
  process.stdout.write = into('stdout')
  process.stderr.write = into('stderr')
  try {
    const value = await fn()
    return { value, ...text }
  } finally {
    process.stdout.write = originals.stdout
    process.stderr.write = originals.stderr
  }
}

/** The case's environment for the length of `fn`, then the driver's own again. */
async function withEnv<T>(env: DriverCase['env'], fn: () => Promise<T>): Promise<T> {
  const saved = new Map(Object.keys(env ?? {}).map((k) => [k, process.env[k]]))
  const set = (k: string, v: string | undefined): void => {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  for (const [k, v] of Object.entries(env ?? {})) set(k, v)
  try {
    return await fn()
  } finally {
    for (const [k, v] of saved) set(k, v)
  }
}

async function runCase(c: DriverCase): Promise<DriverResult> {
  process.chdir(c.cwd)
  const started = performance.now()
  const r = await withEnv(c.env, () =>
    capture(() => main(c.args).catch((err: unknown) => (process.stderr.write(`driver: main() threw: ${String(err)}\n`), -1))),
  )
  return { code: r.value, stdout: r.stdout, stderr: r.stderr, wallMs: performance.now() - started }
}

if (process.send !== undefined) {
  // One case at a time, in the order sent: the capture of stdout and stderr is process-wide.
  let queue = Promise.resolve()
  process.on('message', (c: DriverCase) => {
    queue = queue.then(async () => {
      process.send!(await runCase(c))
    })
  })
  process.on('disconnect', () => process.exit(0))
} else {
  const cases = JSON.parse(readFileSync(0, 'utf8')) as DriverCase[]
  const results: DriverResult[] = []
  for (const c of cases) results.push(await runCase(c))
  writeFileSync(process.env.MAIN_DRIVER_OUT!, JSON.stringify(results))
  process.exit(0)
}
