/**
 * A scripted gRPC server on node:http2 (h2c) for the tests that need what a
 * grpc-js server would not do: answer after `delayMs` whatever the call's
 * grpc-timeout says (a deadline is then always the client's), and count a
 * call only once its stream has stayed open `countAfterMs` (a server that
 * drops a stream reset before its handler runs, as gRPC C-core does).
 * The replicas' counts together are served as the stats JSON
 * (wire/stats.ts) on a separate HTTP/1.1 port, for `serverStatsUrl`. The pre-run check's undecodable call
 * is answered INTERNAL and counted nowhere.
 */
import { createServer as createH2Server, type ServerHttp2Stream } from 'node:http2'
import { createServer as createHttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface StubOptions {
  /** Time before each call's answer (OK, an empty message). */
  delayMs: number
  /** A call is counted (received, and hedgeHeader if it carries grpc-previous-rpc-attempts) only once its stream was open this long; 0: at once. */
  countAfterMs?: number
}

export interface GrpcStub {
  /** One URL per replica, in the order given. */
  urls: string[]
  /** The replicas' counts together, as the stats JSON (wire/stats.ts). */
  statsUrl: string
  /** Calls counted per replica (the stats' `received`). */
  received: number[]
  /** Calls per replica whose stream was reset before `countAfterMs`: never counted. */
  dropped: number[]
  close(): Promise<void>
}

/** The pre-run check's call (run/grpc-probe.ts) carries one undecodable byte. */
const isProbe = (body: Buffer): boolean => body.length === 6 && body[5] === 0x07

const EMPTY_MESSAGE = Buffer.alloc(5)

/** Replicas as `replicas` say, one stats endpoint for all of them. */
export async function startGrpcStub(...replicas: StubOptions[]): Promise<GrpcStub> {
  const totals = { received: 0, completed: 0, cancelled: 0, hedgeHeader: 0 }
  const stub: GrpcStub = { urls: [], statsUrl: '', received: replicas.map(() => 0), dropped: replicas.map(() => 0), close: async () => {} }
  const servers = replicas.map((opts, i) => {
    const h2 = createH2Server()
    h2.on('stream', (stream, headers) => {
      stream.on('error', () => {})
      const hedge = headers['grpc-previous-rpc-attempts'] !== undefined
      const body: Buffer[] = []
      let counted = false
      const count = (): void => {
        if (counted || stream.closed) return
        counted = true
        totals.received++
        stub.received[i]!++
        if (hedge) totals.hedgeHeader++
      }
      stream.on('data', (chunk: Buffer) => body.push(chunk))
      stream.on('end', () => {
        if (isProbe(Buffer.concat(body)))
          return stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '13' }, { endStream: true })
        if ((opts.countAfterMs ?? 0) === 0) count()
        else setTimeout(count, opts.countAfterMs)
        setTimeout(() => answer(stream), opts.delayMs)
      })
      stream.on('close', () => {
        if (isProbe(Buffer.concat(body))) return
        if (!counted) {
          if (stream.rstCode !== 0) stub.dropped[i]!++
          return
        }
        if (stream.rstCode === 0) totals.completed++
        else totals.cancelled++
      })
    })
    return h2
  })
  for (const h2 of servers) stub.urls.push(`grpc://127.0.0.1:${await listen(h2)}`)
  const stats = createHttpServer((_req, res) => res.end(JSON.stringify({ totals })))
  stub.statsUrl = `http://127.0.0.1:${await listen(stats)}/stats`
  stub.close = async () => {
    await Promise.all([...servers, stats].map((server) => new Promise((r) => server.close(r))))
  }
  return stub
}

function answer(stream: ServerHttp2Stream): void {
  if (stream.closed || stream.destroyed) return
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true })
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }))
  stream.end(EMPTY_MESSAGE)
}

function listen(server: { listen(port: number, host: string, cb: () => void): unknown; address(): AddressInfo | string | null }): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)))
}
