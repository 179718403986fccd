/**
 * Many command lines through main() in one child Node (main-driver.ts), for
 * tests of main()'s validation: each case gets the exit code main() returned
 * and what it printed, as runCli's would be, with one start-up for all.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { YOUNG_GENERATION_FLAGS } from '../../src/cli/launcher.js'
import type { CliRun } from './cli.js'

const DRIVER = fileURLToPath(new URL('./main-driver.js', import.meta.url))

export function runMainCases(cases: Array<{ args: string[]; cwd: string }>, timeoutMs = 60_000): CliRun[] {
  const dir = mkdtempSync(join(tmpdir(), 'hedgebench-main-'))
  const out = join(dir, 'results.json')
  const started = performance.now()
  try {
    const r = spawnSync(process.execPath, [...YOUNG_GENERATION_FLAGS, DRIVER], {
      input: JSON.stringify(cases),
      env: { ...process.env, NO_COLOR: '1', MAIN_DRIVER_OUT: out },
      timeout: timeoutMs,
      encoding: 'utf8',
    })
    if (r.status !== 0) throw new Error(`main() driver exited ${r.status ?? r.signal}: ${r.stderr}`)
    const wallMs = performance.now() - started
    const results = JSON.parse(readFileSync(out, 'utf8')) as Array<{ code: number; stdout: string; stderr: string }>
    return results.map((x) => ({ ...x, signal: null, timedOut: false, wallMs }))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
