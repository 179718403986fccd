/**
 * Framed results (run --frames → kubectl logs → merge --from-logs): lines
 * at most 8 KiB, reassembled in any order among other lines and prefixes,
 * and a cut, corrupt or incomplete result refused rather than misread.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { encodeFrames, FrameCollector, MAX_LINE_BYTES } from '../src/results/result-frames.js'
import { seededRandom } from '../src/core/random.js'
import { makeRunResult } from './helpers/result-fixture.js'

/** A result big enough for several frames: a long, incompressible-ish timeline. */
function bigResult(index: number) {
  const r = makeRunResult({ runId: 'run-7', shard: { index, count: 2 } })
  const next = seededRandom(index + 1)
  r.phases.plain!.timeline = Array.from({ length: 3000 }, (_, t) => ({
    t,
    requests: Math.floor(next() * 1e6),
    errors: 0,
    p50Ms: next() * 100,
    p99Ms: next() * 1000,
    hedges: 0,
    delayMs: null,
  }))
  return r
}

function shuffled<T>(xs: T[], seed: number): T[] {
  const next = seededRandom(seed)
  const out = [...xs]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

test('several frames per result, each line at most 8 KiB; shuffled, prefixed and mixed with other lines they reassemble exactly', () => {
  const results = [bigResult(0), bigResult(1)]
  const lines = results.flatMap((r, i) => encodeFrames(r).map((l) => `[pod/hedgebench-${i}-abcde/hedgebench] ${l}`))
  assert.ok(encodeFrames(results[0]!).length > 2, 'more than two frames')
  for (const l of encodeFrames(results[0]!)) assert.ok(Buffer.byteLength(l) + 1 <= MAX_LINE_BYTES, `line of ${l.length} bytes`)
  const collector = new FrameCollector()
  for (const l of shuffled([...lines, 'Summary:', '  Requests/sec: 12.0', lines[0]!], 3)) collector.add(l)
  const back = collector.results().sort((a, b) => a.shard!.index - b.shard!.index)
  assert.deepEqual(back, results)
})

test('a corrupt chunk, a cut line or a missing chunk is refused with a one-line error', () => {
  const lines = encodeFrames(bigResult(0))
  const corrupt = lines[1]!.slice(0, -10) + (lines[1]!.slice(-10, -9) === 'A' ? 'B' : 'A') + lines[1]!.slice(-9)
  assert.throws(() => new FrameCollector().add(corrupt), /chunk 2 of \d+ fails its checksum/)
  assert.throws(() => new FrameCollector().add(lines[0]!.slice(0, 200)), /chunk 1 of \d+ fails its checksum/, 'a line cut inside its data')
  assert.throws(() => new FrameCollector().add(lines[0]!.slice(0, 30)), /cut or garbled/, 'a line cut inside its header')
  const c = new FrameCollector()
  for (const l of lines.filter((_, i) => i !== 1)) c.add(l)
  assert.throws(() => c.results(), /run run-7 shard 0\/2: \d+ of \d+ frames \(missing chunk 2\): collect with kubectl logs --tail=-1/)
})
