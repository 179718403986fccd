/**
 * Per-call data in a mix (issue 48): a gRPC target's message holding ghz's
 * template actions ({{.RequestNumber}}, {{.UUID}}, {{randomString N}}) is
 * rendered per logical call, as -d's is: each target numbers its own calls
 * from 0 across the run's phases, every attempt of one call (its hedge too)
 * sends the same bytes, the run's seed replays them, and a target without an
 * action sends its message encoded once. Against real grpc-js servers on
 * 127.0.0.1 (test/helpers/grpc-server.ts), which keep each call's bytes.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import protobuf from 'protobufjs'
import type { RunResult } from '../src/results/run-result.js'
import { SHOP_PROTO, startGrpcServer, type GrpcTestServer, type SeenCall } from './helpers/grpc-server.js'
import { runMain } from './helpers/main-cases.js'

/** Get answers after 100 ms, so that a 5 ms hedge delay hedges every call of it; Put and Reserve after 10 ms. */
const SERVER_MS: Record<string, number> = { Get: 100, Put: 10, Reserve: 10 }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const Req = protobuf.loadSync(SHOP_PROTO).lookupType('shop.Req')
const servers: GrpcTestServer[] = []
const dir = mkdtempSync(join(tmpdir(), 'hedgebench-targets-template-'))

before(async () => {
  for (let i = 0; i < 2; i++) servers.push(await startGrpcServer((call) => ({ delayMs: SERVER_MS[call.method] ?? 0 })))
})
after(() => {
  for (const s of servers) s.close()
  rmSync(dir, { recursive: true, force: true })
})

