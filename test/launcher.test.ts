/**
 * Issue 14: commands that send load run in a child Node with a larger young
 * generation (src/cli/launcher.ts); the child lives and dies with the
 * launcher. The signal paths through the launcher (a first SIGINT/SIGTERM
 * stops gracefully, a second SIGINT exits at once) are interrupt.test.ts's.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { launchFlags, YOUNG_GENERATION_FLAGS } from '../src/cli/launcher.js'
import { killAllChildren, startCli } from './helpers/cli.js'
import { startServer } from './helpers/servers.js'
import { until } from './helpers/until.js'

test("load-sending commands get the young-generation flags; read-only ones, serve, the child and a user's own choice do not", () => {
  const env = {}
  assert.deepEqual(launchFlags(['http://127.0.0.1:1/', '-n', '10'], [], env), YOUNG_GENERATION_FLAGS)
  assert.deepEqual(launchFlags(['--profile', 'pi'], [], env), YOUNG_GENERATION_FLAGS)
  assert.deepEqual(launchFlags(['demo', '-n', '100'], [], env), YOUNG_GENERATION_FLAGS)
  for (const args of [
    ['report', 'x.json'],
    ['compare', 'a.json', 'b.json'],
    ['serve', '--profile', 'pi'],
    ['--help'],
    ['-h'],
    ['--version'],
    ['http://x/', '--help'],
  ]) {
    assert.deepEqual(launchFlags(args, [], env), [], args.join(' '))
  }
  assert.deepEqual(launchFlags(['http://x/'], [], { HEDGEBENCH_LAUNCHED: '1' }), [], 'the child never starts another')
  assert.deepEqual(launchFlags(['http://x/'], ['--max-semi-space-size=8'], env), [], "the user's own flag wins")
  assert.deepEqual(launchFlags(['http://x/'], [], env, 'win32'), [], 'Windows runs in place')
})

/** Pids whose parent is `ppid` (Linux /proc). */
function childrenOf(ppid: number): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      // stat: "pid (comm) state ppid ..."; comm may hold spaces, so split after the last ')'.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid) pids.push(Number(name))
    } catch {
      // gone meanwhile
    }
  }
  return pids
}

test('a run executes in a child Node started with the flags, which stops when the launcher is killed outright', {
  skip: existsSync('/proc/self/stat') ? false : 'needs Linux /proc',
}, async (t) => {
  const s = await startServer({ delayMs: 50 })
  let child: number | undefined
  t.after(async () => {
    killAllChildren()
    // With the feature broken the child outlives the launcher: do not leave it running.
    if (child !== undefined && existsSync(`/proc/${child}`)) process.kill(child, 'SIGKILL')
    await s.close()
  })
  const cli = startCli([s.url, '--mode', 'plain', '--warmup', '0', '-n', '100000', '-c', '2', '--no-save'], { timeoutMs: 20_000 })
  await until('requests to arrive', () => s.received >= 4)
  child = childrenOf(cli.child.pid!)[0]
  assert.ok(child, 'the launcher has a child process')
  const argv = readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0')
  for (const flag of YOUNG_GENERATION_FLAGS) assert.ok(argv.includes(flag), argv.join(' '))
  // SIGKILL leaves no chance to forward anything: the child must notice on its own.
  cli.child.kill('SIGKILL')
  await cli.done
  await until('the child to exit', () => !existsSync(`/proc/${child}`) || readFileSync(`/proc/${child}/stat`, 'utf8').includes(') Z '), 10_000)
  const atExit = s.received
  await new Promise((r) => setTimeout(r, 200))
  assert.equal(s.received, atExit, 'no requests after the child exited')
})
