/**
 * Runs many command lines through main() in this one process, one after
 * another, each in its own working directory, and writes what each printed
 * and returned to the file named by MAIN_DRIVER_OUT. For tests of main()'s
 * own validation (bad-input.test.ts): one Node start-up for dozens of cases
 * instead of one each. Started by main-cases.ts, never imported by a test.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { main } from '../../src/cli/main.js'

interface DriverCase {
  args: string[]
  cwd: string
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

const cases = JSON.parse(readFileSync(0, 'utf8')) as DriverCase[]
const results: Array<{ code: number; stdout: string; stderr: string }> = []
for (const c of cases) {
  process.chdir(c.cwd)
  const r = await capture(() => main(c.args).catch((err: unknown) => ((process.stderr.write(`driver: main() threw: ${String(err)}\n`), -1))))
  results.push({ code: r.value, stdout: r.stdout, stderr: r.stderr })
}
writeFileSync(process.env.MAIN_DRIVER_OUT!, JSON.stringify(results))
process.exit(0)
