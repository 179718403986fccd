/**
 * Issue 14: commands that send load run in a child Node with a larger young
 * generation (src/cli/launcher.ts); the child lives and dies with the
 * launcher. The signal paths through the launcher (a first SIGINT/SIGTERM
 * stops gracefully, a second SIGINT exits at once) are interrupt.test.ts's.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { launchFlags, YOUNG_GENERATION_FLAGS } from '../src/cli/launcher.js'
import { killAllChildren, PLAIN_OUTPUT, startCli } from './helpers/cli.js'
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

const NPX = join(dirname(process.execPath), 'npx')

/**
 * The README's way to run the command from a clone is `npx hedgebench`: npm
 * runs it through `sh -c`, in the terminal's foreground process group. One
 * Ctrl-C there is one graceful stop (what was measured is printed), not "a
 * second SIGINT". The exit status the terminal sees is npm's, not
 * hedgebench's: Debian's sh (dash) ends itself on a SIGINT it received once
 * its child is done, and npm then re-raises it (docs/reliability.md says so).
 */
test('one Ctrl-C to `npx hedgebench` is one graceful stop: what was measured is printed', {
  skip: existsSync(NPX) ? false : `no npx beside ${process.execPath}`,
}, async (t) => {
  const s = await startServer({ delayMs: 50 })
  const args = [s.url, '--mode', 'plain', '--warmup', '0', '-n', '100000', '-c', '2', '--no-save']
  // --offline: the package's own bin (npx links the directory), never a download. detached: a process group of
  // its own, as a terminal's job.
  const npx = spawn(NPX, ['--offline', 'hedgebench', ...args], {
    cwd: fileURLToPath(new URL('../../', import.meta.url)),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...PLAIN_OUTPUT },
  })
  let stdout = ''
  let stderr = ''
  npx.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  npx.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    npx.once('close', (code, signal) => resolve({ code, signal })),
  )
  // Whatever goes wrong, nothing is left running: npx's group (npm, sh, the launcher), and the run in its own.
  const killAll = (): void => {
    if (npx.exitCode !== null || npx.signalCode !== null) return
    const descendants = (pid: number): number[] => childrenOf(pid).flatMap((c) => [c, ...descendants(c)])
    for (const pid of [npx.pid!, ...descendants(npx.pid!)]) {
      try {
        process.kill(-pid, 'SIGKILL')
      } catch {
        // not a group leader, or gone
      }
    }
  }
  const hardStop = setTimeout(killAll, 120_000)
  t.after(async () => {
    clearTimeout(hardStop)
    killAll()
    await s.close()
  })
  await until('requests to arrive', () => s.received >= 4, 60_000)
  // A terminal's Ctrl-C: SIGINT to every process of the foreground group.
  process.kill(-npx.pid!, 'SIGINT')
  const end = await exited
  assert.equal(stderr.match(/hedgebench: SIGINT: stopping, finishing in-flight requests/g)?.length, 1, stderr)
  assert.doesNotMatch(stderr, /second SIGINT/, 'one Ctrl-C read as two')
  assert.match(stdout, /^PARTIAL: interrupted during plain/m, 'what was measured is printed')
  assert.match(stdout, /=== plain phase ===/)
  // npm's status: 0 where its shell waits out a child that handled SIGINT (bash), the re-raised SIGINT under dash.
  assert.ok(end.code === 0 || end.signal === 'SIGINT', JSON.stringify(end))
})
