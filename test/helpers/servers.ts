/**
 * Real HTTP servers on 127.0.0.1 (port 0) for the engine tests, in the
 * spirit of autocannon's `startServer({ delayResponse })`: each counts what
 * it receives, synchronously, so tests can compare with the client's counts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import assert from 'node:assert/strict'

export interface CountingServer {
  url: string
  server: Server
  /** Requests whose headers arrived. */
  received: number
  /** Requests answered. */
  completed: number
  /** Requests whose client went away before the answer. */
  cancelled: number
  /** Header values seen per request, in arrival order, for the names in `record`. */
  seen: Array<Record<string, string | undefined>>
  /** Client connections accepted so far (a run's reachability probe is one per origin). */
  accepted: number
  /** Client connections open right now. */
  open: number
  close(): Promise<void>
}

export interface ServerOptions {
  /** Service time per request, ms (may depend on the request number). */
  delayMs?: number | ((n: number, req: IncomingMessage) => number)
  status?: number | ((n: number, req: IncomingMessage) => number)
  body?: string
  /** Header names to record per request. */
  record?: string[]
  /** Take over the response entirely. */
  handle?: (req: IncomingMessage, res: ServerResponse, n: number) => void
}

export async function startServer(opts: ServerOptions = {}): Promise<CountingServer> {
  const state = { received: 0, completed: 0, cancelled: 0, accepted: 0, open: 0, seen: [] as Array<Record<string, string | undefined>> }
  const server = createServer((req, res) => {
    const n = state.received++
    if (opts.record) state.seen.push(Object.fromEntries(opts.record.map((h) => [h, req.headers[h] as string | undefined])))
    if (opts.handle) return opts.handle(req, res, n)
    const delay = typeof opts.delayMs === 'function' ? opts.delayMs(n, req) : (opts.delayMs ?? 0)
    const status = typeof opts.status === 'function' ? opts.status(n, req) : (opts.status ?? 200)
    req.resume()
    const timer = setTimeout(() => {
      state.completed++
      res.writeHead(status, { 'content-type': 'text/plain' })
      res.end(opts.body ?? 'ok\n')
    }, delay)
    res.on('close', () => {
      if (!res.writableEnded) {
        clearTimeout(timer)
        state.cancelled++
      }
    })
  })
  server.keepAliveTimeout = 60_000
  server.on('connection', (socket) => {
    state.accepted++
    state.open++
    socket.on('close', () => state.open--)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }) as CountingServer
}

/**
 * Waits (bounded, 2 s) until the servers received `expected` requests and
 * every client connection to them is closed. A cancelled attempt's headers
 * can land a moment after the client settled it; but a run closes its
 * connections before it returns, and a server socket closes only after the
 * bytes before the client's FIN were parsed, so once none is open nothing
 * more can arrive: the count returned is final, not a sample after a sleep.
 */
export async function settle(servers: CountingServer[], expected: number): Promise<number> {
  const total = (): number => servers.reduce((s, x) => s + x.received, 0)
  const quiet = (): boolean => servers.every((x) => x.open === 0)
  const deadline = Date.now() + 2000
  while ((total() < expected || !quiet()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5))
  assert.ok(quiet(), `client connections still open 2 s after the run: ${servers.map((x) => x.open).join(', ')}`)
  return total()
}