function file(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

interface Sent {
  /** The call's number as the server decoded it (proto3 leaves a 0 out: 0). */
  id: number
  note: string
  previousAttempts: number
  hex: string
}

/** What the servers received of each method during `fn`, decoded. */
async function receivedDuring(fn: () => Promise<RunResult>): Promise<{ result: RunResult; by: Record<string, Sent[]> }> {
  const from = servers.map((s) => s.calls.length)
  const result = await fn()
  const by: Record<string, Sent[]> = {}
  const decoded = (c: SeenCall): Sent => {
    const m = Req.toObject(Req.decode(c.request), { longs: Number, defaults: true }) as { id: number; note: string }
    return { id: m.id, note: m.note, previousAttempts: c.previousAttempts, hex: c.request.toString('hex') }
  }
  for (const [i, s] of servers.entries()) for (const c of s.calls.slice(from[i])) (by[c.method] ??= []).push(decoded(c))
  return { result, by }
}

/** A run of the mix through main(): two attempts at most, no budget (every hedge the delay fires is sent); its JSON result. */
async function runMix(args: string[]): Promise<RunResult> {
  const urls = servers.map((s) => s.url)
  const r = await runMain([...urls, '--proto', SHOP_PROTO, ...args, '--max-attempts', '2', '--hedge-budget', 'off', '--no-save', '-o', 'json'], {
    timeoutMs: 100_000,
  })
  assert.equal(r.code, 0, r.stderr)
  return JSON.parse(r.stdout) as RunResult
}

/** The target's logical calls over every phase of the run (the warm-up's included: they are numbered too). */
function callsOf(result: RunResult, call: string): number {
  const target = result.targets!.find((t) => t.name === call)!
  return Object.values(target.phases).reduce((sum, p) => sum + (p?.requests ?? 0), 0)
}

/** Every hedge carries its original's bytes exactly: one distinct message per logical call, whatever its attempts. */
function assertHedgesSendTheirOriginal(sent: Sent[], what: string): void {
  const originals = new Map(sent.filter((c) => c.previousAttempts === 0).map((c) => [c.id, c.hex]))
  for (const h of sent.filter((c) => c.previousAttempts > 0)) assert.equal(h.hex, originals.get(h.id), `${what}: the hedge of call ${h.id} sends its bytes`)
}

const MIX = [
  'CALL shop.Inventory/Get',
  '# hedge-delay: 5ms',
  // An action where JSON has no place for one: the text is rendered first, then read as JSON, as -d's is.
  '{"id": {{.RequestNumber}}, "note": "{{.UUID}}"}',
  '',
  'CALL shop.Inventory/Put',
  '# hedge-delay: 5ms',
  '@put.json',
  '',
  '# no action: encoded once, the same bytes on every call',
  'CALL shop.Inventory/Reserve',
  '{"id": 9, "note": "r"}',
  '',
].join('\n')

test('a target message with template actions is rendered per call: its own numbering, distinct UUIDs, one message for every attempt of a call', {
  timeout: 120_000,
}, async () => {
  file('put.json', '{"id": "{{.RequestNumber}}", "note": "p-{{randomString 12}}"}\n')
  const mix = file('mix.txt', MIX)
  const args = ['--targets', mix, '-n', '24', '-c', '2', '--warmup', '9', '--mode', 'hedged', '--seed', '4']
  const { result, by } = await receivedDuring(() => runMix(args))
  for (const call of ['Get', 'Put']) {
    const sent = by[call]!
    const calls = callsOf(result, `shop.Inventory/${call}`)
    const originals = sent.filter((c) => c.previousAttempts === 0)
    assert.deepEqual(
      originals.map((c) => c.id).sort((a, b) => a - b),
      [...Array(calls).keys()],
      `${call}: its calls numbered 0..${calls - 1} across the warm-up and the hedged phase, once each`,
    )
    assert.equal(new Set(originals.map((c) => c.note)).size, calls, `${call}: a value of its own per call`)
    assertHedgesSendTheirOriginal(sent, call)
  }
  assert.ok(
    by.Get!.every((c) => UUID.test(c.note)),
    'Get: version 4 UUIDs',
  )
  assert.ok(
    by.Put!.every((c) => /^p-[A-Za-z0-9]{12}$/.test(c.note)),
    'Put: 12 letters and digits',
  )
  // Get's server holds every call 100 ms: each was hedged at 5 ms, both attempts with the one message.
  const getHedges = by.Get!.filter((c) => c.previousAttempts > 0)
  assert.ok(getHedges.length > 0, 'Get was hedged')
  // Reserve has no action: one message, encoded once.
  assert.deepEqual(new Set(by.Reserve!.map((c) => `${c.id} ${c.note}`)), new Set(['9 r']))
  // The run's seed replays every target's messages.
  const again = await receivedDuring(() => runMix(args))
  const messages = (b: Record<string, Sent[]>, call: string) => new Map(b[call]!.map((c) => [c.id, c.hex]))
  for (const call of ['Get', 'Put']) assert.deepEqual(messages(again.by, call), messages(by, call), `${call}: the same seed, the same messages`)
})

test('--workers 2: each thread numbers a target calls apart, no number or UUID sent twice; JSON lines render data and dataFile', {
  timeout: 120_000,
}, async () => {
  file('put-data.json', '{"id": {{.RequestNumber}}, "note": "{{.UUID}}"}\n')
  const mix = file(
    'workers.jsonl',
    [
      '{"call": "shop.Inventory/Get", "data": {"id": "{{.RequestNumber}}", "note": "{{.UUID}}"}, "hedgeDelay": 5}',
      '{"call": "shop.Inventory/Put", "dataFile": "put-data.json", "weight": 2}',
    ].join('\n'),
  )
  const { result, by } = await receivedDuring(() => runMix(['--targets', mix, '-n', '24', '-c', '4', '--warmup', '8', '--workers', '2', '--seed', '6']))
  for (const call of ['Get', 'Put']) {
    const sent = by[call]!
    const calls = callsOf(result, `shop.Inventory/${call}`)
    const originals = sent.filter((c) => c.previousAttempts === 0)
    assert.equal(originals.length, calls, `${call}: every logical call reached a server once as an original`)
    assert.equal(new Set(originals.map((c) => c.id)).size, calls, `${call}: no number sent twice`)
    assert.equal(new Set(originals.map((c) => c.note)).size, calls, `${call}: no UUID sent twice`)
    assert.ok(originals.every((c) => UUID.test(c.note)))
    assertHedgesSendTheirOriginal(sent, call)
  }
})
