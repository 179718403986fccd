/**
 * The ora spinner of the unmeasured waits (cli/spinner.ts): drawn only on a
 * terminal of known width, never in a pipe, a file, TERM=dumb or at 0
 * columns (where a spinner once looped forever), and stopped for good when
 * a measured phase begins (its redraw timer would take event-loop time from
 * the requests being timed).
 */
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
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
  spinner.show(null)
  const drawn = screen.text.length
  await sleep(300)
  assert.equal(screen.text.length, drawn, 'no redraw after stop: the timer is gone before a measured phase')
})

test('a run whose stderr is a pipe gets no spinner, through the check, the --start-at wait and saving', async () => {
  const s = await startServer()
  servers.push(s)
  const r = await runCli([s.url, '-n', '5', '-c', '1', '--warmup', '0', '--mode', 'plain', '--start-at', '+1s', '--no-save'], { timeoutMs: 40_000 })
  assert.equal(r.code, 0, r.stderr)
  assert.doesNotMatch(r.stderr, /[\u2800-\u28ff]|checking the targets|waiting for the agreed start/, 'no spinner frames or text in a pipe')
})
