/**
 * The suite's per-test time limit (helpers/test-watchdog.ts, loaded by
 * scripts/test.mjs): a test that never ends fails its file within the
 * limit, named on stderr, and the tests before it still report; a file
 * whose tests end is untouched.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const WATCHDOG = fileURLToPath(new URL('./helpers/test-watchdog.js', import.meta.url))
/** The child's own guard: far above the limits under test, so that only a watchdog that failed to fire reaches it. */
const GUARD_MS = 30_000

function runFile(source: string, limitMs: number): Promise<{ code: number | null; out: string; killed: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'hedgebench-watchdog-'))
  const file = join(dir, 'case.test.mjs')
  writeFileSync(file, source)
  // A runner of its own: without NODE_TEST_CONTEXT, which would make it report to this file's runner instead.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env
  const child = spawn(process.execPath, ['--import', WATCHDOG, '--test', '--test-reporter=spec', file], {
    env: { ...env, HEDGEBENCH_TEST_LIMIT_MS: String(limitMs) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  let killed = false
  const guard = setTimeout(() => {
    killed = true
    child.kill('SIGKILL')
  }, GUARD_MS)
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(guard)
      rmSync(dir, { recursive: true, force: true })
      resolve({ code, out, killed })
    }),
  )
}

test('a test that never ends fails its file, named, and the ones before it still report', async () => {
  const r = await runFile(
    `
import { test } from 'node:test'
import { createServer } from 'node:net'
test('finishes', () => {})
test('never ends', async () => { createServer().listen(0, '127.0.0.1'); await new Promise(() => {}) })
`,
    300,
  )
  assert.equal(r.killed, false, r.out)
  assert.notEqual(r.code, 0)
  assert.match(r.out, /test watchdog: "never ends" in .*case\.test\.mjs still running after 300 ms/)
  assert.match(r.out, /✔ finishes/)
})

test('tests that end are untouched, a slower one under the limit included', async () => {
  const r = await runFile(
    `
import { test } from 'node:test'
test('quick', () => {})
test('200 ms', () => new Promise((resolve) => setTimeout(resolve, 200)))
test('quick again', () => {})
`,
    5000,
  )
  assert.equal(r.code, 0, r.out)
  assert.doesNotMatch(r.out, /watchdog/)
})
