/**
 * Opens one connection to an origin with undici's connector (TCP, or TLS
 * with its ALPN, -k and connect timeout): hedgebench's own HTTP/1.1 and
 * h2c connections (h1-client.ts, h2-client.ts) both open their sockets here.
 */
import type { Socket } from 'node:net'
import type { buildConnector } from 'undici'

export function openSocket(connect: buildConnector.connector, url: URL, callback: (err: Error | null, socket: Socket | null) => void): void {
  const https = url.protocol === 'https:'
  const params = {
    hostname: url.hostname,
    host: url.host,
    protocol: url.protocol,
    port: url.port || (https ? '443' : '80'),
    servername: null,
    localAddress: null,
    httpSocket: undefined,
  }
  connect(params as unknown as buildConnector.Options, (err, socket) => callback(err, err === null ? (socket as Socket) : null))
}
