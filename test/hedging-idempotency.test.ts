/**
 * Issue 3 acceptance, safety: a plain write is never hedged. POST is refused
 * in hedged mode without --idempotency-key (exit 2, one line, nothing sent);
 * with it, every copy of one logical request carries the same key and
 * different logical requests carry different keys (and the same body).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { run } from '../src/run/run.js'
import { runMain } from './helpers/main-cases.js'
import { startServer, type CountingServer } from './helpers/servers.js'

/** `hedgebench ARGS` through main() in this file's one driver process: the run and its reports are tested, not the process. */
const hedgebench = (args: string[]): ReturnType<typeof runMain> => runMain(args, { timeoutMs: 60_000 })

interface Seen {
  key: string | undefined
  hedge: string | undefined
  method: string
  body: string
}

/** Records key, hedge number, method and body of every request; answers after `ms`. */
async function recordingServer(t: { after: (fn: () => Promise<void>) => void }, ms: (n: number) => number, seen: Seen[]): Promise<CountingServer> {
  const server = await startServer({
    handle: (req, res, n) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        seen.push({
          key: req.headers['idempotency-key'] as string | undefined,
          hedge: req.headers['x-hedge-attempt'] as string | undefined,
          method: req.method!,
          body: Buffer.concat(chunks).toString(),
        })
        const timer = setTimeout(() => res.end('{"ok":true}'), ms(n))
        res.on('close', () => clearTimeout(timer))
      })
    },
  })
  t.after(() => server.close())
  return server
}

test('POST and PATCH are refused in hedged mode without --idempotency-key: exit 2, one line, nothing sent', async (t) => {
  const seen: Seen[] = []
  const server = await recordingServer(t, () => 1, seen)
  for (const method of ['POST', 'PATCH']) {
    const cli = await hedgebench([server.url, '-m', method, '-d', '{"a":1}', '-n', '10', '-c', '2', '--no-save'])
    assert.equal(cli.code, 2, cli.stderr)
    assert.equal(cli.stdout, '')
    const lines = cli.stderr.trim().split('\n')
    assert.equal(lines.length, 1, cli.stderr)
    assert.match(lines[0]!, new RegExp(`${method}.*--idempotency-key`))
  }
  assert.equal(server.received, 0)
  // The library refuses the same way.
  await assert.rejects(run({ urls: [server.url], method: 'POST', requests: 5, mode: 'hedged', hedge: { delay: 5 } }), {
    name: 'UsageError',
    message: /not idempotent/,
  })
  // Plain mode never hedges, so a POST is fine there.
  const plain = await hedgebench([server.url, '-m', 'POST', '-d', 'x', '-n', '5', '-c', '1', '--warmup', '0', '--mode', 'plain', '--no-save'])
  assert.equal(plain.code, 0, plain.stderr)
  assert.equal(server.received, 5)
})

test('with --idempotency-key every copy of a request carries its key, and every request its own', async (t) => {
  // Two replicas answering in 0-5 ms against a 2 ms delay and no budget: most requests send a hedge.
  const seen: Seen[] = []
  const servers = [await recordingServer(t, (n) => (n * 3) % 6, seen), await recordingServer(t, (n) => (n * 5) % 6, seen)]
  const n = 300
  const result = await run({
    urls: servers.map((s) => s.url),
    method: 'POST',
    body: Buffer.from('{"user":42}'),
    concurrency: 4,
    requests: n,
    warmup: 0,
    mode: 'hedged',
    seed: 61,
    hedge: { delay: 2, idempotencyKey: true, budgetPct: null as unknown as number },
  })
  const hedged = result.phases.hedged!
  assert.equal(hedged.ok, n)
  // Let the last aborted copies land.
  for (const until = Date.now() + 2000; seen.length < hedged.attempts && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10))
  assert.equal(seen.length, hedged.attempts)
  const byKey = new Map<string, Seen[]>()
  for (const s of seen) {
    assert.ok(s.key, 'every copy carries a key')
    assert.equal(s.method, 'POST')
    assert.equal(s.body, '{"user":42}', 'every copy carries the body')
    byKey.set(s.key, [...(byKey.get(s.key) ?? []), s])
  }
  // One key per logical request, none shared between requests.
  assert.equal(byKey.size, n)
  let multi = 0
  for (const copies of byKey.values()) {
    assert.ok(copies.length <= 2)
    // Copies of one request are the original (no header) and hedge 1, never two of the same.
    assert.equal(new Set(copies.map((c) => c.hedge ?? 'original')).size, copies.length)
    if (copies.length === 2) multi++
  }
  assert.ok(multi > 20, `requests with two copies on the wire: ${multi}`)
  assert.equal(multi, hedged.attempts - n + (n - byKey.size))
  // --unsafe-hedge is the explicit opt-out: POST hedges go out, with no key,
  // and the report warns about it. (Budget off: the 3-5 ms answers, about
  // half of them, all outlast the 2 ms delay.)
  const before = seen.length
  const unsafe = await run({
    urls: servers.map((s) => s.url),
    method: 'POST',
    body: Buffer.from('x'),
    concurrency: 2,
    requests: 20,
    warmup: 0,
    mode: 'hedged',
    seed: 62,
    hedge: { delay: 2, unsafeHedge: true, budgetPct: null as unknown as number },
  })
  assert.ok(
    unsafe.warnings.some((w) => /unsafe-hedge/.test(w)),
    unsafe.warnings.join('\n'),
  )
  const u = unsafe.phases.hedged!
  assert.ok(u.hedging!.hedgesSent > 0, 'POST hedges were sent')
  for (const until = Date.now() + 2000; seen.length - before < u.attempts && Date.now() < until; ) await new Promise((r) => setTimeout(r, 10))
  const copies = seen.slice(before)
  assert.equal(copies.length, u.attempts)
  assert.equal(copies.filter((c) => c.hedge !== undefined).length, u.hedging!.hedgesSent, 'the hedges reached the server')
  assert.ok(
    copies.every((c) => c.method === 'POST' && c.key === undefined),
    'no copy carries a key',
  )
})
