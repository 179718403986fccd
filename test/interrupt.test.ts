/**
 * Interruption through the CLI: SIGINT/SIGTERM mid-run stops new requests,
 * lets in-flight ones finish (aborting them after ~2 s), prints the report,
 * saves it with "partial": true and the phase it stopped in, exits 0, and
 * leaves a complete per-request CSV. A second SIGINT exits at once. Saved
 * files never overwrite each other.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { runCli, startCli, type CliChild } from './helpers/cli.js'
import { parseCsvObjects } from './helpers/csv.js'
import type { CountingServer, ServerOptions } from './helpers/servers.js'
import { cliSession } from './helpers/cli-session.js'
import { saveResult } from '../src/report/results-store.js'
import { makeRunResult } from './helpers/result-fixture.js'
import { until } from './helpers/until.js'

const session = cliSession('hedgebench-int-')
const tempDir = (): Promise<string> => session.tempDir()
const server = (opts: ServerOptions): Promise<CountingServer> => session.server(opts)

interface Phase {
  requests: number
  ok: number
  errors: number
  errorKinds: Record<string, number>
  interrupted?: number
  interruptedSlow?: number
  interruptedMaxMs?: number
  latencyMs: { max: number }
}
interface Saved {
  partial: boolean
  stoppedIn: string | null
  phases: Record<string, Phase>
}

async function savedResult(dir: string): Promise<Saved> {
  const files = (await readdir(join(dir, 'results'))).filter((f) => f.endsWith('.json'))
  assert.equal(files.length, 1, `one saved JSON: ${files}`)
  assert.ok(
    (await readdir(join(dir, 'results'))).every((f) => !f.startsWith('.')),
    'no temp files left',
  )
  return JSON.parse(await readFile(join(dir, 'results', files[0]!), 'utf8')) as Saved
}

/** The per-request CSV is complete: one parseable row per logical request, ending in a newline. */
async function assertCsvComplete(path: string, saved: Saved): Promise<void> {
  const text = await readFile(path, 'utf8')
  assert.ok(text.endsWith('\n'), 'the last row is complete')
  const rows = parseCsvObjects(text)
  const total = Object.values(saved.phases).reduce((s, p) => s + p.requests + (p.interrupted ?? 0), 0)
  assert.equal(rows.length, total, 'one row per logical request, including the interrupted phase and the requests aborted at the stop')
  for (const row of rows) {
    assert.ok(row.phase! in saved.phases, `row phase ${row.phase}`)
    assert.match(row.latency_ms!, /^\d+\.\d{3}$/)
  }
}

function start(url: string, dir: string, extra: string[]): CliChild {
  return startCli([url, '--out-dir', 'results', '--csv-requests', 'req.csv', '--label', 'interrupted', '--seed', '3', ...extra], {
    cwd: dir,
    timeoutMs: 20_000,
  })
}

