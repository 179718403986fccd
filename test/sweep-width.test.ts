/**
 * Issue 44 item 3: a sweep's text fits the terminal's width (COLUMNS, 80
 * when nothing says): its frontier table, one lane a line when the table is
 * wider, and its lines on stderr.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { textWidth } from '../src/core/wrap.js'
import type { Target } from '../src/sim/target.js'
import { runMain } from './helpers/main-cases.js'
import { startFastTarget, type FastTarget } from './helpers/sim.js'

let dir: string
let fast: FastTarget
let target: Target

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hedgebench-sweep-width-'))
  fast = await startFastTarget(0.03)
  target = fast.target
})

after(async () => {
  await fast?.close()
  await rm(dir, { recursive: true, force: true })
})

for (const columns of [120, 80]) {
  test(`at COLUMNS=${columns}: a sweep's text and its stderr lines fit`, async () => {
    const r = await runMain(
      ['sweep', ...target.urls, '--hedge-delay', '5ms,20ms', '-n', '150', '-c', '3', '--warmup', '50', '--seed', '1', '--out-dir', join(dir, String(columns))],
      { env: { COLUMNS: String(columns) } },
    )
    assert.equal(r.code, 0, r.stderr)
    assert.match(r.stdout, /Hedging sweep: 2 settings/)
    assert.match(r.stdout, /^(\* )?5\.00 ms fixed: requests 150, p50 /m, 'the table is wider than either: one lane a line')
    for (const [what, text] of [
      ['stdout', r.stdout],
      ['stderr', r.stderr],
    ] as const) {
      assert.deepEqual(
        text.split('\n').filter((l) => textWidth(l) > columns),
        [],
        `${what}: lines longer than ${columns}`,
      )
    }
  })
}
