/** Runs `node bin/hedgebench.js ARGS` as a user would (bounded), collecting stdout, stderr and the exit code. */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { PLAIN_OUTPUT } from './cli.js'

export const BIN_PATH = fileURLToPath(new URL('../../../bin/hedgebench.js', import.meta.url))

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

export function hedgebench(args: string[], timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN_PATH, ...args],
      { env: { ...process.env, ...PLAIN_OUTPUT }, timeout: timeoutMs, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}
