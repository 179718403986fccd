/**
 * The bench's target: a minimal node:http server on 127.0.0.1 (port 0), run
 * in its own process so its event loop never shares time with a client's.
 *
 *   node dist/bench/echo-server.js [--delay-ms 20] [--stall-every 100 --stall-ms 500]
 *
 * Prints `listening http://127.0.0.1:PORT/` on stdout. Under a parent with an
 * IPC channel it also sends `{ type: 'listening', port }` and answers
 * `{ type: 'stats' }` with its counts (requests received, answered, cut off
 * by the client, open connections), so the bench can cross-check a client's
 * attempt count and see that no socket was left open.
 *
 * --delay-ms answers after a fixed service time measured from the arrival of
 * the request's headers: a timer to just short of it, then setImmediate until
 * it has passed, because a bare setTimeout(20) fires anywhere in 20-22 ms.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'

const { values } = parseArgs({
  options: {
    'delay-ms': { type: 'string', default: '0' },
    'stall-every': { type: 'string', default: '0' },
    'stall-ms': { type: 'string', default: '0' },
    port: { type: 'string', default: '0' },
  },
})
const delayMs = Number(values['delay-ms'])
const stallEvery = Number(values['stall-every'])
const stallMs = Number(values['stall-ms'])
/** The timer aims this much short of the service time; setImmediate covers the rest. */
const TIMER_SLACK_MS = 2

const BODY = Buffer.from('ok\n')
const HEADERS = { 'content-type': 'text/plain', 'content-length': String(BODY.length) }
const counts = { received: 0, completed: 0, cancelled: 0 }

function answer(res: ServerResponse): void {
  if (res.destroyed || res.writableEnded) return
  counts.completed++
  res.writeHead(200, HEADERS)
  res.end(BODY)
}

function answerAt(res: ServerResponse, due: number): void {
  if (performance.now() >= due) answer(res)
  else setImmediate(answerAt, res, due)
}

function onClose(this: ServerResponse): void {
  if (!this.writableEnded) counts.cancelled++
}

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  const n = counts.received++
  req.resume()
  const serviceMs = stallEvery > 0 && n % stallEvery === stallEvery - 1 ? stallMs : delayMs
  if (serviceMs <= 0) return answer(res)
  res.on('close', onClose)
  const due = performance.now() + serviceMs
  setTimeout(answerAt, Math.max(0, serviceMs - TIMER_SLACK_MS), res, due)
})
server.keepAliveTimeout = 60_000

server.listen(Number(values.port), '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo
  process.stdout.write(`listening http://127.0.0.1:${port}/\n`)
  process.send?.({ type: 'listening', port })
})

process.on('message', (msg: { type?: string }) => {
  if (msg?.type !== 'stats') return
  server.getConnections((_err, connections) => {
    process.send?.({ type: 'stats', ...counts, connections })
  })
})
process.on('disconnect', () => process.exit(0))
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
