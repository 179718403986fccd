/**
 * The client/server cross-check against a server that drops a stream reset
 * soon after it arrived, before any handler counts it (gRPC C-core does): the
 * client counts the attempts it cancelled within --cross-check-grace of
 * sending them (earlyCancels, per phase, kept by --workers), and a shortfall
 * within them is EXPLAINED in one line rather than called MISMATCH; with no
 * grace the same shortfall is a MISMATCH.
 *
 * Two replicas of a scripted node:http2 gRPC server, every copy sent at once
 * (--parallel): one answers at once, the other after a second and counts a
 * call only once its stream has been open GRACE_MS, so every copy it gets is
 * cancelled (when its twin answers, a few ms later) and never counted. The
 * grace is far above those few ms and far below the second: each copy falls
 * clearly on one side. Then grpcio (Debian's python3-grpcio), the real case.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { run } from '../src/run/run.js'
import { renderText } from '../src/report/text.js'
import { parseResult, renderJson } from '../src/results/result-json.js'
import { crossCheckVerdict } from '../src/report/server-check-verdict.js'
import type { RunResult } from '../src/results/run-result.js'
import { SHOP_PROTO } from './helpers/grpc-server.js'
import { startGrpcStub } from './helpers/h2-grpc-stub.js'

const N = 12
const GRACE_MS = 300

async function parallelRun(urls: string[], statsUrl: string, graceMs: number, workers = 1): Promise<RunResult> {
  return run({
    urls,
    grpc: { proto: SHOP_PROTO, call: 'shop.Inventory/Get' },
    concurrency: 2,
    requests: N,
    warmup: 0,
    mode: 'hedged',
    workers,
    hedge: { parallel: true, delay: 0, maxAttempts: 2, budgetPct: null as unknown as number },
    serverStatsUrl: statsUrl,
    crossCheckGraceMs: graceMs,
    eject: false,
    saturation: false,
  })
}

// The runs wait for the server's count (run/server-check.ts SETTLE_MS), which the dropped copies never complete: side by side.
describe('the cross-check against a server that drops early resets', { concurrency: true }, () => {
  for (const workers of [1, 2]) {
    test(`a shortfall within the cancels sent less than the grace before is EXPLAINED, in one line (--workers ${workers})`, async (t) => {
      const stub = await startGrpcStub({ delayMs: 0 }, { delayMs: 1000, countAfterMs: GRACE_MS })
      t.after(() => stub.close())
      const result = await parallelRun(stub.urls, stub.statsUrl, GRACE_MS, workers)
      const hedged = result.phases.hedged!
      const server = hedged.server!
      assert.equal(hedged.ok, N)
      // Every copy on the slow replica that reached the wire was cancelled early, and dropped by it uncounted.
      const slowCopies = stub.dropped[1]!
      assert.ok(slowCopies > 0)
      assert.equal(stub.received[1], 0)
      assert.deepEqual(hedged.earlyCancels, { withinMs: GRACE_MS, count: slowCopies })
      assert.deepEqual(server.earlyCancels, { withinMs: GRACE_MS, count: slowCopies })
      assert.equal(server.clientAttempts - server.received, slowCopies)
      assert.equal(server.match, false)
      assert.equal(crossCheckVerdict(server), 'EXPLAINED')
      const text = renderText(result)
      assert.ok(
        text.includes(
          `  server saw ${server.received} of ${server.clientAttempts} attempts; the ${slowCopies} missing are within the ${slowCopies} cancelled less than 300 ms after sending, which a server may drop before its handler\n`,
        ),
        text,
      )
      assert.doesNotMatch(text, /MISMATCH/)
      // Saved and read back, it says the same.
      assert.equal(renderText(parseResult(renderJson(result), 'saved.json')), text)
    })
  }

  test('with no grace the same shortfall is a MISMATCH', async (t) => {
    const stub = await startGrpcStub({ delayMs: 0 }, { delayMs: 1000, countAfterMs: GRACE_MS })
    t.after(() => stub.close())
    const result = await parallelRun(stub.urls, stub.statsUrl, 0)
    const server = result.phases.hedged!.server!
    assert.deepEqual(server.earlyCancels, { withinMs: 0, count: 0 })
    assert.ok(server.clientAttempts > server.received)
    assert.equal(crossCheckVerdict(server), 'MISMATCH')
    assert.match(renderText(result), new RegExp(`server received ${server.received} vs client attempts ${server.clientAttempts}: MISMATCH`))
  })

  test('--cross-check-grace below 0 is refused by name', async () => {
    await assert.rejects(parallelRun(['grpc://127.0.0.1:1'], 'http://127.0.0.1:1/stats', -1), /invalid --cross-check-grace -1 ms \(must be 0 or more\)/)
  })

  /**
   * A real gRPC C-core server (grpcio): a generic handler that counts the
   * calls it runs, served with the stats JSON on an HTTP port. The slow
   * replica's one worker thread is kept busy from the run's first read of the
   * stats (after the pre-run check) for BLOCK_S: its calls wait in grpcio's
   * queue, are cancelled there, and grpcio never runs their handler (it reads
   * the request first and finds the call cancelled), as it drops a call reset
   * ~0.4 ms after it was sent.
   */
  const GRPCIO_SERVER = `
import grpc, json, sys, threading, time
from concurrent import futures
from http.server import BaseHTTPRequestHandler, HTTPServer
totals = {"received": 0, "completed": 0, "cancelled": 0, "hedgeHeader": 0}
lock = threading.Lock()
def handler(delay):
    def call(request, context):
        if len(request) == 1 and request[0] == 0x07:
            context.abort(grpc.StatusCode.INTERNAL, "undecodable")
        with lock:
            totals["received"] += 1
        end = time.time() + delay
        while context.is_active() and time.time() < end:
            time.sleep(0.005)
        return b""
    return grpc.unary_unary_rpc_method_handler(call)
ports = []
servers = []
slow_pool = futures.ThreadPoolExecutor(max_workers=1)
for delay in (0.0, 1.0):
    s = grpc.server(slow_pool if delay else futures.ThreadPoolExecutor(max_workers=8))
    s.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("shop.Inventory", {"Get": handler(delay)}),))
    ports.append(s.add_insecure_port("127.0.0.1:0"))
    s.start()
    servers.append(s)
blocked = []
class Stats(BaseHTTPRequestHandler):
    def do_GET(self):
        if not blocked:
            blocked.append(slow_pool.submit(time.sleep, 4))
        with lock:
            body = json.dumps({"totals": totals}).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http = HTTPServer(("127.0.0.1", 0), Stats)
threading.Thread(target=http.serve_forever, daemon=True).start()
print(json.dumps({"ports": ports, "stats": http.server_address[1]}), flush=True)
sys.stdin.read()
`

  test('against grpcio (gRPC C-core), which drops a stream reset before its handler: never a MISMATCH it can explain', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'hedgebench-grpcio-'))
    const script = join(dir, 'server.py')
    writeFileSync(script, GRPCIO_SERVER)
    const child = spawn('/usr/bin/python3', [script], { stdio: ['pipe', 'pipe', 'inherit'] })
    t.after(() => {
      child.kill()
      rmSync(dir, { recursive: true, force: true })
    })
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('grpcio server did not start in 20 s')), 20_000)
      child.stdout!.once('data', (chunk: Buffer) => {
        clearTimeout(timer)
        resolve(chunk.toString())
      })
    })
    const { ports, stats } = JSON.parse(line) as { ports: number[]; stats: number }
    const result = await parallelRun(
      ports.map((p) => `grpc://127.0.0.1:${p}`),
      `http://127.0.0.1:${stats}/stats`,
      GRACE_MS,
    )
    const hedged = result.phases.hedged!
    const server = hedged.server!
    assert.equal(hedged.ok, N)
    // The client's count is exact: every copy on the slow replica that left was cancelled well within the grace.
    assert.equal(server.earlyCancels!.count, hedged.hedging!.cancelled)
    // What grpcio counted is its own (it drops the copies it had not begun when they were cancelled): never more than was
    // sent, and a shortfall within the early cancels.
    assert.ok(server.received <= server.clientAttempts)
    assert.notEqual(crossCheckVerdict(server), 'MISMATCH', renderText(result))
  })
})
