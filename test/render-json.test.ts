import { test } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../src/core/errors.js'
import { parseResult, renderJson } from '../src/results/result-json.js'
import { makeHedgedRun, makeRunResult } from './helpers/result-fixture.js'

test('JSON renders and parses back equal, and re-renders byte for byte', () => {
  for (const result of [makeRunResult(), makeHedgedRun({ partial: true, stoppedIn: 'hedged', warnings: ['w'] })]) {
    const text = renderJson(result)
    const back = parseResult(text, 'x.json')
    assert.deepStrictEqual(back, result)
    assert.equal(renderJson(back), text)
  }
})

test('JSON keeps the key order the result was built with', () => {
  const text = renderJson(makeRunResult())
  assert.deepEqual(Object.keys(JSON.parse(text)), Object.keys(makeRunResult()))
  assert.ok(text.endsWith('}\n'))
})

function assertOneLineUsageError(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof UsageError, `expected UsageError, got ${String(err)}`)
    assert.ok(!err.message.includes('\n'), 'message must be one line')
    assert.match(err.message, pattern)
    return true
  })
}

test('text that is not JSON gives one line naming the file', () => {
  assertOneLineUsageError(() => parseResult('hello {', 'results/x.json'), /^results\/x\.json: not JSON \(.+\)$/)
  assertOneLineUsageError(() => parseResult('', 'results/x.json'), /^results\/x\.json: not JSON \(.+\)$/)
})

test('JSON with another schema is not a hedgebench result', () => {
  assertOneLineUsageError(() => parseResult('{"schema":"other@2"}', 'results/x.json'), /^results\/x\.json: not a hedgebench result \(schema "other@2"/)
  assertOneLineUsageError(() => parseResult('[1,2]', 'r.json'), /^r\.json: not a hedgebench result/)
  assertOneLineUsageError(() => parseResult('{}', 'r.json'), /^r\.json: not a hedgebench result \(schema null/)
})

test('a result with a broken phase names the bad field', () => {
  const broken = JSON.parse(renderJson(makeHedgedRun())) as { phases: { hedged: { latencyMs: Record<string, unknown> } } }
  broken.phases.hedged.latencyMs['p99.9'] = 'fast'
  assertOneLineUsageError(() => parseResult(JSON.stringify(broken), 'r.json'), /^r\.json: invalid result: phases\.hedged\.latencyMs\.p99\.9 must be a number$/)

  const noPhases = { ...makeRunResult(), phases: null }
  assertOneLineUsageError(() => parseResult(JSON.stringify(noPhases), 'r.json'), /"phases" is missing/)

  const unknownPhase = { ...makeRunResult(), phases: { turbo: makeRunResult().phases.plain } }
  assertOneLineUsageError(() => parseResult(JSON.stringify(unknownPhase), 'r.json'), /unknown phase "turbo"/)
})

test("a result saved as @1 is upgraded once when read: a merged phase's rate becomes its requests over its duration", () => {
  const merged = makeHedgedRun()
  const plain = merged.phases.plain!
  // @1 kept the sum of the shards' rates in rps and the union window's in window.rpsUnion.
  const v1 = {
    ...merged,
    schema: 'hedgebench/result@1',
    phases: { ...merged.phases, plain: { ...plain, rps: 1366, window: { overlapMs: 1000, unionMs: plain.durationMs, rpsUnion: 970.5 } } },
  }
  const back = parseResult(JSON.stringify(v1), 'old.json')
  assert.equal(back.schema, 'hedgebench/result@2')
  assert.equal(back.phases.plain!.rps, 970.5)
  assert.deepEqual(back.phases.plain!.window, { overlapMs: 1000, unionMs: plain.durationMs })
  // A one-process @1 result reads as it was saved, but for its version.
  const single = parseResult(JSON.stringify({ ...makeHedgedRun(), schema: 'hedgebench/result@1' }), 'one.json')
  assert.deepStrictEqual(single, makeHedgedRun())
})

test('a result saved as @1 before ejection, the saturation gate and tied requests existed reads them as off, so renderers need not guess', () => {
  const old = JSON.parse(renderJson(makeHedgedRun())) as {
    schema: string
    config: Record<string, unknown> & { hedge: Record<string, unknown> }
    phases: Record<string, { hedging: Record<string, unknown>; generator: Record<string, unknown> }>
  }
  old.schema = 'hedgebench/result@1'
  delete old.config.eject
  delete old.config.saturation
  delete old.config.hedge.tied
  delete old.phases.hedged.hedging.tied
  delete old.phases.hedged.hedging.suppressed
  delete old.phases.plain.generator.cpuJudged
  const back = parseResult(JSON.stringify(old), 'old.json')
  assert.equal(back.config.eject, null)
  assert.equal(back.config.saturation, null)
  assert.equal(back.config.hedge.tied, false)
  assert.equal(back.phases.hedged!.hedging!.tied, false)
  assert.deepEqual(back.phases.hedged!.hedging!.suppressed, { overload: 0, errorRate: 0, targetBusy: 0, pushback: 0 })
  assert.equal(back.phases.plain!.generator.cpuJudged, true, 'judged, as every CPU share then was')
  // Saved before pushback was a reason: the other reasons kept, pushback 0.
  old.phases.hedged.hedging.suppressed = { overload: 3, errorRate: 1, targetBusy: 2 }
  assert.deepEqual(parseResult(JSON.stringify(old), 'old.json').phases.hedged!.hedging!.suppressed, { overload: 3, errorRate: 1, targetBusy: 2, pushback: 0 })
})
