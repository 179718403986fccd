/**
 * A run left waiting on something that can never happen (a connection
 * whose end never comes, with no handle left to bring it): Node would exit
 * with code 13 and print nothing. The run command's interruption handlers
 * (cli/run-command.ts onInterrupt) hear Node's 'beforeExit' first and stop
 * the run as a second Ctrl-C would, so it goes on to write what it
 * measured, with one line saying why.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const RUN_COMMAND = fileURLToPath(new URL('../src/cli/run-command.js', import.meta.url))

test("a run awaiting nothing that can settle is stopped at Node's beforeExit, says so, and ends as it would (not exit 13)", async () => {
  // The "run": a promise that settles only when the run is told to stop, and nothing else keeps Node alive.
  const script = `
const { onInterrupt } = await import(${JSON.stringify(RUN_COMMAND)})
const interrupt = onInterrupt(undefined)
await new Promise((resolve) => interrupt.stopNow.addEventListener('abort', resolve))
interrupt.dispose()
process.stdout.write('wrote what was measured\\n')
`
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000, env: { ...process.env, COLUMNS: '200' } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  )
  assert.equal(r.code, 0, r.stderr)
  assert.equal(r.stdout, 'wrote what was measured\n')
  assert.equal(r.stderr, 'hedgebench: the run was left waiting on nothing (a connection that never ended): stopping and writing what was measured\n')
})
