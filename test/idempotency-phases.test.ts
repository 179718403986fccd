/**
 * --idempotency-key keys every logical request of every phase (warm-up,
 * plain, hedged), not only the hedged one: a server that requires the
 * header must not reject the warm-up, and the plain and hedged phases must
 * send the same requests to be comparable. Copies of one request share its
 * key. Counted on a real server on 127.0.0.1, through the CLI.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { RunResult } from '../src/results/run-result.js'
import { runMain } from './helpers/main-cases.js'
import { startServer } from './helpers/servers.js'

test('-m POST --idempotency-key: every request of the warm-up, plain and hedged phases carries its own key', async (t) => {
  // Answers at once; the fixed 5 s hedge delay never fires, so every request is one copy.
  const server = await startServer({ record: ['idempotency-key'] })
  t.after(() => server.close())
  const run = await runMain([
    server.url,
    '-m',
    'POST',
    '-d',
    '{"a":1}',
    '--idempotency-key',
    '-n',
    '20',
    '--warmup',
    '10',
    '-c',
    '2',
    '--hedge-delay',
    '5s',
    '--no-save',
    '-o',
    'json',
  ])
  assert.equal(run.code, 0, run.stderr)
  const result = JSON.parse(run.stdout) as RunResult
  const sent = ['warmup', 'plain', 'hedged'].map((p) => result.phases[p as 'plain']!.attempts)
  assert.deepEqual(sent, [10, 20, 20], 'one attempt per request in each phase')
  assert.equal(server.received, 50)
  const keys = server.seen.map((h) => h['idempotency-key'])
  assert.equal(keys.filter((k) => k === undefined).length, 0, 'no request without a key')
  assert.equal(new Set(keys).size, 50, 'one key per logical request')
})
