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
