/**
 * The ora spinner of the unmeasured waits (cli/spinner.ts): drawn only on a
 * terminal of known width, never in a pipe, a file, TERM=dumb or at 0
 * columns (where a spinner once looped forever), and stopped for good when
 * a measured phase begins (its redraw timer would take event-loop time from
 * the requests being timed).
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { spinnerAllowed, startWaitSpinner } from '../src/cli/spinner.js'
import { runCli } from './helpers/cli.js'
import { startServer, type CountingServer } from './helpers/servers.js'

const servers: CountingServer[] = []
after(() => Promise.all(servers.map((s) => s.close())))

/** A stream that records what was written, with the terminal calls ora makes. */
class Screen extends Writable {
  text = ''
  constructor(
    public isTTY: boolean,
    public columns: number,
  ) {
    super()
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.text += chunk.toString()
    done()
  }
  cursorTo(): boolean {
    return true
  }
  moveCursor(): boolean {
    return true
  }
  clearLine(): boolean {
    return true
  }
}
const asStream = (s: Screen) => s as unknown as NodeJS.WriteStream

test('the spinner is allowed on a terminal of known width only', () => {
  assert.equal(spinnerAllowed(asStream(new Screen(true, 80)), {}), true)
  assert.equal(spinnerAllowed(asStream(new Screen(false, 80)), {}), false, 'a pipe')
  assert.equal(spinnerAllowed(asStream(new Screen(true, 0)), {}), false, 'a 0-column terminal')
  assert.equal(spinnerAllowed(asStream(new Screen(true, 80)), { TERM: 'dumb' }), false, 'TERM=dumb')
})

test('a pipe and a 0-column terminal get nothing written, not even a line', async () => {
  for (const screen of [new Screen(false, 80), new Screen(true, 0)]) {
    const spinner = await startWaitSpinner(asStream(screen))
    spinner.show('check')
    spinner.show('start')
    await sleep(250)
    spinner.show(null)
    assert.equal(screen.text, '', `isTTY ${screen.isTTY}, ${screen.columns} columns`)
  }
})

test('on a terminal it shows what is waited for, and once stopped it draws nothing more', async () => {
  const screen = new Screen(true, 80)
  const spinner = await startWaitSpinner(asStream(screen))
  spinner.show('start')
  await sleep(250)
  assert.match(screen.text, /waiting for the agreed start \(--start-at\)/)
  spinner.show('save')
  await sleep(250)
  assert.match(screen.text, /saving the results/)
  spinner.show('render')
  await sleep(250)
  assert.match(screen.text, /writing the HTML report/)
  spinner.show(null)
  const drawn = screen.text.length
  await sleep(300)
  assert.equal(screen.text.length, drawn, 'no redraw after stop: the timer is gone before a measured phase')
})

test('a run whose stderr is a pipe gets no spinner, through the check, the --start-at wait, saving and the HTML report', async (t) => {
  const s = await startServer()
  servers.push(s)
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-spinner-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  const args = [s.url, '-n', '5', '-c', '1', '--warmup', '0', '--mode', 'plain', '--start-at', '+1s', '--out-dir', dir, '--html', join(dir, 'r.html')]
  const r = await runCli(args, { timeoutMs: 40_000 })
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stderr, /^saved /m, 'it saved')
  assert.ok(existsSync(join(dir, 'r.html')), 'it wrote the HTML report')
  assert.doesNotMatch(
    r.stderr,
    /[\u2800-\u28ff]|checking the targets|waiting for the agreed start|saving the results|writing the HTML/,
    'no spinner frames or text in a pipe',
  )
})

test('run() reports its unmeasured waits in order, and ends them before the first measured request', async () => {
  const s = await startServer()
  servers.push(s)
  const { run } = await import('../src/run/run.js')
  const events: string[] = []
  let receivedAtStop = -1
  await run({
    urls: [s.url],
    durationMs: 1000,
    concurrency: 1,
    warmup: 0,
    mode: 'plain',
    startAt: Date.now() + 1000,
    onWait: (wait) => {
      events.push(`wait ${wait}`)
      if (wait === null) receivedAtStop = s.received
    },
    onProgress: () => {
      if (events.at(-1) !== 'progress') events.push('progress')
    },
  })
  // The spinner's redraw timer must be gone before the measured phase: null comes first, and no wait after it.
  assert.deepEqual(events, ['wait check', 'wait start', 'wait null', 'progress'])
  const measured = s.received - receivedAtStop
  assert.ok(measured > 0 && receivedAtStop <= 1, `${receivedAtStop} requests (the pre-run check) before the stop, ${measured} after`)
})
