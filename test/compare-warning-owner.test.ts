/**
 * Issue 44 item 3: a compare of several runs says the generator's event-loop
 * warning of the run whose generator ran late, by that run's file, never
 * of the run it was compared with.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PhaseResult } from '../src/results/run-result.js'
import { makeGenerator, makeHedgingStats, makePhase, makeRunResult } from './helpers/result-fixture.js'
import { runMainCases } from './helpers/main-cases.js'

// p99 18.6 ms against 43.6 ms: a 25 ms difference; a 3 ms late loop is 20 % of the 14.8 ms delay and 12 % of it.
const late = makeGenerator({ eventLoopDelayMs: { p50: 0.1, p99: 3, max: 9, samples: 500 } })
const hedging = makeHedgingStats({ hedgesSent: 140 })
const latencies = (every: number, ms: number): number[] => Array.from({ length: 4000 }, (_, i) => (i % every === every - 1 ? ms : 5 + (i % 10)))
const phase = (every: number, ms: number, overrides: Partial<PhaseResult> = {}): PhaseResult =>
  makePhase('hedged', latencies(every, ms), { attempts: 4140, hedging, ...overrides })

function compareWarnings(phases: PhaseResult[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'hedgebench-owner-'))
  try {
    const files = phases.map((p, i) => {
      const file = join(dir, `run-${'abc'[i]}.json`)
      writeFileSync(file, JSON.stringify(makeRunResult({ label: `run ${'abc'[i]}`, phases: { hedged: p } })))
      return file
    })
    const [r] = runMainCases([{ args: ['compare', ...files], cwd: dir }])
    assert.equal(r!.code, 0, r!.stderr)
    return r!.stdout.split('\n').filter((l) => l.includes('event loop ran late'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test('three runs, only the second late: its warning names the second file alone', () => {
  const lines = compareWarnings([phase(50, 18.6), phase(40, 43.6, { generator: late }), phase(40, 43.6)])
  assert.equal(lines.length, 1, lines.join('\n'))
  assert.match(lines[0]!, /^ {2}! run-b\.json: the generator's own event loop ran late \(p99 3\.00 ms\)/)
})

test('three runs, only the baseline late: its warning names the baseline once, not the runs compared with it', () => {
  const lines = compareWarnings([phase(50, 18.6, { generator: late }), phase(40, 43.6), phase(40, 43.6)])
  assert.equal(lines.length, 1, lines.join('\n'))
  assert.match(lines[0]!, /^ {2}! run-a\.json: the generator's own event loop ran late/)
})
