/**
 * Runs `hedgebench merge` with text on stdin (what `kubectl logs … |` gives
 * it), bounded in time, for the sharding tests.
 */
import { spawn } from 'node:child_process'
import { BIN, PLAIN_OUTPUT, type CliRun } from './cli.js'

export function runMergeWithStdin(args: string[], stdin: string, timeoutMs = 15_000, cwd = process.cwd()): Promise<CliRun> {
  const started = performance.now()
  const child = spawn(process.execPath, [BIN, 'merge', ...args], { cwd, env: { ...process.env, ...PLAIN_OUTPUT }, stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s))
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s))
  child.stdin.end(stdin)
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    child.kill('SIGKILL')
  }, timeoutMs)
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, timedOut, wallMs: performance.now() - started })
    })
  })
}
