import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { UsageError } from '../src/core/errors.js'
import { REQUEST_LOG_COLUMNS, createRequestLog } from '../src/results/request-log.js'
import type { RequestRecord } from '../src/run/run-options.js'
import { parseCsv, parseCsvObjects } from './helpers/csv.js'

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hedgebench-log-'))
  t.after(() => rm(dir, { recursive: true, force: true }))
  return dir
}

function record(seq: number): RequestRecord {
  const hedged = seq % 50 === 0
  return {
    phase: seq < 1000 ? 'plain' : 'hedged',
    seq,
    startMs: seq * 0.25,
    latencyMs: 5 + (seq % 7),
    status: seq % 97 === 0 ? null : 200,
    error: seq % 97 === 0 ? 'ECONNRESET, "peer" hung up' : null,
    replica: `http://user:s3cret@127.0.0.1:808${seq % 3}/x`,
    attempts: hedged ? 2 : 1,
    winner: hedged ? 'hedge-1' : 'original',
    hedgeFiredMs: hedged ? 14.8 : null,
  }
}

test('thousands of rows under backpressure come back complete and in order', async (t) => {
  const path = join(await tempDir(t), 'requests.csv')
  const log = await createRequestLog(path)
  const total = 30_000
  let refusals = 0
  for (let seq = 0; seq < total; seq++) {
    if (!log.write(record(seq))) {
      refusals++
      await log.waitForDrain()
    }
  }
  await log.close()
  // The buffer really filled: the sink asked the writer to wait.
  assert.ok(refusals > 0, 'write() never returned false')

  const text = await readFile(path, 'utf8')
  assert.deepEqual(parseCsv(text)[0], [...REQUEST_LOG_COLUMNS])
  const rows = parseCsvObjects(text)
  assert.equal(rows.length, total)
  rows.forEach((row, i) => assert.equal(Number(row.seq), i))
  assert.deepEqual(rows[50], {
    phase: 'plain',
    seq: '50',
    start_ms: '12.500',
    latency_ms: '6.000',
    status: '200',
    error: '',
    replica: 'http://***@127.0.0.1:8082/x',
    attempts: '2',
    winner: 'hedge-1',
    hedge_fired_ms: '14.800',
  })
  assert.equal(rows[97]!.error, 'ECONNRESET, "peer" hung up')
  assert.equal(rows[97]!.status, '')
  assert.doesNotMatch(text, /s3cret/)
})

test('close() flushes every row even when the writer ignored backpressure (interrupted run)', async (t) => {
  const path = join(await tempDir(t), 'requests.csv')
  const log = await createRequestLog(path)
  for (let seq = 0; seq < 5000; seq++) log.write(record(seq))
  await log.close()
  await log.close() // idempotent
  assert.equal(log.write(record(5000)), true) // dropped after close, never throws
  assert.equal(parseCsvObjects(await readFile(path, 'utf8')).length, 5000)
})

test('waitForDrain() resolves at once when nothing is buffered', async (t) => {
  const log = await createRequestLog(join(await tempDir(t), 'r.csv'))
  // "At once": before the next turn of the event loop. Raced against a
  // setImmediate, so a waitForDrain() that waits for a 'drain' that never
  // comes fails here instead of hanging the suite (node:test has no default timeout).
  const first = await Promise.race([log.waitForDrain().then(() => 'drained'), new Promise((resolve) => setImmediate(() => resolve('still waiting')))])
  assert.equal(first, 'drained')
  await log.close()
})

test('an unwritable path is a one-line UsageError at creation', async (t) => {
  const file = join(await tempDir(t), 'plain-file')
  await writeFile(file, 'x')
  await assert.rejects(createRequestLog(join(file, 'sub', 'r.csv')), (err: unknown) => {
    assert.ok(err instanceof UsageError)
    assert.match(err.message, /^cannot write request log ".*plain-file\/sub\/r\.csv": ENOTDIR$/)
    return true
  })
})

test('two logs on one path never splice: the file holds one whole log, the last closed, mode 0600', async (t) => {
  const path = join(await tempDir(t), 'requests.csv')
  const first = await createRequestLog(path)
  const second = await createRequestLog(path)
  // Interleaved as two runs at once would write them; the second log's rows are fewer.
  for (let seq = 0; seq < 400; seq++) {
    first.write(record(seq))
    if (seq < 40) second.write(record(1000 + seq))
  }
  await first.close()
  assert.equal(parseCsvObjects(await readFile(path, 'utf8')).length, 400)
  await second.close()
  const text = await readFile(path, 'utf8')
  assert.equal(text.split('\n').filter((l) => l.startsWith('phase,')).length, 1)
  assert.deepEqual(
    parseCsvObjects(text).map((r) => Number(r.seq)),
    Array.from({ length: 40 }, (_, i) => 1000 + i),
  )
  assert.equal((await stat(path)).mode & 0o777, 0o600)
  assert.deepEqual(await readdir(dirname(path)), ['requests.csv'], 'no temporary file left')
})

test('a log that cannot be written (a full disk: /dev/full) rejects on close with one line; discard leaves nothing', {
  skip: process.platform !== 'linux',
}, async (t) => {
  const log = await createRequestLog('/dev/full')
  for (let seq = 0; seq < 2000; seq++) if (!log.write(record(seq))) await log.waitForDrain()
  await assert.rejects(log.close(), /^Error: request log "\/dev\/full" not written: ENOSPC$/)
  const dir = await tempDir(t)
  const discarded = await createRequestLog(join(dir, 'r.csv'))
  discarded.write(record(1))
  await discarded.discard()
  assert.deepEqual(await readdir(dir), [])
})
