/**
 * Issue 44 item 3: every line of text output fits the terminal's width
 * (COLUMNS, 80 when nothing says): the run's report, `report`, `compare`
 * and the warnings on stderr, at 120 and at 80 columns. Prose is filled
 * with a hanging indent; tables are laid out narrower by their renderers.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_COLUMNS, streamColumns, textWidth, wrapText } from '../src/core/wrap.js'
import type { Target } from '../src/sim/target.js'
import { runMain } from './helpers/main-cases.js'
import { startFastTarget, type FastTarget } from './helpers/sim.js'

test('prose is filled with a hanging indent, a label keeps its value column, a table row is left whole', () => {
  const prose = `  ! ${'word '.repeat(30).trim()}`
  const lines = wrapText(prose, 40).split('\n')
  assert.ok(lines.length > 1)
  assert.ok(lines.every((l) => textWidth(l) <= 40))
  assert.ok(lines.slice(1).every((l) => l.startsWith('    word')))
  const labelled = wrapText(`  Delay:       ${'x '.repeat(30).trim()}`, 40).split('\n')
  assert.ok(labelled.slice(1).every((l) => l.startsWith(`${' '.repeat(15)}x`)))
  const row = `  url  ${'1  '.repeat(20)}`
  assert.equal(wrapText(row, 40), row)
  // Colours take no column.
  assert.equal(textWidth('\u001b[33mWARNING\u001b[0m'), 7)
})

test("the columns: the terminal's, else COLUMNS, else 80", () => {
  assert.equal(streamColumns({ COLUMNS: '120' }, { isTTY: true, columns: 100 }), 100)
  assert.equal(streamColumns({ COLUMNS: '120' }, {}), 120)
  assert.equal(streamColumns({}, {}), DEFAULT_COLUMNS)
  assert.equal(streamColumns({ COLUMNS: 'wide' }, {}), 80)
})

let dir: string
let fast: FastTarget
let target: Target

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hedgebench-wrap-width-'))
  fast = await startFastTarget(0.03)
  target = fast.target
})

after(async () => {
  await fast?.close()
  await rm(dir, { recursive: true, force: true })
})

function assertFits(columns: number, what: string, text: string): void {
  const long = text.split('\n').filter((l) => textWidth(l) > columns)
  assert.deepEqual(long, [], `${what} at COLUMNS=${columns}: lines longer than ${columns}`)
}

for (const columns of [120, 80]) {
  test(`at COLUMNS=${columns}: a run's report, report, a compare of three runs and their stderr lines fit`, async () => {
    const env = { COLUMNS: String(columns) }
    const out = join(dir, `runs-${columns}`)
    for (let i = 0; i < 3; i++) {
      const r = await runMain([...target.urls, '-n', '150', '-c', '3', '--mode', 'both', '--warmup', '60', '--seed', String(i), '--out-dir', out], { env })
      assert.equal(r.code, 0, r.stderr)
      assert.match(r.stdout, /Replicas:/)
      assertFits(columns, 'run', r.stdout)
      assertFits(columns, 'run (stderr)', r.stderr)
    }
    const files = (await readdir(out)).filter((f) => f.endsWith('.json')).map((f) => join(out, f))
    assert.equal(files.length, 3)
    const report = await runMain(['report', files[0]!], { env })
    assert.equal(report.code, 0, report.stderr)
    assertFits(columns, 'report', report.stdout)
    // A gate too fine for 150 requests is "not checked" on stderr, a line per run naming its file.
    const compare = await runMain(['compare', ...files, '--fail-if', 'p99.99>+1%'], { env })
    assert.match(compare.stdout, /Comparing 3 runs against the first/)
    assert.match(compare.stderr, /not judged for/)
    assertFits(columns, 'compare', compare.stdout)
    assertFits(columns, 'compare (stderr)', compare.stderr)
  })
}