describe('interruption', { concurrency: 3 }, () => {
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    test(`${sig} mid-run: stops sending, finishes in-flight requests, reports and saves a partial run, exit 0`, async () => {
      const s = await server({ delayMs: 100 })
      const dir = await tempDir()
      const cli = start(s.url, dir, ['--mode', 'plain', '--warmup', '0', '-n', '10000', '-c', '4'])
      await until('requests to arrive', () => s.received >= 12)
      cli.child.kill(sig)
      const atSignal = s.received
      const run = await cli.done
      assert.equal(run.timedOut, false)
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stderr, new RegExp(`${sig}: stopping`))
      assert.ok(!/^\s+at /m.test(run.stderr), run.stderr)
      assert.ok(s.received <= atSignal + 4, `no new requests after the signal (${atSignal} -> ${s.received})`)
      assert.match(run.stdout, /^Summary:$/m, 'the text report is printed')
      const saved = await savedResult(dir)
      assert.equal(saved.partial, true)
      assert.equal(saved.stoppedIn, 'plain')
      const plain = saved.phases.plain!
      assert.equal(plain.requests, s.received, 'every request the server saw was measured')
      assert.equal(plain.ok, plain.requests, 'in-flight requests finished, not aborted')
      assert.equal(s.cancelled, 0)
      await assertCsvComplete(join(dir, 'req.csv'), saved)
    })
  }

  test('stoppedIn names the phase: interrupted in the hedged phase after a complete plain one', async () => {
    const s = await server({ delayMs: 40 })
    const dir = await tempDir()
    const cli = start(s.url, dir, ['--mode', 'both', '--warmup', '0', '--hedge-delay', '5s', '-n', '30', '-c', '3'])
    await until('the hedged phase to start', () => s.received >= 36)
    cli.child.kill('SIGINT')
    const run = await cli.done
    assert.equal(run.code, 0, run.stderr)
    const saved = await savedResult(dir)
    assert.equal(saved.partial, true)
    assert.equal(saved.stoppedIn, 'hedged')
    assert.equal(saved.phases.plain!.requests, 30)
    assert.ok(saved.phases.hedged!.requests >= 6 && saved.phases.hedged!.requests < 30, `hedged ${saved.phases.hedged!.requests}`)
    await assertCsvComplete(join(dir, 'req.csv'), saved)
  })

  test('in-flight requests that never finish are aborted after the ~2 s grace, then the partial run is saved', async () => {
    const s = await server({ handle: (req) => req.resume() })
    const dir = await tempDir()
    const cli = start(s.url, dir, ['--mode', 'plain', '--warmup', '0', '-n', '100', '-c', '3', '-t', '60s'])
    await until('3 requests in flight', () => s.received >= 3)
    const signalled = performance.now()
    cli.child.kill('SIGINT')
    const run = await cli.done
    const afterSignal = performance.now() - signalled
    assert.equal(run.code, 0, run.stderr)
    assert.ok(afterSignal >= 1500 && afterSignal < 6000, `exited ${Math.round(afterSignal)} ms after SIGINT`)
    const saved = await savedResult(dir)
    assert.equal(saved.partial, true)
    assert.equal(saved.stoppedIn, 'plain')
    const plain = saved.phases.plain!
    // hedgebench aborted them itself: counted as interrupted, not as errors, and outside the latency figures.
    assert.equal(plain.interrupted, 3, 'the aborted in-flight requests are counted apart')
    assert.equal(plain.requests, 0)
    assert.equal(plain.errors, 0)
    assert.deepEqual(plain.errorKinds, {})
    assert.equal(plain.latencyMs.max, 0, 'no abort time entered the latency figures')
    assert.match(run.stdout, /^\s+Interrupted:\s+3 requests aborted by hedgebench after the stop/m)
    // They hung for the whole grace (about 2 s after the stop, over the default 1 s --slow): the report says they were there.
    assert.equal(plain.interruptedSlow, 3)
    assert.ok(plain.interruptedMaxMs! >= 1500, `in flight ${plain.interruptedMaxMs} ms`)
    assert.match(run.stdout, /; 3 had been in flight over the 1 s slow threshold, the longest \d+\.\d+ s$/m)
    // The CSV summary printed or saved for a partial run says so on every row.
    const csv = parseCsvObjects(await readFile(join(dir, 'results', (await readdir(join(dir, 'results'))).find((f) => f.endsWith('.csv'))!), 'utf8'))
    assert.ok(csv.length > 0 && csv.every((r) => r.partial === 'true'), JSON.stringify(csv.map((r) => r.partial)))
    assert.equal(csv.find((r) => r.scope === 'phase' && r.phase === 'plain')!.interrupted, '3')
    await assertCsvComplete(join(dir, 'req.csv'), saved)
  })

  test('a second SIGINT exits at once', async (t) => {
    const s = await server({ handle: (req) => req.resume() })
    const dir = await tempDir()
    const cli = start(s.url, dir, ['--mode', 'plain', '--warmup', '0', '-n', '100', '-c', '3', '-t', '60s'])
    await until('3 requests in flight', () => s.received >= 3)
    cli.child.kill('SIGINT')
    await cli.waitForStderr(/SIGINT: stopping/)
    const second = performance.now()
    cli.child.kill('SIGINT')
    const run = await cli.done
    const took = performance.now() - second
    assert.equal(run.timedOut, false)
    // The requests hang (-t 60s). If the second SIGINT did not abort them,
    // the CLI's never-hang timer would end the process 1.5 s after it, with
    // exit 130 too (run-command.ts), but before the run returned: nothing
    // saved. So the saved partial run below is what proves "at once", not a
    // wall-clock bound: 1.2 s, and even the fallback's own 1.5 s, were
    // outlasted by a correct build (1925 ms) with ~20 processes on 2 cores.
    // Checked: with second.abort() removed, no file is saved.
    t.diagnostic(`exited ${Math.round(took)} ms after the second SIGINT`)
    assert.equal(run.code, 130)
    assert.match(run.stderr, /second SIGINT/)
    // It still wrote what it measured: a partial run, stopped in the plain phase.
    const files = (await readdir(join(dir, 'results'))).filter((f) => f.endsWith('.json'))
    assert.equal(files.length, 1, `saved files: ${files.join(', ')}`)
    const saved = JSON.parse(await readFile(join(dir, 'results', files[0]!), 'utf8')) as { partial: boolean; stoppedIn: string }
    assert.equal(saved.partial, true)
    assert.equal(saved.stoppedIn, 'plain')
  })

  test('two runs with the same label in the same second: two files, neither overwritten', async () => {
    const s = await server({ delayMs: 1 })
    const dir = await tempDir()
    const args = [s.url, '--mode', 'plain', '--warmup', '0', '-n', '5', '-c', '1', '--out-dir', 'results', '--label', 'same', '-o', 'json']
    const runs = await Promise.all([runCli(args, { cwd: dir }), runCli(args, { cwd: dir })])
    for (const r of runs) assert.equal(r.code, 0, r.stderr)
    const files = (await readdir(join(dir, 'results'))).sort()
    assert.equal(files.filter((f) => f.endsWith('.json')).length, 2, `${files}`)
    assert.equal(files.filter((f) => f.endsWith('.csv')).length, 2, `${files}`)
    assert.ok(
      files.every((f) => !f.startsWith('.')),
      'no temp files',
    )
    const saved = await Promise.all(files.filter((f) => f.endsWith('.json')).map((f) => readFile(join(dir, 'results', f), 'utf8')))
    assert.deepEqual(new Set(saved), new Set(runs.map((r) => r.stdout)), 'each run kept its own file')
    // And forced into the same second: the same result saved twice gets a second name.
    const result = makeRunResult()
    const first = await saveResult(result, join(dir, 'forced'))
    const before = await readFile(first.json, 'utf8')
    const second = await saveResult(result, join(dir, 'forced'))
    assert.notEqual(second.json, first.json)
    assert.equal(await readFile(first.json, 'utf8'), before, 'the first file is untouched')
  })
})
