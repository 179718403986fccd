/**
 * A gRPC run's transport failures in gRPC's words, in every renderer: a call
 * ended by --deadline is `DEADLINE_EXCEEDED (--deadline)`, one ended by -t
 * `DEADLINE_EXCEEDED (-t: ...)`, a refused connection `UNAVAILABLE:
 * connection refused`; an HTTP run keeps undici's names; a result saved
 * with the old names still reads. And a deadline given with --mode plain,
 * which ends plain calls too, is never said to have had no effect. Against
 * a scripted node:http2 gRPC server on 127.0.0.1 that answers late.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { run } from '../src/run/run.js'
import { parseResult, renderJson } from '../src/results/result-json.js'
import { renderCsvSummary } from '../src/report/csv.js'
import { renderText } from '../src/report/text.js'
import type { RunResult } from '../src/results/run-result.js'
import type { RunOptions } from '../src/run/run-options.js'
import { grpcErrorKind } from '../src/protocol/grpc-error-kind.js'
import { httpProtocol } from '../src/protocol/http.js'
import { DeadlineExceededError } from '../src/hedging/errors.js'
import { InterruptedError } from '../src/core/interruption.js'
import { timeoutError } from '../src/engine/request-timeout.js'
import { COMPRESSED_WITHOUT_ENCODING } from '../src/protocol/grpc-body-reader.js'
import { SHOP_PROTO } from './helpers/grpc-server.js'
import { startGrpcStub, type GrpcStub } from './helpers/h2-grpc-stub.js'
import { parseCsv } from './helpers/csv.js'

const CALLS = 4
/** Far above the deadline: every call ends by it, however slow the machine (the stub, unlike grpc-js, never answers a deadline itself). */
const STALL_MS = 3000
let server: GrpcStub
let deadline: RunResult
before(async () => {
  server = await startGrpcStub({ delayMs: STALL_MS })
  deadline = await plainRun({ hedge: { deadlineMs: 20, tied: true } })
})
after(() => server.close())

/** CALLS plain calls at once to the stub, with these options besides. */
function plainRun(extra: Partial<RunOptions>): Promise<RunResult> {
  return run({
    urls: server.urls,
    grpc: { proto: SHOP_PROTO, call: 'shop.Inventory/Get' },
    concurrency: CALLS,
    requests: CALLS,
    warmup: 0,
    mode: 'plain',
    ...extra,
  })
}

const DEADLINE = 'DEADLINE_EXCEEDED (--deadline)'

test('a gRPC call ended by --deadline is DEADLINE_EXCEEDED in the JSON, the text report and the CSV', () => {
  const plain = deadline.phases.plain!
  assert.deepEqual(plain.errorKinds, { [DEADLINE]: CALLS })
  assert.deepEqual(JSON.parse(renderJson(deadline)).phases.plain.errorKinds, { [DEADLINE]: CALLS })
  assert.match(renderText(deadline), new RegExp(`\\[${CALLS}\\] DEADLINE_EXCEEDED \\(--deadline\\)`))
  assert.doesNotMatch(renderText(deadline), /HEDGE_DEADLINE_EXCEEDED/)
  const [header, ...rows] = parseCsv(renderCsvSummary(deadline))
  const phase = rows.find((r) => r[header!.indexOf('scope')] === 'phase')!
  assert.match(phase[header!.indexOf('error_kinds')]!, /^DEADLINE_EXCEEDED \(--deadline\):4$/)
})

test('--deadline with --mode plain ended every call: not said to have had no effect (a hedging-only option beside it still is)', () => {
  const said = deadline.warnings.filter((w) => /had no effect/.test(w))
  assert.deepEqual(said, ['--mode plain sends no hedge: the hedging options given (tied) had no effect'])
})

test('-t on a gRPC call is DEADLINE_EXCEEDED too, named for -t', async () => {
  const result = await plainRun({ timeoutMs: 20 })
  assert.deepEqual(result.phases.plain!.errorKinds, { 'DEADLINE_EXCEEDED (-t: no response headers in time)': CALLS })
})

test('transport failures by the status a gRPC client ends the call with, the detail after it; HTTP keeps its names', () => {
  const coded = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code })
  const cases: Array<[Error, string]> = [
    [new DeadlineExceededError('deadline of 5 ms exceeded'), DEADLINE],
    [timeoutError('body'), 'DEADLINE_EXCEEDED (-t: the response stalled)'],
    [coded('ECONNREFUSED'), 'UNAVAILABLE: connection refused'],
    [coded('ECONNRESET'), 'UNAVAILABLE: connection reset'],
    [
      coded('ERR_HTTP2_STREAM_ERROR', 'Stream closed with error code NGHTTP2_ENHANCE_YOUR_CALM'),
      'RESOURCE_EXHAUSTED: stream reset by the server (RST_STREAM ENHANCE_YOUR_CALM)',
    ],
    [coded('ERR_HTTP2_STREAM_ERROR', 'Stream closed with error code NGHTTP2_CANCEL'), 'CANCELLED: stream reset by the server (RST_STREAM CANCEL)'],
    [
      coded('ERR_HTTP2_STREAM_ERROR', 'Stream closed with error code NGHTTP2_PROTOCOL_ERROR'),
      'INTERNAL: stream reset by the server (RST_STREAM PROTOCOL_ERROR)',
    ],
    [coded('h2: header list over 64 KiB'), 'INTERNAL: h2: header list over 64 KiB'],
    [coded('DEPTH_ZERO_SELF_SIGNED_CERT'), 'UNAVAILABLE: DEPTH_ZERO_SELF_SIGNED_CERT'],
    // Already a status (a message the client refused), the generator's own failures and the interruption: as they are.
    [coded(COMPRESSED_WITHOUT_ENCODING), COMPRESSED_WITHOUT_ENCODING],
    [coded('EMFILE'), 'EMFILE'],
    [new InterruptedError(), 'HEDGEBENCH_INTERRUPTED'],
  ]
  for (const [err, kind] of cases) assert.equal(grpcErrorKind(err), kind)
  const http = httpProtocol(true)
  assert.equal(http.errorKind(new DeadlineExceededError('x')), 'HEDGE_DEADLINE_EXCEEDED')
  assert.equal(http.errorKind(timeoutError('headers')), 'UND_ERR_HEADERS_TIMEOUT')
})

test('a gRPC result saved with the old names (HEDGE_DEADLINE_EXCEEDED) still reads and renders', () => {
  const old = JSON.parse(renderJson(deadline))
  old.phases.plain.errorKinds = { HEDGE_DEADLINE_EXCEEDED: CALLS }
  const read = parseResult(JSON.stringify(old), 'old.json')
  assert.deepEqual(read.phases.plain!.errorKinds, { HEDGE_DEADLINE_EXCEEDED: CALLS })
  assert.match(renderText(read), /\[4\] HEDGE_DEADLINE_EXCEEDED/)
})
