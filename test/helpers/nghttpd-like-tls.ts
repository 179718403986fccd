/**
 * A TLS port that negotiates as nghttpd does: ALPN h2 when the client offers
 * it; otherwise a handshake with no protocol chosen, then the connection
 * closed without a word on the first bytes of a request. node:tls cannot
 * complete a handshake without ALPN once the client offered some (its
 * ALPNCallback either chooses or sends a fatal alert), so the port reads the
 * ClientHello's ALPN offer and hands the connection, bytes as they came, to
 * one of two real servers on 127.0.0.1: node:http2's createSecureServer, or a
 * node:tls server that offers no ALPN at all.
 */
import { createSecureServer } from 'node:http2'
import { connect, createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { createServer as createTlsServer } from 'node:tls'

export interface NghttpdLikeTls {
  url: string
  /** Requests the h2 side answered. */
  streams(): number
  close(): Promise<void>
}

export async function startNghttpdLikeTls(cert: { key: Buffer; cert: Buffer }): Promise<NghttpdLikeTls> {
  let streams = 0
  const h2 = createSecureServer(cert)
  h2.on('stream', (stream) => {
    streams++
    stream.respond({ ':status': 200 })
    stream.end('ok')
  })
  const noAlpn = createTlsServer(cert, (socket) => {
    socket.on('error', () => {})
    socket.once('data', () => socket.end())
  })
  const sockets = new Set<Socket>()
  const front = createTcpServer((client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => {})
    let hello = Buffer.alloc(0)
    const onData = (chunk: Buffer): void => {
      hello = Buffer.concat([hello, chunk])
      const offer = alpnOffer(hello)
      if (offer === undefined) return
      client.off('data', onData)
      const backend = connect(((offer.includes('h2') ? h2 : noAlpn).address() as AddressInfo).port, '127.0.0.1')
      sockets.add(backend)
      backend.on('close', () => sockets.delete(backend))
      backend.on('error', () => client.destroy())
      client.on('close', () => backend.destroy())
      backend.write(hello)
      client.pipe(backend).pipe(client)
    }
    client.on('data', onData)
  })
  for (const s of [h2, noAlpn, front] as Server[]) await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  return {
    url: `https://127.0.0.1:${(front.address() as AddressInfo).port}`,
    streams: () => streams,
    close: async () => {
      for (const s of sockets) s.destroy()
      await Promise.all([h2, noAlpn, front].map((s) => new Promise((resolve) => (s as Server).close(resolve))))
    },
  }
}

const RECORD_HEADER = 5
const EXTENSION_ALPN = 16

/**
 * The protocols a ClientHello offers by ALPN ([] without the extension), or
 * undefined until its whole first TLS record has arrived. The record is read
 * field by field (RFC 8446 4.1.2), never searched for "h2", which the random
 * and key share bytes may hold by chance.
 */
function alpnOffer(record: Buffer): string[] | undefined {
  if (record.length < RECORD_HEADER || record.length < RECORD_HEADER + record.readUInt16BE(3)) return undefined
  // Handshake type and length (4), legacy_version (2), random (32).
  let at = RECORD_HEADER + 4 + 2 + 32
  at += 1 + record[at]! // legacy_session_id
  at += 2 + record.readUInt16BE(at) // cipher_suites
  at += 1 + record[at]! // legacy_compression_methods
  const end = at + 2 + record.readUInt16BE(at)
  for (at += 2; at + 4 <= end; at += 4 + record.readUInt16BE(at + 2)) {
    if (record.readUInt16BE(at) !== EXTENSION_ALPN) continue
    const offered: string[] = []
    const listEnd = at + 6 + record.readUInt16BE(at + 4)
    for (let p = at + 6; p < listEnd; p += 1 + record[p]!) offered.push(record.toString('latin1', p + 1, p + 1 + record[p]!))
    return offered
  }
  return []
}
