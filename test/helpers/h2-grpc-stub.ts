/**
 * A scripted gRPC server on node:http2 (h2c) for the tests that need what a
 * grpc-js server would not do: answer after `delayMs` whatever the call's
 * grpc-timeout says (a deadline is then always the client's), and count a
 * call only once its stream has stayed open `countAfterMs` (a server that
 * drops a stream reset before its handler runs, as gRPC C-core does).
 * Its counts are served as the stats JSON (wire/stats.ts) on a separate
 * HTTP/1.1 port, for `serverStatsUrl`. The pre-run check's undecodable call
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
  url: string
  statsUrl: string
  /** Calls counted (the stats' `received`). */
  received: number
  /** Calls whose stream closed before `countAfterMs`: never counted. */
  dropped: number
  close(): Promise<void>
}

/** The pre-run check's call (run/grpc-probe.ts) carries one undecodable byte. */
const isProbe = (body: Buffer): boolean => body.length === 6 && body[5] === 0x07

const EMPTY_MESSAGE = Buffer.alloc(5)

export async function startGrpcStub(opts: StubOptions): Promise<GrpcStub> {
  const counts = { received: 0, completed: 0, cancelled: 0, hedgeHeader: 0 }
  const h2 = createH2Server()
  const stub: GrpcStub = { url: '', statsUrl: '', received: 0, dropped: 0, close: async () => {} }
  h2.on('stream', (stream, headers) => {
    stream.on('error', () => {})
    const hedge = headers['grpc-previous-rpc-attempts'] !== undefined
    const body: Buffer[] = []
    let counted = false
    const count = (): void => {
      if (counted || stream.closed) return
      counted = true
      stub.received = ++counts.received
      if (hedge) counts.hedgeHeader++
    }
    stream.on('data', (chunk: Buffer) => body.push(chunk))
    stream.on('end', () => {
      if (isProbe(Buffer.concat(body))) return stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '13' }, { endStream: true })
      if ((opts.countAfterMs ?? 0) === 0) count()
      else setTimeout(count, opts.countAfterMs)
      setTimeout(() => answer(stream), opts.delayMs)
    })
    stream.on('close', () => {
      if (isProbe(Buffer.concat(body))) return
      if (!counted && stream.rstCode !== 0) {
        stub.dropped++
        return
      }
      if (!counted) return
      if (stream.rstCode === 0) counts.completed++
      else counts.cancelled++
    })
  })
  const port = await listen(h2)
  const stats = createHttpServer((_req, res) => res.end(JSON.stringify({ totals: counts })))
  const statsPort = await listen(stats)
  stub.url = `grpc://127.0.0.1:${port}`
  stub.statsUrl = `http://127.0.0.1:${statsPort}/stats`
  stub.close = async () => {
    await Promise.all([new Promise((r) => h2.close(r)), new Promise((r) => stats.close(r))])
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
