/**
 * --shard and --start-at: the exact split, JOB_COMPLETION_INDEX, the
 * agreed start (waited for, interruptible, lateness recorded), and bad
 * values refused with one line and exit 2.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../src/core/errors.js'
import { parseShard } from '../src/run/shard.js'
import { rateShareOf, shareOf } from '../src/results/shard-share.js'
import { parseStartAt, waitUntil } from '../src/run/start-at.js'
import { run } from '../src/run/run.js'
import type { RequestRecord } from '../src/results/request-record.js'
import { stderrLines } from './helpers/cli.js'
import { runMain } from './helpers/main-cases.js'
import { startServer } from './helpers/servers.js'

test('shares add up to the total exactly and differ by at most one; the first total mod N shards get the extra one', () => {
  for (let count = 1; count <= 9; count++) {
    for (let total = 0; total <= 200; total++) {
      const shares = [...Array(count).keys()].map((index) => shareOf(total, { index, count }))
      assert.equal(
        shares.reduce((a, b) => a + b, 0),
        total,
        `${total} over ${count}`,
      )
      assert.ok(Math.max(...shares) - Math.min(...shares) <= 1)
      assert.deepEqual(
        shares,
        [...shares].sort((a, b) => b - a),
        'the larger shares come first',
      )
    }
  }
  const rates = [0, 1, 2, 3].map((index) => rateShareOf(10.5, { index, count: 4 }))
  assert.ok(Math.abs(rates.reduce((a, b) => a + b, 0) - 10.5) < 1e-9, `rate shares ${rates.join(', ')}`)
})

test('--shard I/N and auto/N (from JOB_COMPLETION_INDEX); bad values are usage errors', () => {
  assert.deepEqual(parseShard('2/5'), { index: 2, count: 5 })
  assert.deepEqual(parseShard('auto/8', { JOB_COMPLETION_INDEX: '7' }), { index: 7, count: 8 })
  assert.throws(() => parseShard('auto/8', {}), /JOB_COMPLETION_INDEX is not set/)
  assert.throws(() => parseShard('auto/8', { JOB_COMPLETION_INDEX: '8' }), /0-based: 0 to 7/)
  assert.throws(() => parseShard('5/5'), UsageError)
  assert.throws(() => parseShard('1/0'), UsageError)
  assert.throws(() => parseShard('one/two'), UsageError)
})

test('--start-at: RFC 3339 with a zone, or +30s rounded up to a whole second; no zone, nonsense, > 24 h ahead or > 24 h past refused', () => {
  const now = Date.parse('2026-12-01T07:00:00.250Z')
  assert.equal(parseStartAt('2026-12-01T07:05:00Z', now), Date.parse('2026-12-01T07:05:00Z'))
  assert.equal(parseStartAt('2026-12-01T08:05:00.5+01:00', now), Date.parse('2026-12-01T07:05:00.500Z'))
  assert.equal(parseStartAt('+30s', now), Date.parse('2026-12-01T07:00:31Z'))
  assert.throws(() => parseStartAt('2026-12-01T07:05:00', now), /with a zone/)
  assert.throws(() => parseStartAt('tomorrow', now), UsageError)
  assert.throws(() => parseStartAt('2026-12-03T07:05:00Z', now), /more than 24 h ahead/)
  // A little in the past is a late start (the run goes, marked late); a day in the past is a stale config.
  assert.equal(parseStartAt('2026-12-01T06:00:00Z', now), Date.parse('2026-12-01T06:00:00Z'))
  assert.throws(() => parseStartAt('2026-11-30T06:00:00Z', now), /more than 24 h in the past \(check the date: was run\.json edited for this run\?\)/)
})

test('the wait ends at the agreed time on the given clock, or at once when interrupted', async () => {
  const t0 = Date.now()
  assert.equal(await waitUntil(t0 + 150, () => Date.now()), true)
  assert.ok(Date.now() >= t0 + 150)
  const ac = new AbortController()
  setTimeout(() => ac.abort(), 50)
  const t1 = Date.now()
  assert.equal(await waitUntil(t1 + 60_000, () => Date.now(), ac.signal), false)
  assert.ok(Date.now() - t1 < 5000, 'interrupted long before the agreed time')
})

test('run(): the first phase starts at --start-at, lateness recorded; a start already past is marked late; an interrupted wait measures nothing', async (t) => {
  const server = await startServer({ delayMs: 1 })
  t.after(() => server.close())
  const opts = { urls: [server.url], requests: 20, concurrency: 2, mode: 'plain' as const, warmup: 0 }
  const startAt = Date.now() + 300
  const r = await run({ ...opts, startAt, shard: { index: 0, count: 2 } })
  assert.equal(r.phases.plain!.requests, 10)
  assert.ok(r.phases.plain!.wall!.startMs >= startAt, 'not before the agreed time')
  assert.equal(r.start!.lateMs, Math.round((r.phases.plain!.wall!.startMs - startAt) * 10) / 10)
  assert.equal(r.start!.scheduledAt, new Date(startAt).toISOString())
  assert.equal(r.start!.late, r.start!.lateMs > 100)
  const late = await run({ ...opts, startAt: Date.now() - 5000, maxStartLatenessMs: 50 })
  assert.equal(late.start!.late, true)
  assert.ok(late.start!.lateMs >= 5000)
  assert.ok(
    late.warnings.some((w) => /after --start-at/.test(w)),
    late.warnings.join('\n'),
  )
  const ac = new AbortController()
  setTimeout(() => ac.abort(), 100)
  const before = server.received
  const stopped = await run({ ...opts, startAt: Date.now() + 60_000, signal: ac.signal })
  assert.equal(stopped.partial, true)
  assert.equal(Object.keys(stopped.phases).length, 0)
  assert.equal(server.received, before, 'nothing sent after an interrupted wait')
})

test('CLI: bad --shard, --start-at or -n too small for the shards: one line, exit 2', async () => {
  for (const [args, pattern] of [
    [['--shard', '3/3'], /invalid --shard 3\/3/],
    [['--start-at', 'soon'], /invalid --start-at "soon"/],
    [['-n', '2', '--shard', '2/3'], /-n 2 split over 3 shards leaves shard 2 nothing to do/],
    [['--run-id', 'a b'], /invalid --run-id/],
  ] as const) {
    // One Node process, not the launcher's two: this is main()'s validation (see bad-input.test.ts).
    const r = await runMain(['http://127.0.0.1:9/', '--no-save', ...args])
    assert.equal(r.code, 2, r.stderr)
    assert.equal(stderrLines(r).length, 1, r.stderr)
    assert.match(r.stderr, pattern)
  }
})

test('shards interleave as one process would have sent: shard i of n at -q R starts its schedule i / R s later and its round-robin at replica i', async (t) => {
  const [a, b] = [await startServer({ delayMs: 1 }), await startServer({ delayMs: 1 })]
  t.after(() => Promise.all([a.close(), b.close()]))
  const shardRun = async (index: number): Promise<{ rows: RequestRecord[]; phaseStartMs: number }> => {
    const rows: RequestRecord[] = []
    const requestSink = { write: (r: RequestRecord) => rows.push(r) > 0, waitForDrain: async () => {} }
    const r = await run({ urls: [a.url, b.url], requests: 8, rate: 50, concurrency: 2, mode: 'plain', warmup: 0, shard: { index, count: 2 }, requestSink })
    return { rows: rows.sort((x, y) => x.seq - y.seq), phaseStartMs: r.phases.plain!.startOffsetMs }
  }
  const shards = [await shardRun(0), await shardRun(1)]
  // -q 50 over 2 shards: each sends every 40 ms; one process would have sent every 20 ms, so shard 1's schedule
  // starts 20 ms into its window. Intended starts are the schedule's, not the sends', and the phase starts when
  // its window does: exact whatever the load (to the results' microsecond rounding).
  for (const [index, { rows, phaseStartMs }] of shards.entries()) {
    const first = rows[0]!.startMs - phaseStartMs
    assert.ok(Math.abs(first - index * 20) < 0.01, `shard ${index}: schedule starts ${first} ms into the window`)
    assert.ok(Math.abs(rows[1]!.startMs - rows[0]!.startMs - 40) < 0.01, `shard ${index}: ${rows[1]!.startMs - rows[0]!.startMs} ms between sends`)
  }
  const origin = (u: string): string => new URL(u).origin
  assert.deepEqual(
    shards.map((s) => origin(s.rows[0]!.replica)),
    [origin(a.url), origin(b.url)],
    'shard 0 starts at replica 0, shard 1 at replica 1',
  )
})
