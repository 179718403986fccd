/**
 * The floor of a Node load generator, for `npm run bench`'s latency
 * comparison: c keep-alive sockets from `node:net`, each writing one fixed
 * GET as soon as the previous answer's last byte is read, and nothing else
 * (no handler objects, no histogram, no timers). Whatever hedgebench adds
 * over this on the same machine is its own; whatever this adds over wrk is
 * Node's (one event loop, a garbage-collected heap, a libuv wake-up per
 * answer).
 *
 *   node dist/bench/floor-client.js URL CONNECTIONS REQUESTS [WARMUP]
 *
 * Prints `{"p95":ms,"p99":ms,"requests":n,"loopP99":ms,"durationMs":ms}` over the answers
 * after the warm-up; loopP99 is the event-loop delay as hedgebench's
 * Generator section measures it (stats/generator-monitor.ts: 10 ms
 * resolution, the interval taken off), so the two can be set side by side. It understands only what the bench's echo server sends (answers
 * with a content-length); anything else is an error, not a guess.
 */
import { connect, type Socket } from 'node:net'
import { monitorEventLoopDelay } from 'node:perf_hooks'

const HEADER_END = Buffer.from('\r\n\r\n')
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i

function fail(message: string): never {
  process.stderr.write(`floor-client: ${message}\n`)
  process.exit(2)
}

const [urlArg, cArg, nArg, warmArg = '1000'] = process.argv.slice(2)
if (urlArg === undefined || cArg === undefined || nArg === undefined) fail('usage: floor-client URL CONNECTIONS REQUESTS [WARMUP]')
const url = new URL(urlArg)
if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') fail('the bench sends traffic only to 127.0.0.1 or localhost')
const [connections, requests, warmup] = [Number(cArg), Number(nArg), Number(warmArg)]
const request = Buffer.from(`GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n\r\n`)
const latencies = new Float64Array(requests)
const LOOP_RESOLUTION_MS = 10
const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS })
let started = 0
let recorded = 0
let seen = 0
/** performance.now() when the warm-up ended: the measured part's start. */
let measuredFrom = 0

/** One connection: write, read one whole answer (head and content-length bytes), record, write again. */
function run(socket: Socket): void {
  let sentAt = 0
  let pending: Buffer = Buffer.alloc(0)
  const send = (): void => {
    if (started >= warmup + requests) {
      socket.end()
      return
    }
    started++
    sentAt = performance.now()
    socket.write(request)
  }
  socket.setNoDelay(true)
  socket.on('connect', send)
  socket.on('error', (err) => fail(err.message))
  socket.on('data', (chunk: Buffer) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    const end = pending.indexOf(HEADER_END)
    if (end < 0) return
    const length = CONTENT_LENGTH.exec(pending.toString('latin1', 0, end))
    if (length === null) fail('an answer without content-length')
    const total = end + HEADER_END.length + Number(length[1])
    if (pending.length < total) return
    if (pending.length > total) fail('more bytes than one answer')
    pending = Buffer.alloc(0)
    const elapsed = performance.now() - sentAt
    if (seen++ === warmup) {
      loop.enable()
      measuredFrom = performance.now()
    }
    if (seen > warmup && recorded < requests) latencies[recorded++] = elapsed
    if (recorded === requests) return report()
    send()
  })
}

function report(): void {
  loop.disable()
  const loopP99 = Math.max(0, loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS)
  const sorted = latencies.slice(0, recorded).sort()
  const at = (q: number): number => sorted[Math.max(0, Math.ceil(q * recorded) - 1)]!
  process.stdout.write(JSON.stringify({ p95: at(0.95), p99: at(0.99), requests: recorded, loopP99, durationMs: performance.now() - measuredFrom }) + '\n')
  process.exit(0)
}

// Bounded: every connection stops writing after warmup + requests answers in all, and the run after 10 minutes.
setTimeout(() => fail('no end within 10 minutes'), 600_000).unref()
for (let i = 0; i < connections; i++) run(connect(Number(url.port || 80), url.hostname))
