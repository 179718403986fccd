/**
 * Replicas are copies of one service: URLs that differ in path or query are
 * refused before anything is sent (one line, exit 2), in a run and in a
 * sweep; host, port and scheme are what may differ.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { resolveOptions } from '../src/run/resolve-options.js'
import { runMainCases } from './helpers/main-cases.js'

const A = 'http://127.0.0.1:1'
const B = 'http://127.0.0.1:2'

test('replicas that differ only in host, port and scheme are accepted (an empty path is "/")', () => {
  const urls = [`${A}/users/42?v=1`, `${B.replace('127.0.0.1', 'localhost')}/users/42?v=1`]
  assert.deepEqual(resolveOptions({ urls }, 1).urls, urls)
  assert.equal(resolveOptions({ urls: [A, `${B}/`] }, 1).urls.length, 2)
  // One service over TLS at one replica and in clear at another.
  assert.equal(resolveOptions({ urls: [`${A}/a`, 'https://127.0.0.1:2/a'] }, 1).urls.length, 2)
})

const REFUSED: Array<[string[], string]> = [
  [[`${A}/a`, `${B}/b`], `replica URLs differ in path: "${A}/a" and "${B}/b"`],
  [[`${A}/a`, `${B}/a`, 'http://127.0.0.1:3/a/'], `replica URLs differ in path: "${A}/a" and "http://127.0.0.1:3/a/"`],
  [[`${A}/a?x=1`, `${B}/a?x=2`], `replica URLs differ in query: "${A}/a?x=1" and "${B}/a?x=2"`],
]

test('replica URLs that differ in path or query are refused with one line, exit 2, in a run and a sweep', () => {
  const lines = REFUSED.flatMap(([urls]) => [
    ['-n', '5', '--no-save', ...urls],
    ['sweep', '-n', '5', '--no-save', ...urls],
  ])
  const runs = runMainCases(lines.map((args) => ({ args, cwd: process.cwd() })))
  for (const [i, args] of lines.entries()) {
    const r = runs[i]!
    const expected = `hedgebench: ${REFUSED[Math.floor(i / 2)]![1]} (the replicas of one service differ only in host, port and scheme)\n`
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    assert.equal(r.stderr, expected, args.join(' '))
  }
})

test('grpc://h:1 and grpc://h:2/ are one path; gRPC beside HTTP keeps its own message', () => {
  assert.equal(
    resolveOptions(
      { urls: ['grpc://127.0.0.1:1', 'grpc://127.0.0.1:2/'], grpc: { call: 'hedgebench.sim.v1.Replica/Work', proto: 'proto/hedgebench-sim.proto' } },
      1,
    ).urls.length,
    2,
  )
  assert.throws(() => resolveOptions({ urls: ['grpc://127.0.0.1:1', `${B}/`] }, 1), /^UsageError: mix of grpc:\/\/ and http URLs/)
})
